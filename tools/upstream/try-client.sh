#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs rtrs-client against a server in a QEMU guest: sessions of one and two
# paths, IPv6, every `bad` case (a table of what the server did), and with
# --slow the server dropping a silent client and a killed one.
#
# On the host:  try-client.sh [--kver KVER] [--slow] upstream|ours
#   upstream: the reference rtrs-server + rnbd-server (tools/upstream/build-peers.sh)
#   ours:     rtrs-server.ko + rtrs-null.ko (tools/build-module.sh)
#   Builds what is needed under build/, then boots the guest (results in
#   build/vm/try-client-MODE-KVER). Exit status: run-guest's.
# In the guest: try-client.sh --in-guest MODE KODIR CLIENT [--slow]
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

if [ "${1:-}" != --in-guest ]; then
	kver= slow=
	while [ $# -gt 1 ]; do
		case $1 in
		--kver) kver=$2; shift 2 ;;
		--slow) slow=--slow; shift ;;
		*) break ;;
		esac
	done
	[ $# -eq 1 ] || { echo "usage: $0 [--kver KVER] [--slow] upstream|ours" >&2; exit 2; }
	mode=$1
	if [ -z "$kver" ]; then
		kver=$(ls /lib/modules | grep '^6\.1\.' | sort -V | tail -1)
		[ -n "$kver" ] || kver=$(ls /lib/modules | sort -V | tail -1)
	fi
	case $mode in
	upstream) kodir=$top/build/peers/$kver
		"$here/build-peers.sh" "$kver" "$kodir" >/dev/null || exit 1 ;;
	ours) kodir=$top/build/try-client/module/$kver
		"$top/tools/build-module.sh" "$kver" "$kodir" >/dev/null || exit 1 ;;
	*) echo "mode: upstream or ours" >&2; exit 2 ;;
	esac
	bdir=$top/build/rc
	{ cmake -S "$top" -B "$bdir" -DRTRS_GUEST_TESTS=OFF >/dev/null &&
		cmake --build "$bdir" --target rtrs-client -j"$(nproc)" >/dev/null; } ||
		{ echo "cannot build rtrs-client" >&2; exit 1; }
	cd "$top" || exit 1
	exec "$top/tools/vm/run-guest" --kver "$kver" --out "$top/build/vm/try-client-$mode-$kver" \
		--timeout 1500 -- "$here/try-client.sh" --in-guest "$mode" "$kodir" "$bdir/rtrs-client" $slow
fi

# --- in the guest ----------------------------------------------------------------
mode=$2 kodir=$3 client=$4 slow=${5:-}
. "$here/guest-setup.sh"
failed=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
class=/sys/class/rtrs-server

# session_check NAME "PATHDIR..." CLIENT-ARGS...: holds a session for 4 s,
# checks that each path shows in sysfs meanwhile and is gone afterwards.
session_check() {
	local name=$1 dirs=$2 p st
	shift 2
	"$client" connect --session "$name" --hold 6 --quiet "$@" >/tmp/$name.out 2>&1 &
	p=$!
	# Until every path is up (the client prints one line per path), or the
	# client has ended.
	wait_for 30 paths_up_or_end "/tmp/$name.out" "$(echo $dirs | wc -w)" "$p"
	for d in $dirs; do
		if [ -d "$class/$name/paths/$d" ]; then ok "$name: $class/$name/paths/$d exists"
		else bad "$name: no $class/$name/paths/$d (have: $(ls $class/$name/paths 2>&1))"; fi
	done
	wait $p
	st=$?
	if [ $st -eq 0 ]; then ok "$name: client exit 0"; else bad "$name: client exit $st"; cat /tmp/$name.out; fi
	if wait_gone "$class/$name" 10; then ok "$name: gone from sysfs after disconnect"
	else bad "$name: still in sysfs 10 s after disconnect: $(find $class/$name -maxdepth 2)"; fi
}

rxe_up || { echo "cannot bring up rxe"; exit 1; }
server_up "$mode" "$kodir" || { echo "cannot load the $mode server"; dmesg | tail -20; exit 1; }
dmesg -n 4   # keep the console for our output; dmesg.txt has it all
sleep 1

