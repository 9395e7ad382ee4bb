#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs several test suites in one guest boot, one after the other, each
# reported on its own (tools/vm/boot-suites starts this in the guest;
# tools/vm/suite-result reads what it leaves). One boot instead of one per
# suite saves the boot, the module loads and, on the debug kernel, the
# kmemleak scans.
#
# Usage (inside the guest): suites-in-guest.sh SUITES_FILE RESULTS_DIR
#   SUITES_FILE  one suite a line: NAME TIMEOUT_SECONDS COMMAND [ARGS...]
#                (words separated by blanks; '#' lines are comments)
#   RESULTS_DIR  gets NAME/log (the suite's output), NAME/status (its exit
#                status; 124 when it ran out of time, 125 when the kernel
#                oopsed meanwhile: the suites after it do not run, each
#                gets NAME/not-run saying why, and nothing is reset),
#                NAME/seconds, NAME/processes (how many processes the
#                guest started while it ran: each costs 0.15-0.2 s of CPU
#                on the debug kernel under TCG),
#                NAME/dmesg.txt (the kernel log lines printed while it ran,
#                between the runner's two marker lines, which it keeps),
#                kmsg.log (the whole kernel log, from /dev/kmsg),
#                NAME/leftovers (what it left loaded or configured, if any)
#
# Between suites the guest is put back as it was: processes the suite
# started are killed, rtrs/rnbd modules it left are unloaded, soft-RoCE
# links and dummy devices are deleted, block test modules unloaded. What had
# to be cleaned up is recorded in NAME/leftovers and printed. After an oops
# (or a BUG or KASAN report that killed a task) nothing is reset: rmmod and
# rdma link delete could wait forever for a lock the dead task held.
# Exit status: 0 when every suite passed, 1 otherwise.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
[ $# -eq 2 ] || { echo "usage: $0 SUITES_FILE RESULTS_DIR" >&2; exit 2; }
suites=$1 results=$2
mkdir -p "$results" || exit 2

# our_modules (the rtrs* and rnbd* modules still loaded, users first) and
# wait_for.
# shellcheck source=test/guest/lib.sh
. "$(dirname "$0")/lib.sh" || exit 2

say() { echo "[suites] $*"; }
kmsg() { echo "rtrs-suite: $*" >/dev/kmsg 2>/dev/null || true; }

# reset DIR: undoes what a suite left; notes each thing in DIR/leftovers.
reset() {
	local dir=$1 m l tries
	for tries in 1 2 3 4 5; do
		l=$(our_modules)
		[ -n "$l" ] || break
		for m in $l; do
			rmmod "$m" 2>/dev/null && echo "module $m was still loaded: unloaded" >>"$dir/leftovers"
		done
		[ "$tries" -lt 5 ] || echo "modules still loaded after 5 tries: $l" >>"$dir/leftovers"
	done
	for l in $(rdma link show 2>/dev/null | awk '{print $2}' | cut -d/ -f1 | sort -u); do
		rdma link delete "$l" 2>/dev/null
	done
	for l in $(ip -o link show type dummy 2>/dev/null | awk -F': ' '{print $2}'); do
		ip link delete "$l" 2>/dev/null
	done
	for m in rnbd_client rtrs_client rtrs_core dm_delay dm_mod null_blk brd; do
		[ -d "/sys/module/$m" ] && rmmod "$m" 2>/dev/null
	done
	[ -s "$dir/leftovers" ] && sed 's/^/[suites]   left over: /' "$dir/leftovers"
	return 0
}

# The kernel log, as it comes: each suite's lines are cut from it between
# its two markers. (A reader of /dev/kmsg keeps its place whatever a test
# does to the log: the ABI suite clears it with syslog(2), which would take
# the markers out of dmesg's view.)
kmsg=$results/kmsg.log
dd if=/dev/kmsg of="$kmsg" bs=65536 conv=noerror status=none &
kmsg_pid=$!
# cut_kmsg NAME: the message text of NAME's two marker lines and of the
# lines between them (suite-result fails a slice without its markers).
cut_kmsg() {
	# Wait for the end marker to be read (the reader runs beside us).
	wait_for 5 grep -q "rtrs-suite: end $1 status" "$kmsg"
	awk -v b="rtrs-suite: begin $1" -v e="rtrs-suite: end $1 status " '
		{ sub(/^[0-9]+,[0-9]+,[0-9]+,[^;]*;/, "") }
		$0 == b { on = 1 } on { print } index($0, e) == 1 { on = 0 }' "$kmsg"
}

# processes: how many processes the guest has started since it booted.
processes() {
	local key n
	while read -r key n _; do
		[ "$key" = processes ] && { echo "$n"; return; }
	done </proc/stat
}

# An oops or a BUG taints the kernel with D (bit 7): after one, a suite
# may wait forever for a lock the dead task held.
kernel_died() {
	local t
	read -r t </proc/sys/kernel/tainted
	(((t >> 7) & 1))
}

rc=0
total=0
dead=
while read -r -a words; do
	[ ${#words[@]} -gt 0 ] || continue
	case ${words[0]} in \#*) continue ;; esac
	name=${words[0]} tmo=${words[1]}
	cmd=("${words[@]:2}")
	dir=$results/$name
	if [ -n "$dead" ]; then
		# suite-result reports it failed, with this reason.
		rm -rf "$dir"
		mkdir -p "$dir"
		echo "the kernel oopsed during $dead: the suites after it are not run" >"$dir/not-run"
		say "not run: $name (the kernel oopsed during $dead)"
		rc=1
		continue
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	: >"$dir/leftovers"
	say "begin $name (at most $tmo s): ${cmd[*]}"
	kmsg "begin $name"
	t0=$SECONDS
	p0=$(processes)
	# A session and process group of its own, so that whatever it leaves
	# running can be stopped before the next suite.
	setsid timeout -k 20 "$tmo" "${cmd[@]}" >"$dir/log" 2>&1 </dev/null &
	sid=$!
	# Waits for it, unless the kernel dies (oops or BUG) meanwhile: then
	# whatever the suite waits for may never come, nor may the next suite's.
	oopsed=0
	while kill -0 "$sid" 2>/dev/null; do
		if kernel_died; then
			oopsed=1
			break
		fi
		nap 1
	done
	if [ $oopsed = 1 ]; then
		st=125
		echo "the kernel oopsed while $name ran (tainted $(cat /proc/sys/kernel/tainted))" >>"$dir/log"
	else
		wait "$sid"
		st=$?
	fi
	secs=$((SECONDS - t0))
	pkill -KILL -s "$sid" 2>/dev/null && echo "processes of the suite were still running: killed" >>"$dir/leftovers"
	kmsg "end $name status $st"
	echo "$secs" >"$dir/seconds"
	echo $(($(processes) - p0)) >"$dir/processes"
	# The kernel's lines between this suite's two markers.
	cut_kmsg "$name" >"$dir/dmesg.txt"
	if kernel_died; then
		# No reset: it could block on the dead task's locks. The log is kept
		# (kmsg.log, dmesg.txt; run-guest saves the whole log at the end).
		dead=$name
		[ "$st" = 0 ] && st=125
		[ $oopsed = 1 ] || echo "the kernel oopsed as $name ended (tainted $(cat /proc/sys/kernel/tainted))" >>"$dir/log"
		say "the kernel oopsed during $name: no reset, the suites after it are not run"
	else
		reset "$dir"
	fi
	echo "$st" >"$dir/status"
	total=$((total + secs))
	if [ "$st" -eq 0 ]; then
		say "end $name: passed in $secs s"
	else
		say "end $name: FAILED (status $st) in $secs s; last lines:"
		tail -n 15 "$dir/log" | sed 's/^/[suites]   /'
		rc=1
	fi
done <"$suites"
if [ -n "$dead" ]; then
	say "stopped at the oops during $dead, after $total s"
else
	say "all suites done in $total s"
fi
kill "$kmsg_pid" 2>/dev/null
exit $rc
