#!/bin/bash
# Self-test of tools/vm/run-guest: boots the VM a few times and checks exit
# statuses, the shared results folder, the kernel log scanner and the timeout.
# Uses the kernel version in $KVER if set (else run-guest's default).
# Extra arguments are passed to every run-guest call (e.g. --smp 1).
# Exit status: 0 if every check passed, 1 otherwise.

set -u
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
run_guest="$here/run-guest"
opts=()
[ -n "${KVER:-}" ] && opts+=(--kver "$KVER")
opts+=("$@")

base=${RTRS_VM_OUT:-./build/vm}
mkdir -p "$base" || exit 1
base=$(mktemp -d "$base/selftest-$(date +%Y%m%d-%H%M%S)-XXXX") || exit 1
base=$(realpath "$base")
echo "selftest: results in $base${KVER:+ (KVER=$KVER)}"

passed=0 failed=0 n=0
rc=0 out='' elapsed=0

# run NAME [run-guest options] -- COMMAND...: runs run-guest, output to a log
run() {
	local name=$1 start
	shift
	n=$((n + 1))
	out="$base/$n-$name"
	start=$SECONDS
	# Passed through to the guest like every RTRS_* variable.
	RTRS_SELFTEST_OUT=$out "$run_guest" "${opts[@]}" --out "$out" "$@" </dev/null >"$out.log" 2>&1
	rc=$?
	elapsed=$((SECONDS - start))
}

# check NAME CONDITION-DESCRIPTION: record the result of the last `test`
check() {
	local ok=$1 name=$2 what=$3
	if [ "$ok" -eq 0 ]; then
		passed=$((passed + 1))
		printf 'PASS  %-12s %s (rc=%s, %s s)\n' "$name" "$what" "$rc" "$elapsed"
	else
		failed=$((failed + 1))
		printf 'FAIL  %-12s %s (rc=%s, %s s); last lines of %s:\n' \
			"$name" "$what" "$rc" "$elapsed" "$out.log"
		tail -n 25 "$out.log" | sed 's/^/      | /'
	fi
}

# 1. a plain successful command (also: a normal boot trips no kernel check)
run true -- true
[ "$rc" -eq 0 ]
check $? true "exit status 0"

# 2. the command's exit status comes back
run exit7 -- sh -c 'exit 7'
[ "$rc" -eq 7 ]
check $? exit7 "exit status 7"

# 3. the results folder is shared writable; cwd and RTRS_* are passed through
# shellcheck disable=SC2016 # expanded in the guest
RTRS_SELFTEST_WORD="a word, with 'quotes' & spaces" \
	run outdir -- sh -c 'printf "%s|%s|%s\n" "$RTRS_SELFTEST_WORD" "$PWD" "$(hostname)" \
	>"$RTRS_SELFTEST_OUT/from-guest.txt"'
expect="a word, with 'quotes' & spaces|$(pwd -P)|rtrsvm"
got=$(cat "$out/from-guest.txt" 2>/dev/null)
[ "$rc" -eq 0 ] && [ "$got" = "$expect" ]
check $? outdir "guest wrote $out/from-guest.txt${got:+: $got}"

# 4. a kernel warning in the log fails the run with 3 ...
run kwarn -- sh -c 'echo "<4>WARNING: CPU: 0 PID: 1 at fake" >/dev/kmsg'
[ "$rc" -eq 3 ] && grep -q 'WARNING: CPU: 0 PID: 1 at fake' "$out/kernel-issues.txt" 2>/dev/null
check $? kwarn "kernel WARNING detected, exit 3"

# ... but the command's own output mentioning one does not
run userwarn -- sh -c 'echo "WARNING: CPU: 0 PID: 1 at not-a-kernel-line"; echo "BUG: neither"'
[ "$rc" -eq 0 ]
check $? userwarn "command output is not scanned"

# 5. a stuck guest is killed after --timeout
run timeout --timeout 20 -- sleep 600
[ "$rc" -eq 124 ] && [ "$elapsed" -le 45 ]
check $? timeout "timed out with 124 within 45 s"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
