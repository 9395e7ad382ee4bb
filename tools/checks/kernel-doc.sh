#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The exported API's header (include/rtrs/rtrs-srv.h) through kernel-doc of
# one release's linux-source: `kernel-doc -none` must print nothing, and
# every function the header declares, struct rtrs_srv_ops and enum
# rtrs_srv_link_ev must have a kernel-doc comment (kernel-doc -none says
# nothing of what has none). Run it where that release's linux-source is
# (tools/roots/in-root.sh).
#
#   tools/checks/kernel-doc.sh SERIES CACHE
set -eu
[ $# -eq 2 ] || { echo "usage: $0 SERIES CACHE" >&2; exit 2; }
series=$1 cache=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
scripts=$("$top/tools/checks/kernel-scripts.sh" "$series" "$cache")
header=$top/include/rtrs/rtrs-srv.h
fail=0
out=$("$scripts/kernel-doc" -none "$header" 2>&1) || { echo "$out" >&2; echo "FAIL: kernel-doc -none failed" >&2; exit 1; }
if [ -n "$out" ]; then
	echo "$out" >&2
	echo "FAIL: kernel-doc -none ($series) reported the above on $header" >&2
	fail=1
fi
# What the header declares, and what kernel-doc found documented in it.
# (rst: its directives name each documented item; 2>/dev/null: the Sphinx
# version notice of older kernel-doc.)
declared=$(sed -n 's/^[a-z][a-z_ *0-9]*[ *]\(rtrs_srv_[a-z_]*\)(.*/\1/p' "$header" | sort -u)
declared="$declared rtrs_srv_ops rtrs_srv_link_ev"
documented=$("$scripts/kernel-doc" -rst "$header" 2>/dev/null |
	sed -n 's/^\.\. c:[a-z]*:: \(.*\)/\1/p' | grep -o 'rtrs_srv_[a-z_]*' | sort -u)
n=0
for name in $declared; do
	n=$((n + 1))
	if ! printf '%s\n' "$documented" | grep -qx "$name"; then
		echo "FAIL: $name has no kernel-doc comment in $header" >&2
		fail=1
	fi
done
[ "$n" -ge 9 ] || { echo "FAIL: found only $n declarations in $header: the pattern is stale" >&2; fail=1; }
[ $fail -eq 0 ] || exit 1
# shellcheck disable=SC2086 # one word a name
echo "ok: kernel-doc ($series): $header clean, all $n documented:" $declared
