#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fault suite, connections (FAILURES.md rows 5, 9, 13, 16), in the guest,
# with our rtrs-server, rtrs-null and the userspace client:
#   row 5   stalled handshakes: a client makes all its connections and never
#           sends the info request, another makes 1 of 2; the real client
#           reconnecting the same session and addresses is refused (EEXIST)
#           while they exist, and accepted once the server has closed them,
#           within 30 s of their last connection event (timed);
#   row 9   connect/disconnect storms: CYCLES open/close cycles of a
#           two-path session (always_invalidate Y and N), the class empty
#           after, the module unloads;
#   row 16  refusals half-way: sessions whose second path is refused, paths
#           closed after their first connection, repeated; no rxe complaint;
#   row 13  the disconnect file written by many writers at once while the
#           client is killed: one teardown, no hang.
# Usage: conn.sh MODULE_DIR CLIENT_BINARY [CYCLES [CYCLES_N]]
#   CYCLES: storm cycles with always_invalidate=Y (default 30; 1000 with
#   RTRS_FAULT_LONG=1); CYCLES_N: with N (default CYCLES)
set -uo pipefail
moddir=$1 client=$2 cycles=${3:-30}
cycles_n=${4:-$cycles}
. "$(dirname "$0")/lib.sh"
[ "$long" = 1 ] && cycles=1000 cycles_n=1000
work=/tmp/fault-conn
fresh_dir $work
problems0=$(problem_count)

step "soft-RoCE; rtrs-server (sess_queue_depth 16: small sessions) and rtrs-null"
rxe_up || { echo "FAIL: rxe setup"; exit 1; }
servers_up sess_queue_depth=16 || { echo "FAIL: cannot load the modules"; exit 1; }

# --- row 5: stalled handshakes -------------------------------------------------
step "row 5: two stalled handshakes, then the real client on the same session and addresses"
# The server's own "handshake stalled" line is rate-limited together with
# every refusal (the real client's attempts can hide it); its close line
# is not.
stalled() { dmesg | grep -c ": closing path .* (stalled handshake)"; }
stalled0=$(stalled)
uA=$(new_uuid) pA=$(new_uuid) uB=$(new_uuid)
# A: every connection, no info request (rxe0). B: 1 of 2 connections (rxe1).
"$client" connect --session zombie-a --server $srv --src $cli --paths-uuid "$uA" \
	--path-uuid "$pA" --no-info --quiet >$work/za.out 2>$work/za.err &
za=$!
"$client" connect --session zombie-b --server $srv2 --src $cli2 --paths-uuid "$uB" \
	--only-cons 1 --quiet >$work/zb.out 2>$work/zb.err &
zb=$!
wait_line $work/za.out '^path .* connecting: 2 of 2 connections, no info request' 30 &&
	tA=$(now) || tA=
wait_line $work/zb.out '^path .* connecting: 1 of 2 connections, no info request' 30 &&
	tB=$(now) || tB=
# The kernel log gets a mark at once: the times below are told from the
# kernel's own timestamps (the server's "is up" line against this mark).
[ -n "$tA" ] && echo "rtrs-fault: zombie-a holds its connections" >/dev/kmsg
[ -n "$tB" ] && echo "rtrs-fault: zombie-b holds its connections" >/dev/kmsg
check "zombie A holds 2 of 2 connections without an info request" test -n "$tA"
check "zombie B holds 1 of 2 connections" test -n "$tB"
[ -n "$tA" ] && [ -n "$tB" ] || show $work/za.out $work/za.err $work/zb.out $work/zb.err
check "no session folder for a path that is not up" test ! -e $class/zombie-a -a ! -e $class/zombie-b

# try NAME ADDR SRC UUID [more client args]: one attempt of the real client
# (the zombie's session: same paths uuid, a new path uuid unless given);
# prints its exit status and its stdout on one line.
try() {
	local name=$1 dst=$2 src=$3 uuid=$4 out rc
	shift 4
	out=$("$client" connect --session "$name" --server "$dst" --src "$src" --paths-uuid "$uuid" \
		--exit-after-up --quiet "$@" 2>>$work/try.err)
	rc=$?
	echo "$rc $(echo "$out" | head -n 1)"
}
# The three attempts at once (each client takes seconds to start under
# emulation): they must all be over while the zombies still stand.
try zombie-a $srv $cli "$uA" >$work/try1 &
t1=$!
try zombie-a $srv $cli "$uA" --path-uuid "$pA" >$work/try2 &
t2=$!
try zombie-b $srv2 $cli2 "$uB" >$work/try3 &
t3=$!
wait $t1 $t2 $t3
tries_end=$(now)
note "the three attempts ended $(elapsed "${tA:-0}" "$tries_end") s after zombie A's last connection, $(elapsed "${tB:-0}" "$tries_end") s after B's"
if le "$(elapsed "${tA:-0}" "$tries_end")" 24 && le "$(elapsed "${tB:-0}" "$tries_end")" 24; then
	got=$(cat $work/try1)
	check "A's session, same addresses, another path: refused EEXIST ($got)" \
		test "$got" = "2 rejected: errno -17 (EEXIST)"
	got=$(cat $work/try2)
	check "A's session, the same path again: refused ($got)" test "${got%% *}" = 2
	got=$(cat $work/try3)
	check "B's session, same addresses, another path: refused EEXIST ($got)" \
		test "$got" = "2 rejected: errno -17 (EEXIST)"