out=$("$client" connect --session s0 --server 10.77.0.1 --src 10.77.0.2 --exit-after-up 2>&1)
st=$?
if [ $st -eq 0 ]; then ok "exit-after-up: $(echo "$out" | grep ' up: ')"; else bad "exit-after-up: exit $st: $out"; fi

session_check s1 "ip:10.77.0.2@ip:10.77.0.1" --server 10.77.0.1 --src 10.77.0.2
session_check s2 "ip:10.77.0.2@ip:10.77.0.1 ip:10.78.0.2@ip:10.78.0.1" --paths 2 \
	--server 10.77.0.1 --src 10.77.0.2 --server 10.78.0.1 --src 10.78.0.2
session_check s6 "ip:fd00::2@ip:fd00::1" --server fd00::1 --src fd00::2
session_check s8 "ip:10.77.0.2@ip:10.77.0.1" --server 10.77.0.1 --src 10.77.0.2 --cons 8

# Cases that crash the upstream 6.1/6.12 server (an empty session name:
# kobject WARNING, then list corruption in rtrs_srv_close_work) run last.
last_cases="info-empty-name"
bad_case() {
	local c=$1 res st
	dmesg -C
	res=$("$client" bad "$c" --server 10.77.0.1 --src 10.77.0.2 --session "bad-$c" --quiet 2>/tmp/bad.err)
	st=$?
	printf '%-24s %-40s (exit %d)\n' "$c" "$res" $st
	[ $st -eq 0 ] || { sed 's/^/    client: /' /tmp/bad.err; bad "bad $c: client exit $st"; }
	dmesg | grep -v 'speed is unknown' | sed 's/^/    kernel: /' | head -8
	wait_gone "$class/bad-$c" 10 || bad "bad $c: bad-$c still in sysfs"
}
echo "--- bad cases ($mode, $(uname -r)) ---"
for c in $("$client" cases); do
	case " $last_cases " in *" $c "*) continue ;; esac
	bad_case "$c"
done

if [ -n "$slow" ]; then
	echo "--- silent and killed clients ---"
	start=$SECONDS
	"$client" connect --session silent --server 10.77.0.1 --src 10.77.0.2 --no-heartbeat --hold 120 --quiet \
		>/tmp/silent.out 2>&1 &
	ps=$!
	"$client" connect --session killed --server 10.77.0.1 --src 10.77.0.2 --hold 300 --quiet >/dev/null 2>&1 &
	pk=$!
	# A stopped client keeps its connections but answers nothing: only the
	# heartbeats can tell. (A killed one is disconnected by its kernel at
	# once, when its RDMA CM file closes.)
	"$client" connect --session stopped --server 10.77.0.1 --src 10.77.0.2 --hold 300 --quiet \
		>/tmp/stopped.out 2>&1 &
	pt=$!
	sleep 4
	kill -KILL $pk
	kill -STOP $pt
	wait $pk 2>/dev/null
	if wait_gone $class/killed 90; then ok "killed client: path dropped after $((SECONDS - start)) s"
	else bad "killed client: still in sysfs after 90 s"; fi
	if wait_gone $class/stopped 90; then ok "stopped client: path dropped after $((SECONDS - start)) s"
	else bad "stopped client: still in sysfs after 90 s"; fi
	kill -CONT $pt
	wait $pt
	st=$?
	if [ $st -eq 3 ]; then ok "stopped client, resumed: exit 3: $(tail -1 /tmp/stopped.out)"
	else bad "stopped client, resumed: exit $st: $(cat /tmp/stopped.out)"; fi
	wait $ps
	st=$?
	if [ $st -eq 3 ]; then ok "silent client: dropped (exit 3) after $((SECONDS - start)) s: $(tail -1 /tmp/silent.out)"
	else bad "silent client: exit $st: $(cat /tmp/silent.out)"; fi
	wait_gone $class/silent 10 || bad "silent client: still in sysfs"
fi

if server_down "$mode"; then ok "server unloaded"; else bad "server unload failed"; fi

echo "--- last: cases that crash the upstream server ---"
server_up "$mode" "$kodir" || bad "cannot load the $mode server again"
for c in $last_cases; do bad_case "$c"; done
sleep 2
if timeout 30 bash -c ". '$here/guest-setup.sh'; server_down $mode"; then ok "server unloaded"
else bad "server unload failed after: $last_cases"; fi
echo "$failed failed"
[ $failed -eq 0 ]
