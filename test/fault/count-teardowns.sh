#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Counts the path teardowns of the whole boot so far (FAILURES.md row 9: the
# debug boot must reach MIN of them, under KASAN, lockdep and kmemleak),
# from the kernel log the suite runner keeps (test/guest/suites-in-guest.sh:
# RESULTS_DIR/kmsg.log): every "path ... closed (REASON)" line of
# rtrs-server, split by the always_invalidate of the load it happened under
# and by reason.
# Usage: count-teardowns.sh KMSG_LOG MIN
#   passes when the boot had at least MIN teardowns under always_invalidate=Y
#   and MIN under always_invalidate=N (MIN 0: only prints the counts)
set -uo pipefail
log=$1 min=${2:-0}
. "$(dirname "$0")/../guest/lib.sh"
[ -r "$log" ] || { echo "FAIL: cannot read $log"; exit 1; }

# kmsg records: "PRI,SEQ,USEC,FLAGS;TEXT". The mode is that of the last
# "rtrs_server: loaded" line before the teardown.
counts=$(awk '
	{ sub(/^[0-9]+,[0-9]+,[0-9]+,[^;]*;/, "") }
	/^rtrs_server: loaded / {
		mode = "?"
		if (match($0, /always_invalidate [YN]/)) mode = substr($0, RSTART + 18, 1)
	}
	/^rtrs_server: .*: path .* closed \(/ {
		n[mode]++
		r = $0; sub(/.* closed \(/, "", r); sub(/\)$/, "", r)
		why[mode " " r]++
	}
	END {
		printf "Y %d\nN %d\n", n["Y"], n["N"]
		for (k in why) printf "reason %s %d\n", k, why[k]
	}' "$log")
y=$(awk '$1 == "Y" { print $2 }' <<<"$counts")
n=$(awk '$1 == "N" { print $2 }' <<<"$counts")
echo "path teardowns in this boot so far: $((y + n)) (always_invalidate=Y: $y, N: $n)"
grep '^reason ' <<<"$counts" | sort | sed 's/^reason /   /'
if [ "$min" -gt 0 ]; then
	check "at least $min teardowns with always_invalidate=Y ($y)" test "$y" -ge "$min"
	check "at least $min teardowns with always_invalidate=N ($n)" test "$n" -ge "$min"
fi
finish
