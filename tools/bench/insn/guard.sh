#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The instructions-per-I/O guard (ctest bench.insn-guard): counts our
# server's instructions per I/O (tools/bench/insn/insn.sh, ours only, every
# case with always_invalidate Y and N) and fails when a case grows by more
# than the tolerance over tools/bench/insn-baseline.txt, when a case of the
# baseline was not counted (no I/O, no dump, our module met by no counted
# instruction), or when a case counts below its floor there: a count that
# low is not believed (the module's sections not read, hot code moved to a
# section the count does not look at, an always_invalidate=Y case that no
# longer invalidates). A count lower by more than the tolerance, above the
# floor, passes, with a note to record the new baseline.
#
# Usage: tools/bench/insn/guard.sh [--update] BUILD_DIR KVER
#   BUILD_DIR holds module/KVER and peers/KVER (the test command's build);
#   --update: write the counts as the new baseline of KVER's series (the
#   floors stay: a gain that takes a case below its floor moves it too).
# Environment: INSN_TOLERANCE (percent, default: the baseline's
# "tolerance" line), INSN_BASELINE (the file, default the one above),
# INSN_REPORT (a report.json of an earlier count: checked instead of
# counting; the guard's own test, unit.bench.insn-guard).
set -uo pipefail
update=0
[ "${1:-}" = --update ] && { update=1; shift; }
[ $# -eq 2 ] || { echo "usage: $0 [--update] BUILD_DIR KVER" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../../.." && pwd)
build=$(cd "$1" && pwd) kver=$2
base=${INSN_BASELINE:-$top/tools/bench/insn-baseline.txt}
series=$(awk -F. '{ print $1 "." $2 }' <<<"$kver")
out=$build/bench/insn-guard
report=${INSN_REPORT:-$out/report.json}
if [ -z "${INSN_REPORT:-}" ] && ! SERVERS=ours KVER=$kver BENCH_NO_BUILD=1 RTRS_BUILD_DIR=$build \
	INSN_OUT=$out TOP=5 INSN_TIMEOUT=600 bash "$top/tools/bench/insn/insn.sh"; then
	echo "FAIL: the count did not run (insn.sh failed)"
	exit 1
fi
# CASE INVAL COUNT for each counted case; CASE INVAL missing when the
# report has the case but our module got no instruction of it.
now=$(python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    if "ours" in r:
        print(r["case"], r["inval"], "%.1f" % r["ours"])
    elif r.get("ours_missing"):
        print(r["case"], r["inval"], "missing")
' "$report") || { echo "FAIL: no report ($report)"; exit 1; }
if [ $update = 1 ]; then
	grep -q missing <<<"$now" && { echo "FAIL: a case without our module's count: not written"; exit 1; }
	tmp=$(mktemp)
	grep -v "^$series " "$base" >"$tmp" 2>/dev/null || true
	sed "s/^/$series /" <<<"$now" >>"$tmp"
	mv "$tmp" "$base"
	echo "baseline of $series written to $base:"
	grep "^$series " "$base"
	exit 0
fi
tol=${INSN_TOLERANCE:-$(awk '$1 == "tolerance" { print $2 }' "$base")}
[ -n "$tol" ] || { echo "FAIL: no tolerance in $base"; exit 1; }
grep -q "^$series " "$base" || { echo "FAIL: $base has no baseline for $series"; exit 1; }
fail=0
while read -r s c inv want; do
	[ "$s" = "$series" ] || continue
	got=$(awk -v c="$c" -v i="$inv" '$1 == c && $2 == i { print $3 }' <<<"$now")
	floor=$(awk -v s="$s" -v c="$c" -v i="$inv" '$1 == "floor" && $2 == s && $3 == c && $4 == i { print $5 }' "$base")
	if [ -z "$floor" ]; then
		echo "FAIL: $c always_invalidate=$inv: $base states no floor for it"
		fail=1
	elif [ -z "$got" ]; then
		echo "FAIL: $c always_invalidate=$inv: not counted"
		fail=1
	elif [ "$got" = missing ]; then
		echo "FAIL: $c always_invalidate=$inv: our module is not in the count (no instruction of its text sections)"
		fail=1
	elif awk -v g="$got" -v w="$want" -v t="$tol" 'BEGIN { exit !(g > w * (1 + t / 100)) }'; then
		echo "FAIL: $c always_invalidate=$inv: $got instructions/I/O, baseline $want (+${tol}% allowed)"
		fail=1
	elif awk -v g="$got" -v f="$floor" 'BEGIN { exit !(g < f) }'; then
		echo "FAIL: $c always_invalidate=$inv: $got instructions/I/O, below the floor of $floor (baseline $want): not believed"
		fail=1
	elif awk -v g="$got" -v w="$want" -v t="$tol" 'BEGIN { exit !(g < w * (1 - t / 100)) }'; then
		echo "ok: $c always_invalidate=$inv: $got instructions/I/O, baseline $want, floor $floor: lower, record it (guard.sh --update)"
	else
		echo "ok: $c always_invalidate=$inv: $got instructions/I/O, baseline $want (+-${tol}%), floor $floor"
	fi
done <"$base"
[ $fail = 0 ] || [ ! -r "$out/report.txt" ] || [ -n "${INSN_REPORT:-}" ] ||
	sed -n '/top functions/,$p' "$out/report.txt" | head -n 40
exit $fail
