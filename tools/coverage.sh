#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Line coverage of the C++ core (src/core, src/rt headers included where
# the core uses them) by the host tests: runs gcov on the objects of the
# rtrs_core and rtrs_wire libraries (built with --coverage, RTRS_COVERAGE)
# after the tests ran, prints a line per file and the total.
# Usage: coverage.sh BUILD_DIR [MIN_PERCENT]
#   MIN_PERCENT: fail when the total is below it (default: just print).
set -eu
build=$(cd "$1" && pwd)
min=${2:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
found=0
for objdir in "$build/CMakeFiles/rtrs_core.dir/src/core" "$build/CMakeFiles/rtrs_wire.dir/src/core"; do
	[ -d "$objdir" ] || continue
	for gcno in "$objdir"/*.gcno; do
		[ -e "$gcno" ] || continue
		found=1
		# gcov writes its report files in the current folder.
		(cd "$tmp" && gcov -n -o "$objdir" "$gcno" 2>/dev/null) >>"$tmp/report" || true
	done
done
[ "$found" = 1 ] || { echo "coverage: no coverage data under $build (configure with -DRTRS_COVERAGE=ON)" >&2; exit 1; }
# gcov prints, per source file: "File '...'" then "Lines executed:P% of N".
# A header's inline code is counted in each object that uses it: the best
# count of the objects stands for it.
awk -v min="$min" '
	/^File / { f = $2; gsub(/\x27/, "", f); next }
	/^Lines executed:/ {
		# (the summary line of an object has no File line before it)
		if (f !~ /\/src\/core\//) next
		split($2, a, ":"); pct = a[2]; sub(/%/, "", pct)
		hit = int(pct * $4 / 100 + 0.5)
		if (!(f in lines) || hit > hits[f]) { hits[f] = hit; lines[f] = $4 }
		f = ""
	}
	END {
		for (f in lines) {
			name = f; sub(/.*\/src\//, "src/", name)
			printf "%-32s %5d of %5d lines  %6.1f%%\n", name, hits[f], lines[f], 100 * hits[f] / lines[f] | "sort"
			tot += lines[f]; got += hits[f]
		}
		close("sort")
		if (tot == 0) { print "coverage: no lines"; exit 1 }
		p = 100 * got / tot
		printf "%-32s %5d of %5d lines  %6.1f%%\n", "src/core (total)", got, tot, p
		if (p < min) { printf "coverage: %.1f%% is below %s%%\n", p, min; exit 1 }
	}' "$tmp/report"
