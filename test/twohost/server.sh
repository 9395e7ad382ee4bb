#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The server host of the two-host lab (tools/vm/two-hosts): exports
# /dev/ram0 (reboot: its disk that survives the reboot) through upstream
# rnbd-server on OUR rtrs-server (FLAVOR ours) or on upstream's (FLAVOR
# upstream, the figure beside ours) to the client host (client.sh), over
# two paths on two wires, and watches what the client host's scenario does
# to its paths:
#   basic: a cut of both links shorter than the heartbeat timeout (nothing
#          closes)
#   long:  a cut longer than the heartbeat timeout (both paths close, the
#          links heal, the client reconnects)
#   reboot: this host is stopped (its QEMU quit: a crash) and booted again
#          (RTRS_TH_BOOT=2, two-hosts); the client keeps its map and
#          reconnects both paths to the new boot, reads back what it wrote
#          before the stop, verified I/O
#   failover: link 1 (path 2) goes down under the client's writes (the
#          NICs lose their carrier); path 2 closes, path 1 stays; the link
#          comes back, so does path 2
# then, in each, the client host dies under I/O (the paths close on
# heartbeat loss, what the server holds returns to zero), boots again and
# maps the same session name, verified I/O, and unmaps (the session goes,
# held back to zero).
# Usage: server.sh MODULE_DIR PEERS_DIR ours|upstream basic|long|reboot|failover
set -uo pipefail
ours=$1 peers=$2 flavor=$3 scenario=$4
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../guest/lib.sh"
. "$here/lib.sh"
class=/sys/class/rtrs-server
sess=s2h
wait_peer=${RTRS_TH_WAIT:-300}
boot=${RTRS_TH_BOOT:-1}