else
	fail "the attempts took too long to tell anything (the zombies may be gone): $(cat $work/try1 $work/try2 $work/try3 | tr '\n' ';')"
fi

# The real client keeps trying (every 0.5 s after a refusal, as a client
# reconnecting does) until the server has closed the zombie.
"$client" connect --session zombie-a --server $srv --src $cli --paths-uuid "$uA" \
	--retry-for 60 --exit-after-up >$work/ra.out 2>$work/ra.err &
ra=$!
"$client" connect --session zombie-b --server $srv2 --src $cli2 --paths-uuid "$uB" \
	--retry-for 60 --exit-after-up >$work/rb.out 2>$work/rb.err &
rb=$!

# While the zombies wait for the server (25 s), rows 9 (always_invalidate
# Y, as loaded), 16 and 13 run on other sessions.
# --- row 9: storms ------------------------------------------------------------------
# storm INVAL: CYCLES open/close cycles of a two-path session, with the
# module loaded with always_invalidate=INVAL (reloaded unless it is).
storm() {
	local inval=$1 cycles=$2 t0 rc got
	step "row 9: $cycles open/close cycles of a two-path session, always_invalidate=$inval"
	[ "$(param always_invalidate)" = "$inval" ] ||
		reload sess_queue_depth=16 always_invalidate="$inval" || { fail "reload"; return; }
	t0=$(now)
	"$client" connect --session storm --server $srv --src $cli --server $srv2 --src $cli2 \
		--cycles "$cycles" --quiet >$work/storm-$inval.out 2>$work/storm-$inval.err
	rc=$?
	note "$(tail -n 1 $work/storm-$inval.out) in $(elapsed "$t0") s"
	got=$(sed -n 's/^cycles: \([0-9]*\) of .*/\1/p' $work/storm-$inval.out)
	echo "figure: connect/disconnect cycles of a two-path session, always_invalidate=$inval: done=${got:-0} lost=$((cycles - ${got:-0}))"
	check "$cycles cycles, always_invalidate=$inval: client exit $rc" test $rc -eq 0
	check "every cycle brought both paths up" \
		grep -qxF "cycles: $cycles of $cycles opened and closed" $work/storm-$inval.out
	[ $rc -eq 0 ] || show $work/storm-$inval.out $work/storm-$inval.err
	check "the session's folder is gone after the storm" wait_gone $class/storm 20
	check "after the storm the module holds nothing (debugfs held: sessions, paths, connections, MRs, chunk pages)" held_zero 20
	got=$(dmesg | grep -c ": path ip:.* closed (")
	note "path teardowns in the kernel log so far: $got"
}

storm Y "$cycles"

# --- row 16: refused half-way ---------------------------------------------------------
halfway=$((cycles / 10 > 3 ? cycles / 10 : 3))
step "row 16: $halfway sessions refused half-way (second path refused; path closed after 1 of 2 connections)"
bad=0
for ((i = 0; i < halfway; i++)); do
	# The second path has the first one's addresses: refused (EEXIST) after
	# the first is up; the client then closes the first.
	out=$("$client" connect --session half --server $srv --src $cli --server $srv --src $cli \
		--exit-after-up --quiet 2>/dev/null)
	rc=$?
	[ $rc -eq 2 ] && [[ $out == *"errno -17 (EEXIST)"* ]] || { bad=$((bad + 1)); echo "attempt $i: $rc $out"; }
	# An info request before the second connection: the server closes the
	# path (its close line is not rate-limited, unlike the reason's), and
	# the client hears of it: from the CM's disconnect request, or from the
	# reject the server's CM sends when the connection was not yet
	# established there (our client once missed that one and timed out:
	# fixed in rtrs-client, 40c19e5). A client that times out is a failure:
	# the server's own close line shows that it closed, not that the
	# environment lost what it sent.
	mark="row 16, attempt $i: info request before all connections"
	log_mark "$mark"
	out=$("$client" bad info-before-all-cons --server $srv2 --src $cli2 --session half2 --quiet 2>/dev/null)
	closes=$(log_count_after "$mark" "(unnamed): closing path $p2 (protocol error)")
	if [ "$out" != "result: closed" ] || [ "$closes" -ne 1 ]; then
		bad=$((bad + 1))
		echo "attempt $i: $out (server close lines after the attempt began: $closes)"
	fi
