# SPDX-License-Identifier: GPL-2.0
# Shared helpers of the guest test scripts (sourced; runs in the QEMU guest).

passed=0
failed=0

pass() {
	passed=$((passed + 1))
	echo "ok: $*"
}

fail() {
	failed=$((failed + 1))
	echo "FAIL: $*"
}

# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() {
	desc=$1
	shift
	if "$@"; then pass "$desc"; else fail "$desc"; fi
}

# The plain closing line the test runners read, and the exit status.
finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

# Loads the in-kernel modules a .ko of ours depends on (insmod does not).
load_deps() {
	local dep
	for dep in $(modinfo -F depends "$1" | tr ',' ' '); do
		modprobe "$dep" || { echo "cannot modprobe $dep"; return 1; }
	done
}

# wait_gone PATH SECONDS: true once PATH no longer exists.
wait_gone() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ -e "$1" ] || return 0
		sleep 0.1
	done
	return 1
}

# wait_exists PATH SECONDS: true once PATH exists.
wait_exists() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
