#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# First in the KCSAN kernel's boot: turns KCSAN's watching on. The kernel
# is configured from allnoconfig plus the fragments, which leaves
# CONFIG_KCSAN_EARLY_ENABLE off, so KCSAN watches nothing until told to
# through debugfs (a boot that ran the suites without this found nothing
# because it looked at nothing). Checks that it is on, and that it has set
# watchpoints by the time this suite ends (its counters in the same file).
# Usage (inside the guest): kcsan-on.sh
set -u
. "$(dirname "$0")/../guest/lib.sh"
f=/sys/kernel/debug/kcsan
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
[ -e $f ] || { echo "FAIL: no $f: not a KCSAN kernel"; exit 1; }

step "KCSAN on"
enabled() { grep -E '^enabled: ' $f | awk '{print $2}'; }
watchpoints() { grep -E '^used_watchpoints: |^setup_watchpoints: ' $f | awk '{s += $2} END {print s + 0}'; }
note "before: enabled $(enabled), watchpoints set $(watchpoints)"
check "echo on > $f" sh -c "echo on > $f"
check "it says enabled: 1" test "$(enabled)" = 1
# Something to watch: the kernel's own accesses while a few processes run.
for _ in 1 2 3; do ls -R /sys/class >/dev/null 2>&1; done
sleep 2
w=$(watchpoints)
check "it has set watchpoints ($w)" test "$w" -gt 0
sed 's/^/   /' $f
finish