done
check "every half-way refusal went as expected ($bad unexpected)" test $bad -eq 0
check "nothing left of them" wait_gone $class/half 20

# --- row 13: disconnect racing itself and the client ----------------------------------
step "row 13: 16 writers of 'disconnect' and a SIGKILL of the client, at once"
closing0=$(log_count "race: closing path $p1 ")
"$client" connect --session race --server $srv --src $cli --quiet >$work/race.out 2>$work/race.err &
rpid=$!
if wait_line $work/race.out "^path $p1 up" 60; then
	f=$class/race/paths/$p1/disconnect
	fifo=$work/go
	rm -f $fifo
	mkfifo $fifo
	writers=
	for ((i = 0; i < 16; i++)); do
		{ read -r _ <$fifo; echo 1 >"$f"; } 2>/dev/null &
		writers="$writers $!"
	done
	sleep 0.5
	t0=$(now)
	: >$fifo
	kill -KILL $rpid
	{ wait $rpid; } 2>/dev/null
	hung=0
	for w in $writers; do wait_pid "$w" 20 || hung=$((hung + 1)); done
	check "every writer returned ($hung still blocked after 20 s)" test $hung -eq 0
	check "the path folder is gone" wait_gone "$class/race" 20
	note "path gone $(elapsed "$t0") s after the writes"
	wait $writers 2>/dev/null
	got=$(($(log_count "race: closing path $p1 ") - closing0))
	check "one teardown: 'closing path' logged once (got $got)" test $got -eq 1
	dmesg | grep -F "race: closing path $p1 " | tail -n 1
else
	fail "the race session did not come up"
	show $work/race.out $work/race.err
	kill $rpid 2>/dev/null
fi


# --- row 5, the outcome ----------------------------------------------------------------
step "row 5: the outcome"
wait $ra
rcA=$?
wait $rb
rcB=$?
# (log_since MARK LINE: seconds from MARK's line to LINE's, or "never")
reapA=$(log_since "rtrs-fault: zombie-a holds" "(unnamed): closing path $p1 (stalled handshake)")
reapB=$(log_since "rtrs-fault: zombie-b holds" "(unnamed): closing path $p2 (stalled handshake)")
secsA=$(log_since "rtrs-fault: zombie-a holds" "zombie-a: path $p1 is up")
secsB=$(log_since "rtrs-fault: zombie-b holds" "zombie-b: path $p2 is up")
note "A: the server closed the zombie after $reapA s; the real client's path up after $secsA s ($(grep -h '^accepted at' $work/ra.out))"
note "B: the server closed the zombie after $reapB s; the real client's path up after $secsB s ($(grep -h '^accepted at' $work/rb.out))"
note "(kernel timestamps, from the moment the zombie held its connections)"
# The issue's two promises: the server closes a stalled path within 30 s
# of its last connection event (from the zombie's mark, which comes after
# its connections: a generous measure), and the same client can then
# reconnect the same addresses (it retries every 0.5 s; how soon it is up
# after the close depends on how fast the client process runs, printed).
within() { [ "$1" != never ] && le "$1" 30; }
check "the server closed zombie A within 30 s of its last connection event ($reapA s)" within "$reapA"
check "the server closed zombie B within 30 s of its last connection event ($reapB s)" within "$reapB"
check "A's session, same addresses, accepted again after the close (client exit $rcA)" \
	test "$rcA" -eq 0 -a "$secsA" != never
check "B's session, same addresses, accepted again after the close (client exit $rcB)" \
	test "$rcB" -eq 0 -a "$secsB" != never
show $work/ra.err $work/rb.err
[ $rcA -eq 0 ] && [ $rcB -eq 0 ] || show $work/ra.out $work/rb.out
wait_pid $za 10
wait $za
rc=$?
check "zombie A was closed by the server (exit 3, got $rc)" test $rc -eq 3
wait_pid $zb 10
wait $zb
rc=$?
check "zombie B was closed by the server (exit 3, got $rc)" test $rc -eq 3
got=$(($(stalled) - stalled0))
check "the server closed two paths for a stalled handshake (got $got)" test $got -eq 2
dmesg | grep ": closing path .* (stalled handshake)" | tail -n 2 | sed 's/^/   /' 
check "nothing left of the zombies' sessions" wait_gone $class/zombie-a 10
check "nothing left of B's session" wait_gone $class/zombie-b 10

step "row 9 again, always_invalidate=N"
storm N "$cycles_n"

check "the class is empty" wait_class_empty 20
step "unload"
check "unload rtrs-null and rtrs-server" servers_down
check "our class is gone" test ! -e $class
no_new_problems "$problems0" "the whole suite"
finish
