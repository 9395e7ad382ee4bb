#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fault suite, injected failures (FAILURES.md rows 10, 11, 16), in a guest of
# the debug kernel (fail_function, KASAN, lockdep, kmemleak), with our
# rtrs-server, rtrs-null and the userspace client.
#
# Each fallible call of the glue (noinline, ALLOW_ERROR_INJECTION) is made
# to fail at its n-th call while a client connects, exchanges the info
# request, does I/O and closes (rtrs-client io: 4 reads and 4 writes at
# queue depth 2). Each time: the client sees a refusal, a closed path or
# success (the call failed where it does not matter, or never came), never
# a hang; nothing is left in sysfs; the same session opens again right
# after; no kernel report (the runner checks KASAN, lockdep and the rest;
# kmemleak scans at the end of the boot). In the default run each chosen
# failure must also happen (fail_function says it fired: a code change
# that moves the calls fails the suite instead of leaving it green with
# nothing injected) and end as its row says: the connection refused with
# the errno the server sent, or the path closed.
#   row 10  rtrs_env_sysfs_path_add / rtrs_env_sysfs_sess_add failing while
#           the path comes up;
#   row 11  the session's and path's allocations (rtrs_env_alloc,
#           rtrs_env_chunk_alloc at the last chunk, MRs, DMA mappings,
#           message buffers);
#   row 16  refusals half-way: the second connection's QP (con_create) or
#           its accept failing once the first is up; the protection domain
#           (dev_open); posting failing in the info exchange and in I/O.
# The default run fails each call at one chosen n. RTRS_FAULT_LONG=1 counts
# each function's calls in the scenario first (fail_function's space) and
# then fails every one of them, one run each.
# Usage: inject.sh MODULE_DIR CLIENT_BINARY
set -uo pipefail
moddir=$1 client=$2
. "$(dirname "$0")/lib.sh"
work=/tmp/fault-inject
fresh_dir $work
ff=/sys/kernel/debug/fail_function
problems0=$(problem_count)
[ -d $ff ] || { echo "FAIL: no $ff (a kernel with CONFIG_FAIL_FUNCTION, debugfs mounted)"; exit 1; }

# The calls, with what they return on failure (fail_function's retval).
declare -A retval=(
	[rtrs_env_alloc]=0 [rtrs_env_chunk_alloc]=0 [rtrs_env_dev_open]=0
	[rtrs_env_dma_map_chunk]=0 [rtrs_env_mr_alloc]=0 [rtrs_env_con_create]=0
	[rtrs_env_buf_alloc]=-12 [rtrs_env_cm_accept]=-22 [rtrs_env_post_send]=-12
	[rtrs_env_post_recv]=-12 [rtrs_env_sysfs_sess_add]=-12 [rtrs_env_sysfs_path_add]=-12
	[rtrs_env_post_resp]=-12 [rtrs_env_post_local_inv]=-12 [rtrs_env_post_recv_imm]=-12
)
# The default run fails one call of each of these (sess_queue_depth 8,
# always_invalidate Y: a registration per chunk), and each must end as its
# third word says: "refused:ERRNO" (the client's connection rejected with
# that errno in the server's answer: client exit 2), "refused:none" (a
# reject without an errno: the CM's own, as when a connection the server
# could not accept is destroyed; upstream's server ends the same way when
# rdma_accept fails) or "closed" (a path that came up, or was accepted,
# closed by the server: exit 3). Where each lands was seen with the long
# mode, and each outcome in a run of the debug kernel.
picks=(
	"rtrs_env_sysfs_path_add 1 closed"	# row 10: the path's folder, once the info request came
	"rtrs_env_sysfs_sess_add 1 closed"	# row 10: the session's folder
	"rtrs_env_alloc 1 refused:ENOMEM"	# row 11: the session object
	"rtrs_env_chunk_alloc 8 refused:ENOMEM"	# row 11: the session's last chunk
	"rtrs_env_dev_open 1 refused:ENOMEM"	# row 16: the device's protection domain
	"rtrs_env_con_create 2 refused:ENOMEM"	# row 16: the second connection's QP, the first accepted
	"rtrs_env_cm_accept 2 refused:none"	# row 16: the second connection's accept
	"rtrs_env_post_local_inv 3 closed"	# I/O: the third request's invalidation
	"rtrs_env_post_resp 3 closed"		# I/O: the third response
	"rtrs_env_post_recv_imm 2 closed"	# I/O: the receive after the second request
	"rtrs_env_post_recv 1 closed"		# the first receives, at the first accept: a connect error for the client
)
# The long mode adds, among all the others: rtrs_env_alloc 6 (the path's
# setup), rtrs_env_mr_alloc 8 (the last registration), rtrs_env_dma_map_chunk 5,
# rtrs_env_buf_alloc 3 (a message buffer), rtrs_env_post_recv 3 (the
# receives posted at join), rtrs_env_post_send 2 (the info response).

ff_clear() { echo >$ff/inject 2>/dev/null; }
# ff_arm FN N: FN fails at its N-th call from now on (once).
ff_arm() {
	ff_clear
	echo "$1" >$ff/inject || return 1
	# retval is read as an unsigned 64-bit number: -12 is 0xfff...f4.
	printf '%#x\n' "${retval[$1]}" >"$ff/$1/retval" || return 1
	echo 100 >$ff/probability
	echo 1 >$ff/interval
	echo 1 >$ff/times
	echo "$2" >$ff/space
	echo 1 >$ff/verbose	# the one-line notice, no stack dump
}
ff_fired() { [ "$(cat $ff/times)" = 0 ]; }

