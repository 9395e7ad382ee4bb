#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The data plane, inside the guest: our userspace client (rtrs-client io)
# issues exact numbers of reads and writes through our rtrs-server to
# rtrs-null, and stats/rdma must count exactly those, while the session is
# still up; reads must come back as zeros. Then hostile I/O requests
# (rtrs-client bad io-*): each must get the expected reaction (the path
# closed, or the request failed with the expected errno and the path still
# working), with one log line of the server's saying why.
# Usage: guest-run.sh MODULE_DIR CLIENT_BINARY [always_invalidate=Y|N]
set -uo pipefail
# shellcheck disable=SC2034 # moddir: lib.sh's servers_up reads it
moddir=$1 client=$2 inval=${3:-Y}
here=$(cd "$(dirname "$0")" && pwd)
# (lib.sh: log_count, and problem_count by tools/vm/kernel-issues.sh's rule,
# counted before and after each step to tell which step caused a problem)
. "$here/../guest/lib.sh" || exit 2

case $inval in Y | N) ;; *) echo "always_invalidate must be Y or N, not '$inval'"; exit 2 ;; esac

class=/sys/class/rtrs-server
srv=10.77.0.1 cli=10.77.0.2
pathname=ip:$cli@ip:$srv
# The server's chunk size, set explicitly (it is the module's default) so
# that the expectations below follow from what we load: max_io_size is the
# chunk minus a 4096-byte header area (PAGE_SIZE on x86).
chunk=131072
max_io=$((chunk - 4096))
# servers_up (lib.sh) loads rtrs-server with these before its own arguments.
# shellcheck disable=SC2034 # (read by lib.sh's servers_up, as moddir is)
server_params=(always_invalidate="$inval" "max_chunk_size=$chunk")
# The client holds its session while we look at it, then we end the hold
# with SIGTERM (a clean disconnect, exit 0). The hold time is only a bound:
# under TCG on a busy host a few seconds are not always enough to look.
hold=60
work=/tmp/io
fresh_dir $work

# end_hold PID: ends the client's hold and waits for it; returns its status.
end_hold() {
	kill -TERM "$1" 2>/dev/null
	wait "$1"
}

show_client() {  # show_client LOGBASE: the client's output, for a failure
	echo "--- client stdout:"; cat "$1.out"
	echo "--- client stderr:"; tail -n 40 "$1.err"
	echo "---"
}

# The path line the client prints: kMsgNewRkey (0x2) is the server's
# always_invalidate.
expected_flags() { [ "$inval" = Y ] && echo 0x2 || echo 0x0; }

# io_exact NAME READS WRITES SIZE USR QD [CONS [CLIENT OPTIONS...]]
# Runs the I/O, then (while the client holds the session) compares
# stats/rdma with what the parameters say: every request counts once, with
# data + user header bytes; nothing in flight. Then resets the counters.
io_exact() {
	local name=$1 reads=$2 writes=$3 size=$4 usr=$5 qd=$6 cons=${7:-2}
	shift 7 2>/dev/null || shift $#
	local sess=io_$name log=$work/$name pid rc stats want p
	local desc="$name: $reads reads + $writes writes of $size B, usr $usr, qd $qd, $cons cons $*"
	step "$desc"
	"$client" io --session "$sess" --server $srv --src $cli --cons "$cons" \
		--reads "$reads" --writes "$writes" --size "$size" --usr-len "$usr" --qd "$qd" \
		--verify-zero --hold $hold "$@" >"$log.out" 2>"$log.err" &
	pid=$!
	if ! wait_line_while "$log.out" '^io: ' 300 "$pid"; then
		# Memory windows came to soft-RoCE in 5.12: 5.10's rxe has none,
		# so a client there cannot send NEED_INVAL reads (the kernel's
		# client does, with its own registrations: the interop suite).
		if grep -q 'ibv_alloc_mw(type 2): --need-inval needs memory windows' "$log.err" &&
			[ -n "$(uname -r | grep '^5\.10\.')" ]; then
			skip "$desc: this kernel's soft-RoCE has no memory windows ($(grep -m1 ibv_alloc_mw "$log.err"))"
			wait "$pid"
			return
		fi
		fail "$desc: no summary line"
		kill "$pid" 2>/dev/null
		wait "$pid"
		show_client "$log"
		return
	fi
	p=$class/$sess/paths/$pathname
	stats=$(cat "$p/stats/rdma" 2>&1)
	want="$reads $((reads * (size + usr))) $writes $((writes * (size + usr))) 0"
	if [ "$stats" = "$want" ]; then
		pass "$name: stats/rdma while the session is up: $stats"
	else
		fail "$name: stats/rdma is '$stats', want '$want'"
	fi
	echo 1 >"$p/stats/rdma" 2>/dev/null
	stats=$(cat "$p/stats/rdma" 2>&1)
	check "$name: stats/rdma after the reset ('$stats')" test "$stats" = "0 0 0 0 0"
	want="io: reads $reads ($((reads * size)) bytes) writes $writes ($((writes * size)) bytes) errors 0"
	check "$name: summary '$want'" grep -qxF -- "$want" "$log.out"
	check "$name: path up with flags $(expected_flags)" \
		grep -qE "^path $pathname up: .*, flags $(expected_flags)\$" "$log.out"
	end_hold "$pid"
	rc=$?
	check "$name: client exit status $rc" test $rc -eq 0
	[ $rc -eq 0 ] || show_client "$log"
	check "$name: session gone after the client left" wait_gone "$class/$sess" 20
}

