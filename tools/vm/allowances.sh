#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The whole run's allowances: every "allowed: WHAT (evidence: ...)" line
# (test/guest/lib.sh allow(): an outcome accepted because the environment,
# not our server, failed, with the evidence that says so) in the suites'
# logs of every boot under VM_DIR. Each suite has its own limit (lib.sh's
# max_allowed); this one is the run's: more than MAX in all fails it, so
# that an environment that fails in many places at once does not pass as
# green one suite at a time. Prints each allowance.
# Usage: allowances.sh VM_DIR MAX
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 VM_DIR MAX" >&2; exit 2; }
vm=$1 max=$2
[ -d "$vm" ] || { echo "FAIL: no $vm (no guest ran)"; exit 1; }
n=0
while IFS= read -r line; do
	n=$((n + 1))
	echo "$line"
done < <(grep -H '^allowed: ' "$vm"/*/suites/*/log 2>/dev/null | sed "s|^$vm/||")
if [ "$n" -gt "$max" ]; then
	echo "FAIL: $n outcomes allowed for the environment's sake in this run, more than $max"
	exit 1
fi
echo "ok: $n outcome(s) allowed for the environment's sake in this run (at most $max)"