# scenario OUT: the client's whole life (connect, info, I/O, close);
# prints its exit status.
scenario() {
	timeout 120 "$client" io --session inj --server $srv --src $cli --cons 2 --reads 4 \
		--writes 4 --size 4096 --qd 2 --verify-zero --quiet >"$1.out" 2>"$1.err"
	echo $?
}

# count FN: FN's calls in one scenario (fail_function counts them down in
# space, and fails none: space is larger).
count() {
	local big=1000000 rc left
	ff_arm "$1" $big || { echo 0; return; }
	rc=$(scenario $work/count)
	left=$(cat $ff/space)
	ff_clear
	wait_class_empty 20
	echo $((big - left))
}

runs=0 fired=0 unexpected=0
# outcome RC OUT: what the client's run says, as a pick's expected outcome
# spells it: done, refused:ERRNO (the errno name the client printed from
# the server's answer), refused:none (errno 0, or the CM's reject), closed,
# or exit:RC.
outcome() {
	local e
	case $1 in
	0) echo done ;;
	2) e=$(grep -om1 'rejected: errno -\{0,1\}[0-9]* (E[A-Z0-9]*)' "$2" | sed 's/.*(\(E[A-Z0-9]*\))/\1/')
	   if [ -z "$e" ] && grep -Eq 'rejected: errno 0 |rejected by the CM' "$2"; then e=none; fi
	   echo "refused:${e:-unread}" ;;
	3) echo closed ;;
	*) echo "exit:$1" ;;
	esac
}
# one FN N [WANT]: one run with FN failing at its N-th call; with WANT (a
# pick), the failure must happen and the run end as WANT says.
one() {
	local fn=$1 n=$2 want=${3:-} out=$work/$1-$2 rc fire p0 again ok=1 got
	p0=$(problem_count)
	ff_arm "$fn" "$n" || { fail "$fn: cannot arm fail_function"; return; }
	rc=$(scenario "$out")
	ff_fired && fire=1 || fire=0
	ff_clear
	runs=$((runs + 1))
	fired=$((fired + fire))
	local what
	case $rc in
	0) what="the client did all its I/O" ;;
	2) what="refused: $(head -n 1 "$out.out")" ;;
	3) what="path closed" ;;
	*) what="client exit $rc" ;;
	esac
	note "$fn call $n: $([ $fire = 1 ] && echo failed || echo 'not reached'); $what"
	case $rc in
	0 | 2 | 3) ;;
	*) unexpected=$((unexpected + 1)) ok=0
	   fail "$fn call $n: client exit $rc (a hang or a failure of its own)"
	   show "$out.out" "$out.err" ;;
	esac
	if [ -n "$want" ]; then
		if [ $fire = 0 ]; then
			ok=0
			fail "$fn call $n: never made in the scenario, nothing was injected (the picks must follow the code: RTRS_FAULT_LONG=1 counts the calls)"
		fi
		got=$(outcome "$rc" "$out.out")
		if [ "$got" != "$want" ]; then
			ok=0
			fail "$fn call $n: ended '$got', its row says '$want'"
			show "$out.out" "$out.err"
		fi
	fi
	if ! wait_class_empty 30; then
		ok=0
		fail "$fn call $n: left in sysfs: $(class_sessions)"
	fi
	again=$("$client" connect --session inj --server $srv --src $cli --exit-after-up --quiet 2>&1)
	if ! grep -q "^path $p1 up" <<<"$again"; then
		ok=0
		fail "$fn call $n: the session does not open again right after: $again"
	fi
	wait_class_empty 20
	local got=$(($(problem_count) - p0))
	[ "$got" -eq 0 ] || { ok=0; fail "$fn call $n: $got kernel problem line(s)"; }
	[ $ok = 0 ] || pass "$fn call $n: clean (nothing in sysfs, opens again, no report)"
}

step "soft-RoCE; rtrs-server (sess_queue_depth 8, always_invalidate Y) and rtrs-null"
rxe_up || { echo "FAIL: rxe setup"; exit 1; }
servers_up sess_queue_depth=8 always_invalidate=Y || { echo "FAIL: cannot load the modules"; exit 1; }
rc=$(scenario $work/plain)
check "the scenario passes without a fault (exit $rc)" test "$rc" -eq 0
[ "$rc" -eq 0 ] || show $work/plain.out $work/plain.err

if [ "$long" = 1 ]; then
	step "every call of every function, one run each"
	for fn in $(printf '%s\n' "${!retval[@]}" | sort); do
		c=$(count "$fn")
		note "$fn: $c call(s) in the scenario"
		for ((n = 1; n <= c; n++)); do one "$fn" "$n"; done
	done
else
	step "${#picks[@]} chosen failures"
	for p in "${picks[@]}"; do one $p; done
fi
echo "injected faults: $runs runs, $fired failures injected, $unexpected unexpected client outcome(s)"
[ "$long" = 1 ] || check "every chosen failure was injected ($fired of ${#picks[@]})" test "$fired" -eq "${#picks[@]}"
echo "figure: injected faults survived: done=$fired lost=$((failed))"

step "unload"
check "unload rtrs-null and rtrs-server" servers_down
check "our class is gone" test ! -e $class
no_new_problems "$problems0" "the whole suite"
finish
