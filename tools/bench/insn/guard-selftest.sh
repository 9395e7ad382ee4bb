#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host check of the instructions-per-I/O guard (ctest unit.bench.insn-guard):
# tools/bench/insn/guard.sh on made-up reports (INSN_REPORT) against the
# real baseline, and report.py's row of a case whose module got no count.
# Passes at the baseline and a little below it; fails above the tolerance,
# at 0, below a floor (an always_invalidate=Y case at its N count: it no
# longer invalidates), with our module missing from the count, or with a
# case not counted.
set -u
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d) || exit 1
trap 'rm -rf "$t"' EXIT
bad=0
# report EDIT...: a report.json of the baseline's 6.1 counts, each EDIT
# (CASE:INVAL=COUNT, COUNT "missing" or "absent") applied.
report() {
	python3 - "$here/../insn-baseline.txt" "$@" >"$t/report.json" <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    w = line.split()
    if len(w) == 4 and w[0] == "6.1":
        rows[(w[1], w[2])] = {"case": w[1], "inval": w[2], "ours": float(w[3])}
for e in sys.argv[2:]:
    key, val = e.split("=")
    c, i = key.split(":")
    if val == "absent":
        del rows[(c, i)]
    elif val == "missing":
        rows[(c, i)] = {"case": c, "inval": i, "ours_missing": True}
    else:
        rows[(c, i)]["ours"] = float(val)
print(json.dumps({"rows": list(rows.values())}))
PY
}
# expect WANT_RC DESCRIPTION EDIT...
expect() {
	local want=$1 what=$2 out rc
	shift 2
	report "$@"
	out=$(INSN_REPORT=$t/report.json bash "$here/guard.sh" "$t" 6.1.0-1-amd64 2>&1)
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL: $what: exit $rc, wanted $want"
		sed 's/^/    /' <<<"$out"
		bad=1
	else
		echo "ok: $what"
	fi
}
expect 0 "every case at its baseline passes"
expect 0 "a count 2% lower passes (a note to record it)" randread-4k-qd1:Y=655.8
expect 1 "a count 3% higher fails" randread-4k-qd1:Y=689.3
expect 1 "a count of 0 fails" randwrite-4k-qd32:N=0
expect 1 "an always_invalidate=Y case at its N count (no invalidation) fails" randread-4k-qd32:Y=503.7
expect 1 "our module missing from a case's count fails" randwrite-4k-qd1:Y=missing
expect 1 "a case not counted fails" randwrite-4k-qd1:N=absent
# report.py: a server whose module met no counted instruction has no
# figure (not 0), and no ratio.
if python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
from report import summary_row
o = {"modules": {"other": 100.0}}
u = {"modules": {"rtrs_server": 500.0, "rtrs_core": 100.0}}
r = summary_row("c", "Y", o, u)
assert "ours" not in r and r.get("ours_missing") and "ratio" not in r, r
r = summary_row("c", "Y", {"modules": {"rtrs_server": 600.0}}, u)
assert r["ours"] == 600.0 and abs(r["ratio"] - 1.0) < 1e-9, r
r = summary_row("c", "Y", None, {"modules": {}})
assert r.get("upstream_missing") and "upstream" not in r, r
' "$here"; then
	echo "ok: report.py: a module missing from the count is no figure, not 0"
else
	echo "FAIL: report.py: a module missing from the count"
	bad=1
fi
exit $bad
