#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Counts the connect/disconnect storms' path teardowns of the whole boot so
# far (FAILURES.md row 9; test/fault/conn.sh's storms: session "storm", two
# paths a cycle), from the kernel log the suite runner keeps
# (test/guest/suites-in-guest.sh: RESULTS_DIR/kmsg.log): every "storm: path
# ... closed (REASON)" line of rtrs-server, split by the always_invalidate
# of the load it happened under and by reason. The boot's other teardowns
# (every other suite closes paths too) are printed, not counted: they would
# meet the minimum without the storms.
# Usage: count-teardowns.sh KMSG_LOG MIN_Y [MIN_N]
#   passes when the storms had at least MIN_Y teardowns under
#   always_invalidate=Y and MIN_N (default MIN_Y) under N (MIN_Y 0: only
#   prints the counts)
set -uo pipefail
log=$1 min_y=${2:-0} min_n=${3:-${2:-0}}
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
		r = $0; sub(/.* closed \(/, "", r); sub(/\)$/, "", r)
		if ($0 ~ /^rtrs_server: storm: path /) {
			n[mode]++
			why[mode " " r]++
		} else {
			other[mode]++
		}
	}
	END {
		printf "Y %d\nN %d\nother %d %d\n", n["Y"], n["N"], other["Y"], other["N"]
		for (k in why) printf "reason %s %d\n", k, why[k]
	}' "$log")
y=$(awk '$1 == "Y" { print $2 }' <<<"$counts")
n=$(awk '$1 == "N" { print $2 }' <<<"$counts")
read -r _ oy on < <(grep '^other ' <<<"$counts")
echo "the storms' path teardowns in this boot so far: $((y + n)) (always_invalidate=Y: $y, N: $n)"
grep '^reason ' <<<"$counts" | sort | sed 's/^reason /   /'
echo "other sessions' path teardowns (not counted): Y $oy, N $on"
if [ "$min_y" -gt 0 ] || [ "$min_n" -gt 0 ]; then
	check "at least $min_y storm teardowns with always_invalidate=Y ($y)" test "$y" -ge "$min_y"
	check "at least $min_n storm teardowns with always_invalidate=N ($n)" test "$n" -ge "$min_n"
fi
finish
