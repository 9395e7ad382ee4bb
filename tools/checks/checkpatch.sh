#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# checkpatch.pl of one release's linux-source (--strict --no-tree -f) on the
# C glue, the test upper layer and the exported API's header: every finding
# fails unless tools/checks/checkpatch-exceptions lists it, with its reason.
# Run it where that release's linux-source is (tools/roots/in-root.sh).
#
#   tools/checks/checkpatch.sh SERIES CACHE
set -eu
[ $# -eq 2 ] || { echo "usage: $0 SERIES CACHE" >&2; exit 2; }
series=$1 cache=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
scripts=$("$top/tools/checks/kernel-scripts.sh" "$series" "$cache")
cd "$top"
files=$(ls src/kernel/*.c src/kernel/*.h src/null/*.c include/rtrs/*.h)
out=$cache/checkpatch-$series.log
# One file at a time: checkpatch exits 0 only on a file with no finding,
# and prints nothing for it, so a run that did not read a file (a perl
# error, a missing module) is told from a clean one by its exit status.
: >"$out"
for f in $files; do
	if perl "$scripts/checkpatch.pl" --strict --no-tree --show-types --terse -f "$f" >"$out.one" 2>&1; then
		[ ! -s "$out.one" ] || { cat "$out.one" >&2; echo "FAIL: checkpatch passed $f but printed the above" >&2; exit 1; }
		echo "total: 0 errors, 0 warnings, 0 checks, 0 lines checked" >>"$out"
	else
		grep -q '^total: ' "$out.one" ||
			{ cat "$out.one" >&2; echo "FAIL: checkpatch failed on $f without a report" >&2; exit 1; }
		cat "$out.one" >>"$out"
	fi
done
rm -f "$out.one"
# shellcheck disable=SC2086
python3 "$top/tools/checks/checkpatch-filter.py" "$top/tools/checks/checkpatch-exceptions" "$series" "$out" $files
