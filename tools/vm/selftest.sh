#!/bin/bash
# Self-test of tools/vm/run-guest: boots the VM a few times and checks exit
# statuses, the shared results folder, the kernel log scanner and the timeout.
# Uses the kernel version in $KVER if set (else run-guest's default).
# Extra arguments are passed to every run-guest call (e.g. --smp 1).
# selftest.sh --host: no guest, a few seconds (ctest's unit.vm.selftest):
# the kernel log rule and scanner (kernel-issues.sh: a sample line for every
# pattern, lines that must not count), suite-result's verdicts on made-up
# results folders, and the boot budget (boot-budget.sh).
# Exit status: 0 if every check passed, 1 otherwise.

set -u
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)

# --- host-only checks ------------------------------------------------------------
host_checks() {
	local t ok=0 bad=0 line alt alts=() i c depth cur n out rc
	t=$(mktemp -d) || return 1
	# shellcheck disable=SC2064 # expand now
	trap "rm -rf '$t'" EXIT
	. "$here/kernel-issues.sh"
	. "$here/boot-budget.sh"
	hpass() { ok=$((ok + 1)); printf 'PASS  %s\n' "$*"; }
	hfail() { bad=$((bad + 1)); printf 'FAIL  %s\n' "$*"; }
	hcheck() { # WHAT COMMAND...: passes if COMMAND succeeds
		local what=$1
		shift
		if "$@"; then hpass "$what"; else hfail "$what"; fi
	}

	# 1. One sample kernel line per pattern of rtrs_issue_re; each must be
	# a problem line, and each pattern must match a sample (a pattern
	# dropped or added without its sample fails here).
	cat >"$t/samples" <<'X'
BUG: unable to handle page fault for address: ffffc90000000000
kernel BUG at drivers/infiniband/sw/rxe/rxe_mr.c:123!
BUG kmalloc-64 (Not tainted): Poison overwritten
BUG kmalloc-64 (Tainted: G    B   O): Redzone overwritten
WARNING: CPU: 1 PID: 123 at kernel/workqueue.c:3066 __flush_work+0x1f/0x30
Oops: 0000 [#1] PREEMPT SMP NOPTI
==================================================================
KASAN: slab-use-after-free in rtrs_srv_rdma_done+0x1c/0x40
UBSAN: array-index-out-of-bounds in src/kernel/glue.c:12:3
kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
refcount_t: underflow; use-after-free.
Kernel panic - not syncing: Fatal exception
general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1]
Call Trace:
WARNING: possible circular locking dependency detected
WARNING: possible recursive locking detected
WARNING: inconsistent lock state
INFO: task kworker/0:1:12 blocked for more than 120 seconds.
rcu: INFO: rcu_preempt self-detected stall on CPU
rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
list_add corruption. next->prev should be prev (ffff888000000000)
list_del corruption, ffff888000000000->next is LIST_POISON1 (dead000000000100)
ODEBUG: free active (active state 0) object: ffff888000000000 object type: work_struct
rdma_rxe: page allocation failure: order:5, mode:0x40cc0(GFP_KERNEL|__GFP_COMP)
Out of memory: Killed process 123 (rtrs-client)
oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),task=rtrs-client,pid=123
rxe_pool_cleanup: rxe-qp pool destroyed with unfree'd elem
rtrs_server: unloaded while still holding: sessions 0 paths 0 connections 0 mrs 0 chunk_pages 512
X
	sed -i '/^=*$/d' "$t/samples"
	n=0
	while IFS= read -r line; do
		if printf '%s\n' "$line" | grep -qaE -- "$rtrs_issue_re"; then
			n=$((n + 1))
		else
			hfail "sample is not a problem line: $line"
		fi
	done <"$t/samples"
	[ "$n" = "$(wc -l <"$t/samples")" ] && hpass "all $n sample kernel problem lines count"
	# The rule's top-level alternatives (a | inside parentheses or after a
	# backslash does not split).
	depth=0 cur=''
	for ((i = 0; i < ${#rtrs_issue_re}; i++)); do
		c=${rtrs_issue_re:i:1}
		case $c in
		\\) cur+=$c${rtrs_issue_re:i+1:1}; i=$((i + 1)); continue ;;
		'(') depth=$((depth + 1)) ;;
		')') depth=$((depth - 1)) ;;
		'|') if [ $depth = 0 ]; then alts+=("$cur"); cur=''; continue; fi ;;
		esac
		cur+=$c
	done
	alts+=("$cur")
	n=0
	for alt in "${alts[@]}"; do
		if grep -qaE -- "$alt" "$t/samples"; then
			n=$((n + 1))
		else
			hfail "pattern '$alt' of rtrs_issue_re has no sample line here"
		fi
	done
	[ "$n" = ${#alts[@]} ] && hpass "each of the rule's ${#alts[@]} patterns has a sample line"
	hcheck "rtrs_issue_count counts every sample" \
		test "$(rtrs_issue_count <"$t/samples")" = "$(wc -l <"$t/samples")"
	# Lines that are no problem (the runner's own, a module's usual ones).
	cat >"$t/clean" <<'X'
rtrs-suite: begin smoke
rtrs-suite: end smoke status 0
rtrsvm-init: started
rtrs_server: loading out-of-tree module taints kernel.
rdma_rxe: loaded
rnbd_client: Mapping device /dev/nullb0 on session s1, (access_mode: rw, nr_poll_queues: 0)
null_blk: disk nullb0 created
X
	hcheck "ordinary kernel lines are no problem" test "$(rtrs_issue_count <"$t/clean")" = 0

	# 2. The scanner of run-guest: only printk lines of a console count, a
	# message in dmesg.txt and console.log counts once, a retried boot's
	# console counts, missing files are skipped.
	mkdir -p "$t/out"
	{
		echo "[    0.000000] Linux version 6.1.0"
		echo "WARNING: this is the command's own output, not the kernel's"
		echo "BUG: neither is this"
		printf '[   12.345678] WARNING: CPU: 0 PID: 1 at fake\r\n'
	} >"$t/out/console.log"
	printf '[   12.345678] WARNING: CPU: 0 PID: 1 at fake\n[   13.0] ok\n' >"$t/out/dmesg.txt"
	printf '[    3.000000] Oops: 0000 [#1] in a stalled boot\n' >"$t/out/console-boot1.log"
	rtrs_scan_logs "$t/report" "$t/out/dmesg.txt" "$t/out/console.log" "$t/out"/console-boot[0-9]*.log \
		"$t/out/missing.log" >"$t/issues"
	hcheck "scanner: 2 problem lines (one counted once, one from a stalled boot)" \
		test "$(wc -l <"$t/issues")" = 2
	hcheck "scanner: the command's own WARNING/BUG output is not scanned" \
		sh -c "! grep -q 'own output\|neither' '$t/issues'"
	hcheck "scanner: the report names the files, with context" \
		sh -c "grep -q '^=== dmesg.txt' '$t/report' && grep -q '^=== console-boot1.log' '$t/report'"
	rtrs_scan_logs "$t/report2" "$t/clean" >"$t/issues2"
	hcheck "scanner: clean lines give no report" sh -c "[ ! -s '$t/issues2' ] && [ ! -s '$t/report2' ]"

	# 3. suite-result on made-up results folders.
	sr() { # NAME: runs suite-result on $t/sr, sets rc and out
		rc=0
		out=$("$here/suite-result" "$t/sr" "$1" 2>&1) || rc=$?
	}
	mksuite() { # NAME STATUS [KERNEL-LINE...]: a suite with its markers
		local name=$1 st=$2
		shift 2
		mkdir -p "$t/sr/suites/$name"
		echo "output of $name" >"$t/sr/suites/$name/log"
		echo "$st" >"$t/sr/suites/$name/status"
		echo 3 >"$t/sr/suites/$name/seconds"
		{
			echo "rtrs-suite: begin $name"
			printf '%s\n' "$@"
			echo "rtrs-suite: end $name status $st"
		} >"$t/sr/suites/$name/dmesg.txt"
	}
	mkdir -p "$t/sr"
	mksuite good 0 "rtrs_server: loaded"
	sr good
	hcheck "suite-result: a clean suite that passed passes" test "$rc" = 0
	mksuite quiet 0
	sr quiet
	hcheck "suite-result: a suite that printed no kernel line (markers only) passes" test "$rc" = 0
	mksuite failed 1
	sr failed
	hcheck "suite-result: a failed suite fails" test "$rc" = 1
	mksuite warned 0 "WARNING: CPU: 0 PID: 7 at src/kernel/x.c:1 f+0x1/0x2"
	sr warned
	hcheck "suite-result: a problem line in the suite's slice fails it" \
		sh -c "[ $rc = 1 ] && printf '%s' '$out' | grep -q 'problem lines'"
	mksuite empty 0
	: >"$t/sr/suites/empty/dmesg.txt"
	sr empty
	hcheck "suite-result: an empty dmesg.txt fails (markers missing)" \
		sh -c "[ $rc = 1 ] && printf '%s' \"\$1\" | grep -q 'kernel log markers of suite empty were missing'" _ "$out"
	mksuite noend 0
	sed -i '/rtrs-suite: end/d' "$t/sr/suites/noend/dmesg.txt"
	sr noend
	hcheck "suite-result: a slice without its end marker fails" test "$rc" = 1
	mkdir -p "$t/sr/suites/notrun"
	echo "the kernel oopsed during x: the suites after it are not run" >"$t/sr/suites/notrun/not-run"
	sr notrun
	hcheck "suite-result: a suite not run after an oops fails, saying why" \
		sh -c "[ $rc = 1 ] && printf '%s' \"\$1\" | grep -q 'oopsed during x'" _ "$out"
	sr absent
	hcheck "suite-result: a suite with no result fails" test "$rc" = 1
	# kernel-log: the boot's verdict.
	sr kernel-log
	hcheck "suite-result kernel-log: no run-guest-status fails" test "$rc" = 1
	echo 0 >"$t/sr/run-guest-status"
	echo "[    1.0] ok" >"$t/sr/dmesg.txt"
	echo "1 first boot" >"$t/sr/boots.txt"
	sr kernel-log
	hcheck "suite-result kernel-log: one clean boot passes" test "$rc" = 0
	echo "2 boot 1 stalled: silent for 60 s before /init" >>"$t/sr/boots.txt"
	sr kernel-log
	hcheck "suite-result kernel-log: one retry passes and is reported" \
		sh -c "[ $rc = 0 ] && printf '%s' \"\$1\" | grep -q 'booted 2 times' && printf '%s' \"\$1\" | grep -q 'stalled'" _ "$out"
	echo "3 boot 2: the guest ended before its first suite" >>"$t/sr/boots.txt"
	sr kernel-log
	hcheck "suite-result kernel-log: a second retry fails" test "$rc" = 1
	echo "1 first boot" >"$t/sr/boots.txt"
	echo "=== dmesg.txt" >"$t/sr/kernel-issues.txt"
	sr kernel-log
	hcheck "suite-result kernel-log: kernel-issues.txt fails" test "$rc" = 1
	rm "$t/sr/kernel-issues.txt"
	for st in 124 125; do
		echo $st >"$t/sr/run-guest-status"
		sr kernel-log
		hcheck "suite-result kernel-log: run-guest status $st fails" test "$rc" = 1
	done

	# 4. The boot budget: two boots (one retry) in a call, every retry noted
	# (without the test run's ledger: this check's boots are not the run's).
	unset RTRS_VM_RUN_BOOTS
	mkdir -p "$t/b"
	rtrs_boot_reset "$t/b"
	hcheck "boot budget: 2 boots in a run" test "$rtrs_vm_max_boots" = 2
	rtrs_boot_start "$t/b" "first boot"
	hcheck "boot budget: a boot left after the first" rtrs_boot_left "$t/b"
	rtrs_boot_start "$t/b" "boot 1 stalled"
	hcheck "boot budget: none left after the retry" sh -c "! { . '$here/boot-budget.sh'; rtrs_boot_left '$t/b'; }"
	hcheck "boot budget: the retry is in booted-again" \
		sh -c "[ \"\$(cat '$t/b/booted-again')\" = 'boot 2: boot 1 stalled' ]"

	# 5. The test run's budget: every boot of every call in one ledger, at
	# most rtrs_vm_run_retries retries in all, a third guest's retry refused.
	export RTRS_VM_RUN_BOOTS=$t/run-boots.txt
	hcheck "run budget: 2 retries in a test run" test "$rtrs_vm_run_retries" = 2
	for i in 1 2 3; do
		mkdir -p "$t/r$i"
		rtrs_boot_reset "$t/r$i"
		rtrs_boot_start "$t/r$i" "first boot"
	done
	hcheck "run budget: the first guest retries" rtrs_boot_start "$t/r1" "boot 1 stalled"
	hcheck "run budget: a second guest retries" rtrs_boot_start "$t/r2" "boot 1 stalled"
	hcheck "run budget: a third guest has its own retry but none is left in the run" \
		sh -c "[ \"\$(. '$here/boot-budget.sh'; rtrs_boots '$t/r3')\" = 1 ] && ! { . '$here/boot-budget.sh'; rtrs_boot_left '$t/r3'; }"
	hcheck "run budget: its retry is refused and not recorded" \
		sh -c "! { . '$here/boot-budget.sh'; rtrs_boot_start '$t/r3' 'boot 1 stalled'; } && [ ! -e '$t/r3/booted-again' ] &&
			[ \"\$(. '$here/boot-budget.sh'; rtrs_boots '$t/r3')\" = 1 ]"
	hcheck "run budget: the ledger has every boot (3 first, 2 retries)" \
		sh -c "[ \$(grep -c '^first ' '$t/run-boots.txt') = 3 ] && [ \$(grep -c '^retry ' '$t/run-boots.txt') = 2 ] &&
			grep -qxF 'retry $t/r2 boot 2: boot 1 stalled' '$t/run-boots.txt'"
	unset RTRS_VM_RUN_BOOTS

	echo "host checks: $ok passed, $bad failed"
	[ "$bad" = 0 ]
}
if [ "${1:-}" = --host ]; then
	host_checks
	exit
fi
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
