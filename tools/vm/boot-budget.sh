# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# How many times one run may boot the guest, for whatever reason: the one
# place this is said. A run is one run-guest call, or one boot-suites call
# with the run-guest calls it makes; both count in the same OUT/boots.txt.
# A boot is retried when it stalled before /init (run-guest) or when the
# guest ended before its first suite with a clean kernel log (boot-suites).
# One retry is allowed, and reported (OUT/boots.txt, OUT/booted-again, the
# boot test's output, the kernel-log test); a run that would need a second
# retry fails instead.
rtrs_vm_max_boots=2

# OUT/boots.txt: one line per boot started, "N WHY" (N from 1).
# rtrs_boots OUT: how many boots the run has started.
rtrs_boots() {
	local n=0 _
	[ -r "$1/boots.txt" ] && while read -r _; do n=$((n + 1)); done <"$1/boots.txt"
	echo "$n"
}

# rtrs_boot_left OUT: true if the run may boot once more.
rtrs_boot_left() { [ "$(rtrs_boots "$1")" -lt "$rtrs_vm_max_boots" ]; }

# rtrs_boot_start OUT WHY: records a boot (WHY: why this boot; for a
# retry, what went wrong with the one before). Every retry is also a line of
# OUT/booted-again, which tools/test-times.py prints at the end of a run.
rtrs_boot_start() {
	local n
	n=$(($(rtrs_boots "$1") + 1))
	echo "$n $2" >>"$1/boots.txt"
	[ "$n" -gt 1 ] && echo "boot $n: $2" >>"$1/booted-again"
	return 0
}

# rtrs_boot_reset OUT: a new run (no boot yet).
rtrs_boot_reset() { rm -f "$1/boots.txt" "$1/booted-again" "$1"/console-boot[0-9]*.log; }