# hostile CASE RESULT LOGLINE [PATH_AFTER]
# RESULT: the client's result line after "result: "; LOGLINE: a fixed string
# that must appear exactly once more in the kernel log; PATH_AFTER: closed
# (default for result closed) or up (the request was answered: the client's
# follow-up write on the same chunk must succeed, and the path stays).
hostile() {
	local name=$1 want=$2 line=$3 after=${4:-}
	local sess=bad_${name//-/_} log=$work/$1 pid rc before nproblems got p stats
	[ -n "$after" ] || { [ "$want" = closed ] && after=closed || after=up; }
	step "bad $name: expect '$want', path $after"
	before=$(log_count "$line")
	nproblems=$(problem_count)
	: >"$log.out"  # (a case runs twice: empty before the client starts)
	"$client" bad "$name" --server $srv --src $cli --session "$sess" --hold $hold \
		>"$log.out" 2>"$log.err" &
	pid=$!
	if ! wait_line "$log.out" '^result: ' 60; then
		fail "$name: no result line"
		kill "$pid" 2>/dev/null
		wait "$pid"
		show_client "$log"
		return
	fi
	p=$class/$sess/paths/$pathname
	if [ "$after" = up ]; then
		wait_line "$log.out" '^after: ' 30
		# The client holds the path: it must still be there and idle.
		stats=$(cat "$p/stats/rdma" 2>&1)
		check "$name: path still up, nothing in flight (stats '$stats')" \
			test "${stats##* }" = 0 -a -d "$p"
		check "$name: a write on the same chunk succeeds after it" \
			grep -qxF "after: write ok" "$log.out"
	else
		check "$name: the path is gone" wait_gone "$p" 20
	fi
	got=$(sed -n 's/^result: //p' "$log.out")
	check "$name: result '$got' is '$want'" test "$got" = "$want"
	end_hold "$pid"
	rc=$?
	check "$name: client exit status $rc" test $rc -eq 0
	if [ $rc -ne 0 ] || [ "$got" != "$want" ]; then show_client "$log"; fi
	check "$name: session gone after the client left" wait_gone "$class/$sess" 20
	got=$(($(log_count "$line") - before))
	check "$name: the log says '$line' once (got $got)" test $got -eq 1
	got=$(($(problem_count) - nproblems))
	check "$name: no kernel warning or oops" test $got -eq 0
}

step "soft-RoCE; rtrs-server (always_invalidate=$inval, max_chunk_size=$chunk) and rtrs-null"
rxe_up || { echo "FAIL: rxe setup"; exit 1; }
servers_up || { echo "FAIL: cannot load the modules"; exit 1; }
check "always_invalidate is $inval" \
	test "$(cat /sys/module/rtrs_server/parameters/always_invalidate)" = "$inval"

step "exact counts"
io_exact small 5 7 8192 16 1
io_exact many 100 100 4096 16 8 3
io_exact max 3 3 $max_io 16 2
io_exact odd 9 9 1000 7 4
io_exact empty 4 4 0 32 3
io_exact nousr 6 2 65536 0 2 4
# Reads as the kernel client sends them: through a memory window, with
# NEED_INVAL; the server must invalidate the window's key (send with
# invalidate) and answer IoRspWithInv, which the client checks.
io_exact inval 40 10 8192 16 4 3 --need-inval
io_exact inval-max 3 1 $max_io 16 2 2 --need-inval

step "hostile I/O requests (queue depth 512)"
einval="invalid request (user header or descriptor) at offset"
# A 4096-byte request with a 16-byte user header has its header at 4112.
hostile io-offset-out-of-range closed "I/O immediate 0x$(printf %x $chunk) names no chunk of the session; closing the path"
hostile io-usr-len-past "answered errno=-22" "chunk 0: $einval 4112; failing the request"
hostile io-header-past-chunk "answered errno=-74" \
	"chunk 0: request header runs past the chunk at offset $((chunk - 2)); failing the request"
hostile io-too-many-desc "answered errno=-22" "chunk 0: $einval 4112; failing the request"
hostile io-read-too-long "answered errno=-22" "chunk 0: $einval 4112; failing the request"
hostile io-read-zero-len "answered errno=-22" "chunk 0: $einval 4112; failing the request"
hostile io-unknown-type closed "chunk 0: unknown message type at offset 4112; closing the path"

# A chunk id past the session's fits the immediate only when the queue depth
# is not a power of two: 500 chunks, 9 bits of chunk id, so 500 is the first
# id that names nothing.
step "reload with sess_queue_depth=500"
check "unload" servers_down
servers_up sess_queue_depth=500 || { echo "FAIL: cannot reload the modules"; exit 1; }
io_exact qd500 20 20 4096 16 4 3
# The immediate: chunk 500 in the top 9 of 28 bits, offset 4 (an RdmaWrite).
hostile io-chunk-out-of-range closed \
	"I/O immediate 0x$(printf %x $(((500 << 19) + 4))) names no chunk of the session; closing the path"
hostile io-usr-len-past "answered errno=-22" "chunk 0: $einval 4112; failing the request"

step "unload"
check "unload rtrs-null and rtrs-server" servers_down
check "our class is gone" test ! -e $class
finish
