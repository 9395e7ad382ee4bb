# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# How many times the guests may be booted again, for whatever reason: the
# one place this is said. A boot is retried when it stalled before /init
# (run-guest) or when the guest ended before its first suite with a clean
# kernel log (boot-suites). Two budgets, both kept:
# - a call's: one run-guest call, or one boot-suites call with the
#   run-guest calls it makes (both count in the same OUT/boots.txt), boots
#   at most twice: one retry; one that would need a second fails instead;
# - the test run's: every boot of the whole run (each guest test's, the
#   two-host lab's guests and the benchmarks' included) counts in one
#   ledger, RTRS_VM_RUN_BOOTS (tools/run-tests.sh sets it to a file of the
#   build folder and empties it first), and the run may retry at most
#   rtrs_vm_run_retries boots in all: past that a boot that stalls fails,
#   whichever test it is. Without RTRS_VM_RUN_BOOTS (a guest booted by
#   hand, a ctest run without run-tests.sh) only the call's budget holds.
# Every retry is reported (OUT/boots.txt, OUT/booted-again, the ledger,
# the boot test's output, the kernel-log test, tools/test-times.py's
# summary of the run).
rtrs_vm_max_boots=2
rtrs_vm_run_retries=2

# OUT/boots.txt: one line per boot started, "N WHY" (N from 1).
# rtrs_boots OUT: how many boots the run has started.
rtrs_boots() {
	local n=0 _
	[ -r "$1/boots.txt" ] && while read -r _; do n=$((n + 1)); done <"$1/boots.txt"
	echo "$n"
}

# The run's ledger: one line per boot, "first OUT" or "retry OUT boot N:
# WHY". rtrs_run_retries: the retries it holds (0 without a ledger).
rtrs_run_retries() {
	local n=0 kind _
	[ -n "${RTRS_VM_RUN_BOOTS:-}" ] && [ -r "$RTRS_VM_RUN_BOOTS" ] &&
		while read -r kind _; do [ "$kind" = retry ] && n=$((n + 1)); done <"$RTRS_VM_RUN_BOOTS"
	echo "$n"
}
# rtrs_run_left: true if the run may retry a boot once more.
rtrs_run_left() { [ "$(rtrs_run_retries)" -lt "$rtrs_vm_run_retries" ]; }
# rtrs_run_record KIND TEXT: a line of the ledger, under its lock; a retry
# (KIND retry) only if the run has one left (checked under the same lock:
# two guests retrying at once cannot both take the last one): else false.
rtrs_run_record() {
	[ -n "${RTRS_VM_RUN_BOOTS:-}" ] || return 0
	(
		flock 9 || exit 1
		if [ "$1" = retry ] && ! rtrs_run_left; then exit 1; fi
		echo "$1 $2" >>"$RTRS_VM_RUN_BOOTS"
	) 9>>"$RTRS_VM_RUN_BOOTS.lock"
}

# rtrs_boot_left OUT: true if the call may boot once more (its own budget
# and the run's).
rtrs_boot_left() { [ "$(rtrs_boots "$1")" -lt "$rtrs_vm_max_boots" ] && rtrs_run_left; }

# rtrs_boot_start OUT WHY: records a boot (WHY: why this boot; for a
# retry, what went wrong with the one before). Every retry is also a line of
# OUT/booted-again and of the run's ledger. A retry the run has no budget
# left for is not recorded, and false.
rtrs_boot_start() {
	local n
	n=$(($(rtrs_boots "$1") + 1))
	if [ "$n" -gt 1 ]; then
		rtrs_run_record retry "$1 boot $n: $2" || return 1
		echo "boot $n: $2" >>"$1/booted-again"
	else
		rtrs_run_record first "$1"
	fi
	echo "$n $2" >>"$1/boots.txt"
	return 0
}

# rtrs_boot_reset OUT: a new run (no boot yet).
rtrs_boot_reset() { rm -f "$1/boots.txt" "$1/booted-again" "$1"/console-boot[0-9]*.log; }
