#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host check of test/guest/lib.sh's verdict: a suite's allowances (allow())
# up to its max_allowed leave it passing, one more fails it; skips and
# fails are counted in the closing line. Then its helpers that need no
# guest: wait_for and the waits on it, the clock, step and note, the kernel
# log's counts (on a made-up dmesg), the module loading (on made-up
# modinfo, modprobe and insmod), map's new-device logic; and that
# test/fault/lib.sh, which sources it, can be sourced here without a word.
# (ctest: unit.guest.lib)
# The scripts are in single quotes: they expand in the shell that runs them.
# shellcheck disable=SC2016
set -u
here=$(cd "$(dirname "$0")" && pwd)
lib=$here/lib.sh
bad=0
# expect WANT_RC DESCRIPTION SCRIPT [LIB]: runs SCRIPT after sourcing LIB
# (default lib.sh).
expect() {
	local out rc
	out=$(bash -c ". '${4:-$lib}'; $3" 2>&1)
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

# --- the helpers -----------------------------------------------------------------
t=$(mktemp -d) || exit 1
trap 'rm -rf "$t"' EXIT
expect 0 "lib.sh sources cleanly and silently" \
	'true' "$lib"
expect 0 "sourcing lib.sh prints nothing" \
	'[ -z "$(. "'"$lib"'" 2>&1)" ]'
expect 0 "wait_for: true once the command succeeds (a file made 0.3 s later), well before its bound" \
	"(sleep 0.3; touch '$t/late') & t0=\$SECONDS; wait_for 20 test -e '$t/late' && [ \$((SECONDS - t0)) -lt 10 ]"
expect 1 "wait_for: false when the command never succeeds" \
	'wait_for 1 false'
expect 0 "wait_for: a bound of 1 s is 10 tries of 0.1 s (at least 1 s)" \
	't0=$(now); wait_for 1 false; le 1 "$(elapsed "$t0")"'
expect 0 "wait_for passes the command its arguments, and a shell function works as the command" \
	"ok_if() { [ \"\$1\" = a ] && [ \"\$2\" = 'b c' ]; }; wait_for 1 ok_if a 'b c'"
expect 0 "wait_line: true once the line comes" \
	"(sleep 0.2; echo 'io: done' >'$t/out') & wait_line '$t/out' '^io: ' 10"
expect 1 "wait_line: false after its time, quietly, when the file never comes" \
	"[ -z \"\$(wait_line '$t/never' x 1 2>&1)\" ] && wait_line '$t/never' x 1"
expect 1 "wait_line_while: false once the process ends without the line (well before its bound)" \
	": >'$t/empty'; sleep 0.2 & t0=\$SECONDS; wait_line_while '$t/empty' x 30 \$!; rc=\$?; [ \$((SECONDS - t0)) -lt 10 ] || exit 3; exit \$rc"
expect 0 "wait_line_while: true when the line came as the process ended" \
	"(sleep 0.2; echo 'result: ok' >'$t/res') & wait_line_while '$t/res' '^result: ' 30 \$!"
expect 0 "has_line: extended regexes as grep -E, a last line without its newline, no match" \
	"printf 'path a up: 2\\nio: reads 5' >'$t/hl'; has_line '$t/hl' '^path .* up: [0-9]+\$' &&
	 has_line '$t/hl' '^io: reads (5|6)\$' && ! has_line '$t/hl' '^up' && ! has_line '$t/hl' 'reads 6'"
expect 0 "has_line: a file of more than 1,000 lines is read to its end" \
	"seq 5000 >'$t/long'; has_line '$t/long' '^4999\$' && ! has_line '$t/long' '^5001\$'"
expect 0 "nap: pauses about its time with the shell's builtins alone (no PATH)" \
	'PATH=/nonexistent; t0=${EPOCHREALTIME/[.,]/}; nap 0.3; nap 0.2; t1=${EPOCHREALTIME/[.,]/}
	 [ $((t1 - t0)) -ge 500000 ] && [ $((t1 - t0)) -le 3000000 ]'
expect 0 "fresh_dir: the folder made anew, what was in it gone" \
	"mkdir -p '$t/fd' && touch '$t/fd/old' && fresh_dir '$t/fd' && [ -d '$t/fd' ] && [ ! -e '$t/fd/old' ]"
expect 0 "wait_gone, wait_exists" \
	"wait_gone '$t/nothing' 1 && wait_exists '$t' 1 && ! wait_exists '$t/nothing' 1 && ! wait_gone '$t' 1"
expect 0 "wait_pid: true once the process ends, false while it runs" \
	"sleep 0.2 & p=\$!; wait_pid \$p 10 || exit 1; sleep 5 & p=\$!; ! wait_pid \$p 1; rc=\$?; kill \$p; exit \$rc"
expect 0 "now: seconds with six decimals, and it advances" \
	'a=$(now); sleep 0.05; b=$(now); [[ $a =~ ^[0-9]+\.[0-9]{6}$ ]] && le "$a" "$b" && ! le "$b" "$a"'
expect 0 "elapsed: two decimals by default, DECIMALS when given, to now when T1 is empty" \
	'[ "$(elapsed 1 2.5)" = 1.50 ] && [ "$(elapsed 10 12.3456 3)" = 2.346 ] &&
	 [ "$(elapsed 1 3.7 0)" = 3 ] && [[ $(elapsed "$(now)") =~ ^[0-9]+\.[0-9]{2}$ ]] &&
	 [[ $(elapsed "$(now)" "" 1) =~ ^[0-9]+\.[0-9]$ ]]'
expect 0 "le: A <= B for decimal numbers" \
	'le 1.5 1.50 && le 9.99 10 && ! le 10.01 10'
expect 0 "step: '== [+N s] TEXT'; note: three spaces, then the text" \
	'[[ $(step "row 5: x") =~ ^==\ \[\+[0-9]+\ s\]\ row\ 5:\ x$ ]] && [ "$(note a b)" = "   a b" ]'
expect 0 "log_count, problem_count, log_since on a made-up kernel log" \
	'dmesg() { printf "%s\n" "[    1.000000] rtrs-fault: mark" "[    2.000000] WARNING: CPU: 0 PID: 1 at x" \
		"[    3.250000] s: closing path p (stalled handshake)" "[    4.000000] s: closing path q (x)"; }
	 [ "$(log_count "closing path")" = 2 ] && [ "$(problem_count)" = 1 ] &&
	 [ "$(log_since "rtrs-fault: mark" "closing path p")" = 2.25 ] &&
	 [ "$(log_since "rtrs-fault: mark" "no such line")" = never ]'
expect 0 "log_after and the helpers on it: only the lines after the last mark count" \
	'dmesg() { printf "%s\n" "[    1.000000] s: closing path p (old)" "[    2.000000] rtrs-test: mark" \
		"[    3.000000] s: closing path p (first)" "[    4.000000] rtrs-test: mark" \
		"[    5.500000] t: closing path p (second)" "[    6.000000] t: closing path p (third)"; }
	 [ "$(log_after "rtrs-test: mark" "closing path p" | tr "\n" ";")" = "[    5.500000] t: closing path p (second);[    6.000000] t: closing path p (third);" ] &&
	 [ "$(log_count_after "rtrs-test: mark" "closing path p")" = 2 ] &&
	 [ "$(log_secs_after "rtrs-test: mark" "closing path p")" = 1.50 ] &&
	 log_has_after "rtrs-test: mark" "(third)" && ! log_has_after "rtrs-test: mark" "(first)" &&
	 [ "$(log_count_after "rtrs-test: mark" "(old)")" = 0 ] &&
	 [ "$(log_secs_after "rtrs-test: mark" "(old)")" = never ]'
expect 0 "log_after: nothing without the mark, though the line is there; log_secs_after never" \
	'dmesg() { printf "%s\n" "[    1.000000] s: closing path p (old)"; }
	 ! log_after "rtrs-test: no such mark" "closing path" && [ "$(log_count_after "rtrs-test: x" "closing")" = 0 ] &&
	 [ "$(log_secs_after "rtrs-test: x" "closing")" = never ]'
expect 0 "wait_log: true once the log has COUNT lines, false when it never has" \
	'dmesg() { echo "[ 1.0] a x"; echo "[ 2.0] b x"; }; wait_log x 2 1 && ! wait_log x 3 1'
expect 0 "insmod_deps and servers_up: the in-kernel dependencies (not rtrs-core or rtrs-server), then insmod with server_params before the arguments" \
	'modinfo() { echo "ib_core,rtrs-core,rdma_cm,rtrs_server"; }; modprobe() { echo "modprobe $*"; }
	 insmod() { echo "insmod $*"; }; moddir=/m; server_params=(always_invalidate=N max_chunk_size=8192)
	 [ "$(servers_up sess_queue_depth=500 | tr "\n" ";")" = "modprobe ib_core;modprobe rdma_cm;insmod /m/rtrs-server.ko always_invalidate=N max_chunk_size=8192 sess_queue_depth=500;insmod /m/rtrs-null.ko;" ] &&
	 server_params=() && [ "$(insmod_deps /k.ko a=1 | tail -n 1)" = "insmod /k.ko a=1" ]'
expect 1 "load_deps: false when a dependency does not load; nothing is insmodded" \
	'modinfo() { echo "ib_core"; }; modprobe() { return 1; }; insmod() { echo "insmod ran"; }
	 out=$(insmod_deps /k.ko); rc=$?; [ "$out" = "cannot modprobe ib_core" ] && exit $rc'
expect 0 "map: the new rnbd devices, as /dev/NAME" \
	'rnbd_devices() { printf "rnbd0\nrnbd1\n"; }
	 [ "$(new_rnbd rnbd0)" = /dev/rnbd1 ] && ! new_rnbd "$(rnbd_devices)" && [ "$(new_rnbd "")" = "/dev/rnbd0
rnbd1" ]'
expect 0 "removal_close: the first close after the mark, its reason and time; removal_closed: removal or transport error within the limit" \
	'dmesg() { printf "%s\n" "[    1.000000] gone: closing path ip:a@ip:b (heartbeat timeout)" "[    2.000000] rtrs-test: del" \
		"[    3.500000] gone: closing path ip:a@ip:b (transport error)" "[    4.000000] gone: closing path ip:a@ip:b (device removal)"; }
	 removal_close "rtrs-test: del" gone ip:a@ip:b && [ "$rm_why" = "transport error" ] && [ "$rm_secs" = 1.50 ] &&
	 removal_closed 10 && ! removal_closed 1' "$here/../fault/lib.sh"
expect 0 "removal_closed: a close for another reason after the mark is not the removal's" \
	'dmesg() { printf "%s\n" "[    2.000000] rtrs-test: del" "[    3.000000] gone: closing path ip:a@ip:b (heartbeat timeout)"; }
	 removal_close "rtrs-test: del" gone ip:a@ip:b && [ "$rm_why" = "heartbeat timeout" ] && ! removal_closed 10' "$here/../fault/lib.sh"
expect 0 "removal_closed: a close before the mark only is none" \
	'dmesg() { printf "%s\n" "[    1.000000] gone: closing path ip:a@ip:b (device removal)" "[    2.000000] rtrs-test: del"; }
	 removal_close "rtrs-test: del" gone ip:a@ip:b && [ "$rm_secs" = never ] && [ -z "$rm_why" ] && ! removal_closed 10' "$here/../fault/lib.sh"
expect 0 "refusal_due: our budget or headroom refuses the next session only at their edge" \
	'[ "$(refusal_due 14 965 885 1982)" = "the budget (965 MiB, 14 sessions held)" ] &&
	 ! refusal_due 10 965 1100 1982 && ! refusal_due 13 965 950 1982 &&
	 [ "$(refusal_due 20 8192 300 1982)" = "the headroom (300 MiB available, 247 kept)" ]' "$here/../fault/lib.sh"
# test/fault/count-teardowns.sh on a made-up kernel log (kmsg records)
{
	echo "6,1,1,-;rtrs_server: loaded x: max_chunk_size 1, sess_queue_depth 1, always_invalidate Y, chunk memory budget 1 MiB"
	for i in 1 2 3 4; do echo "6,2,2,-;rtrs_server: other: path ip:a@ip:b closed (client disconnect)"; done
	echo "6,3,3,-;rtrs_server: storm: path ip:a@ip:b closed (client disconnect)"
	echo "6,4,4,-;rtrs_server: loaded x: max_chunk_size 1, sess_queue_depth 1, always_invalidate N, chunk memory budget 1 MiB"
	for i in 1 2 3 4; do echo "6,5,5,-;rtrs_server: storm: path ip:a@ip:b closed (client disconnect)"; done
} >"$t/kmsg.log"
expect 0 "count-teardowns: the storms' own teardowns by mode, the other sessions' not counted" \
	"bash '$here/../fault/count-teardowns.sh' '$t/kmsg.log' 1 4 | grep -qxF 'the storms'\'' path teardowns in this boot so far: 5 (always_invalidate=Y: 1, N: 4)'"
expect 1 "count-teardowns: other sessions' teardowns do not meet the storms' minimum" \
	"bash '$here/../fault/count-teardowns.sh' '$t/kmsg.log' 2 4 >/dev/null"
expect 0 "test/fault/lib.sh sources here silently, with lib.sh's helpers and its own" \
	'[ -z "$(. "'"$here"'/../fault/lib.sh" 2>&1)" ] && type wait_for servers_up wait_class_empty reload >/dev/null &&
	 [ "$p1" = ip:10.77.0.2@ip:10.77.0.1 ] && [ -n "$problem_re" ]' "$here/../fault/lib.sh"
exit $bad