step "server host ($flavor server, $scenario, boot $boot): the wire, soft-RoCE on both NICs"
net_up || bail "the wire and soft-RoCE"
if [ "$scenario" = reboot ]; then
	exp=$(th_disk) || bail "the disk that survives the reboot"
	note "exporting $exp (serial $(cat "/sys/block/${exp#/dev/}/serial"), $(($(blockdev --getsize64 "$exp") >> 20)) MiB)"
else
	modprobe brd rd_nr=1 rd_size=$((32 * 1024)) || bail "brd"
	exp=/dev/ram0
fi
if [ "$flavor" = ours ]; then
	insmod_deps "$ours/rtrs-server.ko" || bail "our rtrs-server"
	insmod "$peers/rnbd-against/rnbd-server.ko" || bail "rnbd-server on ours"
else
	load_deps "$peers/src/rtrs/rtrs-server.ko" &&
		insmod "$peers/src/rtrs/rtrs-core.ko" &&
		insmod "$peers/src/rtrs/rtrs-server.ko" &&
		insmod "$peers/src/rnbd/rnbd-server.ko" || bail "upstream rtrs-server and rnbd-server"
fi
mem_note "modules loaded, no session"

# paths_state: "p1 p2" with 1 for a path in the class, 0 for one not
paths_state() { echo "$(test -e "$class/$sess/paths/$th_p1" && echo 1 || echo 0) $(test -e "$class/$sess/paths/$th_p2" && echo 1 || echo 0)"; }
path_gone() { test ! -e "$class/$sess/paths/$1"; }
both_gone() { path_gone "$th_p1" && path_gone "$th_p2"; }
both_back() { ! path_gone "$th_p1" && ! path_gone "$th_p2"; }

if [ "$boot" = 1 ]; then
	signal ready "$exp"
	step "the client host maps $exp over two paths"
	await mapped "$wait_peer" || bail "the client host did not map"
	got abort && bail "the client host gave up: $(cat "$th_dir/in/abort")"
	check "path 1 ($th_p1) in the class" wait_exists "$class/$sess/paths/$th_p1" 10
	check "path 2 ($th_p2) in the class" wait_exists "$class/$sess/paths/$th_p2" 10
	await verified 120 || bail "no verified I/O from the client host"
	r=$(cat "$th_dir/in/verified")
	check "the client host's verified I/O ($r)" test "$r" != failed
	mem_note "the session mapped, 16 MiB written"
fi

if [ "$scenario" = reboot ] && [ "$boot" = 1 ]; then
	step "this host is stopped (its QEMU quit) and booted again"
	# the client asks two-hosts to stop this guest once it is told that
	# this boot's checks are done: nothing below runs
	signal stop-me
	sleep 120
	fail "still running 120 s after the verified I/O (no stop)"
	finish
	exit 1
elif [ "$scenario" = reboot ]; then
	step "booted again: the client host reconnects to this boot"
	signal back "$exp"
	t=$(now)
	check "the client reconnects both paths to this boot" wait_for 150 both_back
	both_back || bail "the client did not reconnect to this boot"
	note "both paths in the class $(elapsed "$t") s after this boot was ready"
	await verified2 150 || bail "no verified I/O after the reconnect"
	r=$(cat "$th_dir/in/verified2")
	check "verified I/O after the reconnect ($r)" test "$r" != failed
	mem_note "the session back, 16 MiB written"
elif [ "$scenario" = basic ]; then
	step "a cut of both links shorter than the heartbeat timeout"
	await cutting 60 || bail "no cut"
	t=$(now) lost=0
	# watch the paths until the client host says its I/O resumed
	for ((i = 0; i < 1200; i++)); do
		got cut-done && break
		[ "$(paths_state)" = "1 1" ] || { lost=1; note "a path left at +$(elapsed "$t") s: $(paths_state)"; break; }
		sleep 0.1
	done
	await cut-done 120
	r=$(cat "$th_dir/in/cut-done" 2>/dev/null)
	check "the client host's I/O resumed verified after the cut ($r)" test -n "$r" -a "$r" != failed
	check "no path closed during the cut and after ($(paths_state))" test "$lost" = 0 -a "$(paths_state)" = "1 1"
elif [ "$scenario" = failover ]; then
	step "link 1 (path 2, $th_p2) goes down under the client host's writes"
	await host.linkoff1.done 120 || bail "link 1 did not go down"
	t=$(now) p1lost=0
	# watch the paths until path 2 has left (the heartbeat's 5 x 5 s and
	# more; a bound of the clock, not of tries): path 1 must stay all along
	for ((end = SECONDS + 120; SECONDS < end; )); do
		path_gone "$th_p1" && p1lost=1
		path_gone "$th_p2" && break
		sleep 0.1
	done
	check "the path on the downed link closes" path_gone "$th_p2"
	note "path 2 $(path_gone "$th_p2" && echo left the class || echo 'still in the class') $(elapsed "$t") s after the link went down (paths: $(paths_state))"
	signal path2-closed
	p1_stayed() { [ "$p1lost" = 0 ] && ! path_gone "$th_p1"; }
	check "path 1 stays in the class all along ($(paths_state))" p1_stayed
	await failover-done 150 || bail "the client host's writes under the failover did not end"
	r=$(cat "$th_dir/in/failover-done")
	check "the client host's writes went on over path 1, nothing lost ($r)" test "$r" != failed
	await host.linkon1.done 150 || bail "link 1 did not come back"
	t=$(now)
	check "path 2 comes back with the link" wait_for 150 both_back
	both_back || bail "path 2 did not come back"
	note "both paths in the class $(elapsed "$t") s after the link came back"
	await verified2 150 || bail "no verified I/O after path 2 came back"
	r=$(cat "$th_dir/in/verified2")
	check "verified I/O with both paths back ($r)" test "$r" != failed
	mem_note "both paths back, written again"
else
	step "a cut of both links longer than the heartbeat timeout"
	await cutting 60 || bail "no cut"
	await host.cut.done 30 || bail "the links were not cut"
	t=$(now)
	check "both paths close on their own during the cut" wait_for 150 both_gone
	note "closed $(elapsed "$t") s after the cut (the links are still cut: $(got host.heal.done && echo no || echo yes))"
	signal server-closed
	await host.heal.done 150 || bail "the links did not heal"
	t=$(now)
	check "the client reconnects both paths after the links heal" wait_for 150 both_back
	note "both paths back $(elapsed "$t") s after the links healed"
	await verified2 150 || bail "no verified I/O after the reconnect"
	r=$(cat "$th_dir/in/verified2")
	check "verified I/O after the reconnect ($r)" test "$r" != failed
fi

step "the client host dies under I/O (its QEMU is stopped), then boots again"
await host.quit-client "$wait_peer" || bail "the client host was not stopped"
t=$(now)
mark="two-host: the client host was stopped"
log_mark "$mark"
note "paths at the kill: $(paths_state)"
wait_for 150 both_gone
dt=$(elapsed "$t")
note "death to the last path closed: $dt s (the host's note of the quit comes up to ~0.3 s after it)"
log_after "$mark" "closing path" | sed 's/^/   /'
# A path closes after kHbMissedMax (5) heartbeat periods of 5 s without a
# word from the client, counted from the end of the period in which the
# client was last heard: 25 to 35 s after the death (31 to 35.4 s seen,
# doc/twohost.md); 40 s leaves the emulator's delays room.
gone_within() { both_gone && le "$dt" "$1"; }
check "both paths close on their own within 40 s of the death ($dt s)" gone_within 40
check "the session leaves the class" wait_gone "$class/$sess" 20
if [ "$flavor" = ours ]; then
	check "what our server holds returns to zero" held_zero 20
	note "held: $(tr '\n' ' ' </sys/kernel/debug/rtrs-server/held)"
fi
mem_note "the session gone, modules loaded"
# the client host's new boot maps again once the dead one's session is
# gone (the same name: a session still there would refuse it)
signal death-checked "$exp"

step "the client host, booted again, maps the same session name ($sess)"
await remapped "$wait_peer" || bail "the client host did not map again"
check "path 1 ($th_p1) in the class again" wait_exists "$class/$sess/paths/$th_p1" 10
check "path 2 ($th_p2) in the class again" wait_exists "$class/$sess/paths/$th_p2" 10
r=$(cat "$th_dir/in/remapped")
check "the client host's verified I/O after the remap ($r)" test "$r" != failed
mem_note "the session mapped again"
signal remap-checked
await unmapping 120 || bail "the client host did not unmap"
t=$(now)
wait_gone "$class/$sess" 60
u=$(elapsed "$t")
# the client's disconnects close the paths at once (not a heartbeat timeout)
left_within() { [ ! -e "$class/$sess" ] && le "$1" "$2"; }
check "the session leaves the class within 10 s of the unmap ($u s)" left_within "$u" 10
await unmapped 120 || bail "the client host's unmap did not end"
if [ "$flavor" = ours ]; then
	check "what our server holds returns to zero after the unmap" held_zero 20
	note "held: $(tr '\n' ' ' </sys/kernel/debug/rtrs-server/held)"
fi
mem_note "the remapped session gone"

step "unload"
if [ "$flavor" = ours ]; then
	check "unload rnbd-server and our server" rmmod rnbd_server rtrs_server
else
	check "unload upstream's" rmmod rnbd_server rtrs_server rtrs_core
fi
check "the class is gone" test ! -e $class
mem_note "unloaded"
signal done
finish
