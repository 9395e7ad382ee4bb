#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host check of test/guest/lib.sh's verdict: a suite's allowances (allow())
# up to its max_allowed leave it passing, one more fails it; skips and
# fails are counted in the closing line. (ctest: unit.guest.lib)
set -u
lib=$(cd "$(dirname "$0")" && pwd)/lib.sh
bad=0
# expect WANT_RC DESCRIPTION SCRIPT: runs SCRIPT after sourcing lib.sh.
expect() {
	local out rc
	out=$(bash -c ". '$lib'; $3" 2>&1)
	rc=$?
	if [ "$rc" -ne "$1" ]; then
		echo "FAIL: $2: exit $rc, wanted $1"
		sed 's/^/    /' <<<"$out"
		bad=1
	else
		echo "ok: $2"
	fi
}
expect 0 "one allowance in a suite of the default limit passes" \
	'pass a; allow what evidence; finish | grep -qxF "1 passed, 0 failed" && finish >/dev/null'
expect 1 "two allowances in a suite of the default limit fail" \
	'pass a; allow x e1; allow y e2; finish'
expect 0 "two allowances pass where the suite allows two" \
	'max_allowed=2; pass a; allow x e1; allow y e2; finish'
expect 0 "the allowance is printed with its evidence" \
	'allow "the client timed out" "our close line" | grep -qxF "allowed: the client timed out (evidence: our close line)"'
expect 1 "a failed check fails the suite" 'pass a; fail b; finish'
expect 0 "skips are counted in the closing lines" \
	'skip x; skip y; finish | grep -qxF "2 skipped (the skip: lines above)"'
exit $bad
