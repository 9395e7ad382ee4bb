#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What operators watch, inside the guest: the latency histograms in debugfs
# count exactly what a counted workload (rtrs-client io) sent; `rtrs-srv
# show` prints their percentiles and `rtrs-srv metrics` passes promtool and
# matches sysfs field by field; writing 1 to stats/rdma zeroes them; each
# trace event of events/rtrs_server/ fires with the right fields (path and
# session up and down with the reason, a refused connection, an I/O error
# answer, a heartbeat miss); trace-cmd, perf and bpftrace list the events
# where they are installed. Then, if the upstream peers are given, a slow
# backend (dm-delay under upstream rnbd-server) moves the ULP-side
# percentiles and not the transport's.
# Usage: guest-run.sh MODULE_DIR CLIENT_BINARY RTRS_SRV_BINARY [PEERS_DIR]
set -uo pipefail
# shellcheck disable=SC2034 # moddir: lib.sh's servers_up reads it
moddir=$1 client=$2 cli=$3 peers=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../guest/lib.sh"

class=/sys/class/rtrs-server
dbg=/sys/kernel/debug/rtrs-server
tr=/sys/kernel/tracing
srv=10.77.0.1 cln=10.77.0.2
pathname=ip:$cln@ip:$srv
work=/tmp/observe
fresh_dir $work

# The trace buffer's events of ours, as "name: fields".
events() { sed -n 's/^.* \(\(sess\|path\)_\(up\|down\)\|conn_refused\|io_error\|hb_miss\): /\1: /p' $tr/trace; }
# wait_event REGEX SECONDS: true once an event line matches.
wait_event() { wait_for "$2" event_seen "$1"; }
# event_seen REGEX: an event line matches now.
event_seen() { events | grep -Eq -- "$1"; }
check_event() {  # check_event DESCRIPTION REGEX [SECONDS]
	if wait_event "$2" "${3:-10}"; then
		pass "event $1: $(events | grep -E -- "$2" | tail -n 1)"
	else
		fail "event $1: no line matching '$2' in:"
		events | sed 's/^/    /'
	fi
}

# hist FILE NAME FIELD: count, sum or max of a histogram of a latency file;
# "buckets" gives the buckets' total, "p50" the bucket index of the median.
hist() {
	awk -v name="$2" -v what="$3" '$1 == name {
		if (what == "count") print $2; else if (what == "sum") print $3; else if (what == "max") print $4;
		else if (what == "buckets") { n = 0; for (i = 5; i <= NF; i++) n += $i; print n }
		else if (what == "p50") { c = 0; for (i = 5; i <= NF; i++) { c += $i; if (2 * c >= $2) { print i - 5; exit } } }
	}' "$1"
}

step "soft-RoCE; rtrs-server and rtrs-null; tracefs and debugfs"
rxe_up || { echo "FAIL: rxe setup"; exit 1; }
# Every response signaled: the transport histogram counts each one (by
# default it samples one in 512; the host tests check the sampling).
servers_up signal_interval=1 || { echo "FAIL: cannot load the modules"; exit 1; }
tracefs_up || { echo "FAIL: no tracefs"; exit 1; }
check "tracefs has events/rtrs_server" test -d $tr/events/rtrs_server
for e in sess_up sess_down path_up path_down conn_refused io_error hb_miss; do
	check "event $e exists" test -f $tr/events/rtrs_server/$e/format
done
check "the debugfs folder is there" test -d $dbg
# The tools tools/install-deps.sh installs: a missing one is a failure.
need_tool() {
	command -v "$1" >/dev/null && return 0
	fail "$1 is not installed (tools/install-deps.sh installs it)"
	return 1
}
if need_tool trace-cmd; then
	check "trace-cmd lists the events" sh -c "trace-cmd list -e rtrs_server | grep -qx 'rtrs_server:path_down'"
fi
if need_tool perf; then
	# perf parses the event (from tracefs) and counts it.
	if perf stat -e 'rtrs_server:path_up' -e 'rtrs_server:io_error' -a -- sleep 0.1 >$work/perf.txt 2>&1; then
		pass "perf counts rtrs_server:path_up and rtrs_server:io_error"
	elif perf stat -e 'sched:sched_switch' -a -- sleep 0.1 >/dev/null 2>&1; then
		fail "perf sees sched:sched_switch but not rtrs_server:*: $(tail -n 3 $work/perf.txt)"
	else
		skip "this perf cannot count tracepoints here: $(head -n 2 $work/perf.txt)"
	fi
fi
if need_tool bpftrace; then
	check "bpftrace lists the events" sh -c "bpftrace -l 'tracepoint:rtrs_server:*' | grep -qx 'tracepoint:rtrs_server:io_error'"
fi
echo 0 >$tr/tracing_on
echo >$tr/trace
echo 1 >$tr/events/rtrs_server/enable
echo 1 >$tr/tracing_on

step "a counted workload: 40 reads + 25 writes of 4 KiB, 16-byte user header"
reads=40 writes=25 size=4096 usr=16
"$client" io --session obs_io --server $srv --src $cln --reads $reads --writes $writes \
	--size $size --usr-len $usr --qd 4 --verify-zero --hold 120 >$work/io.out 2>$work/io.err &
pid=$!
if wait_line $work/io.out '^io: ' 120; then
	lat=$dbg/obs_io/$pathname/latency
	cp "$lat" $work/latency.txt
	cat $work/latency.txt
	n=$((reads + writes))
	for h in ulp transport; do
		check "$h: count $(hist $lat $h count) = $n" test "$(hist $lat $h count)" = $n
		check "$h: buckets add up to $n" test "$(hist $lat $h buckets)" = $n
		check "$h: max > 0 and sum >= max" test "$(hist $lat $h max)" -gt 0 -a \
			"$(hist $lat $h sum)" -ge "$(hist $lat $h max)"
	done
	stats=$(cat $class/obs_io/paths/$pathname/stats/rdma)
	want="$reads $((reads * (size + usr))) $writes $((writes * (size + usr))) 0"
	check "stats/rdma '$stats' is '$want'" test "$stats" = "$want"

	step "rtrs-srv show: percentiles"
	"$cli" show obs_io | tee $work/show.txt
	check "show: ulp latency line" grep -Eq "^    ulp latency:  p50 [0-9.]+ [mu]?s, p99 [0-9.]+ [mu]?s, max [0-9.]+ [mu]?s \($n requests\)$" $work/show.txt
	check "show: net latency line" grep -Eq "^    net latency:  p50 .* \($n requests\)$" $work/show.txt
	check "show without debugfs says nothing of latency" \
		sh -c "! '$cli' --debugfs-root /nonexistent show obs_io | grep -q latency"

	step "rtrs-srv metrics: promtool, and field by field against sysfs"
	"$cli" metrics >$work/metrics.prom
	if command -v promtool >/dev/null; then
		out=$(promtool check metrics <$work/metrics.prom 2>&1)
		check "promtool check metrics accepts it${out:+: $out}" test -z "$out"
	else
		fail "no promtool in the guest (tools/install-deps.sh installs prometheus)"
	fi
	l="{session=\"obs_io\",path=\"$pathname\"}"
	metric() { awk -v k="$1$2" 'index($0, k " ") == 1 { print $2 }' $work/metrics.prom; }
	read -r rc rb wc wb inflight <<<"$stats"
	check "reads_total = $rc" test "$(metric rtrs_server_path_reads_total "$l")" = "$rc"
	check "read_bytes_total = $rb" test "$(metric rtrs_server_path_read_bytes_total "$l")" = "$rb"
	check "writes_total = $wc" test "$(metric rtrs_server_path_writes_total "$l")" = "$wc"
	check "write_bytes_total = $wb" test "$(metric rtrs_server_path_write_bytes_total "$l")" = "$wb"
	check "inflight = $inflight" test "$(metric rtrs_server_path_inflight "$l")" = "$inflight"
	check "paths_up = 1" test "$(metric rtrs_server_session_paths_up '{session="obs_io"}')" = 1
	for h in ulp transport; do
		check "$h histogram count = $n" test "$(metric rtrs_server_path_${h}_latency_seconds_count "$l")" = $n
		check "$h histogram +Inf bucket = $n" \
			test "$(metric rtrs_server_path_${h}_latency_seconds_bucket "${l%\}},le=\"+Inf\"}")" = $n
	done
	echo "-- rtrs-srv metrics (without most buckets):"
	grep -v '_bucket' $work/metrics.prom | grep -v '^# HELP'
	grep '_ulp_latency_seconds_bucket' $work/metrics.prom | head -n 12

	step "a reset of stats/rdma zeroes the histograms"
	echo 1 >$class/obs_io/paths/$pathname/stats/rdma
	for h in ulp transport; do
		check "$h: count 0 after the reset" test "$(hist $lat $h count)" = 0
		check "$h: max 0 after the reset" test "$(hist $lat $h max)" = 0
	done
else
	fail "io: no summary line"
	cat $work/io.out $work/io.err
fi
kill -TERM $pid 2>/dev/null
wait $pid
check "io client exit status $?" test $? -eq 0
check "session gone" wait_gone $class/obs_io 20
check "its debugfs folder gone too" wait_gone $dbg/obs_io 20
check_event "sess_up" "^sess_up: sess=obs_io$"
check_event "path_up" "^path_up: sess=obs_io path=$pathname$"
check_event "path_down (client disconnect)" \
	"^path_down: sess=obs_io path=$pathname reason=client_disconnect was_up=1$"
check_event "sess_down (client disconnect)" "^sess_down: sess=obs_io reason=client_disconnect$"

step "a path closed through sysfs"
"$client" connect --session obs_dc --server $srv --src $cln --hold 120 >$work/dc.out 2>&1 &
pid=$!
if wait_exists $class/obs_dc/paths/$pathname 60; then
	echo 1 >$class/obs_dc/paths/$pathname/disconnect
	check_event "path_down (sysfs disconnect)" \
		"^path_down: sess=obs_dc path=$pathname reason=sysfs_disconnect was_up=1$"
	check_event "sess_down (sysfs disconnect)" "^sess_down: sess=obs_dc reason=sysfs_disconnect$"
else
	fail "obs_dc: the path did not come up"
fi
kill -TERM $pid 2>/dev/null
wait $pid

step "a refused connection (not the first connection of a new session)"
"$client" bad not-first-conn --server $srv --src $cln >$work/refused.out 2>&1
check "the client was rejected" grep -qx "result: rejected errno=-6" $work/refused.out
check_event "conn_refused" \
	"^conn_refused: path=$pathname err=-6 why=\"no such session, and not the first connection of a new one\"$"

step "an I/O error answer (a user header longer than its offset)"
"$client" bad io-usr-len-past --server $srv --src $cln --session obs_bad >$work/bad.out 2>&1
check "the request was answered with EINVAL" grep -qx "result: answered errno=-22" $work/bad.out
check_event "io_error" "^io_error: sess=obs_bad path=$pathname chunk=0 err=-22 dir=write$"
check "the log line names the session and the path" \
	sh -c "dmesg | grep -qF 'obs_bad: $pathname: chunk 0: invalid request'"

step "heartbeat misses (a client that sends none)"
"$client" connect --session obs_hb --server $srv --src $cln --no-heartbeat --hold 120 >$work/hb.out 2>&1 &
pid=$!
# Up, a heartbeat after 5 s, the first silent period ends 5 s later.
check_event "hb_miss" "^hb_miss: sess=obs_hb path=$pathname missed=1 max=5$" 40
kill -TERM $pid 2>/dev/null
wait $pid
check "no session left" wait_gone $class/obs_hb 20

echo "-- the trace, as tracefs shows it:"
grep -E ' (sess|path)_(up|down)| conn_refused| io_error| hb_miss' $tr/trace
if command -v trace-cmd >/dev/null; then
	echo "-- the same through trace-cmd show:"
	trace-cmd show | grep -E ' (sess|path)_(up|down)| conn_refused| io_error| hb_miss' | tail -n 8
fi
cp $tr/trace $work/trace.txt
echo 0 >$tr/events/rtrs_server/enable

# --- a slow backend under upstream rnbd-server ------------------------------
slow_cleanup() {
	local dev
	for dev in $(ls /sys/block | grep rnbd); do
		echo normal >/sys/block/$dev/rnbd/unmap_device
	done
	wait_gone $class/obs_slow 20
	wait_gone $class/obs_fast 20
	dmsetup remove obs_slow 2>/dev/null
	for m in rnbd_client rtrs_client rtrs_core rnbd_server; do
		[ -d /sys/module/$m ] && rmmod $m
	done
}
slow_backend() {
	local ctl=/sys/devices/virtual/rnbd-client/ctl sectors delay_ms=50 s dev
	step "a slow backend: dm-delay ($delay_ms ms) under upstream rnbd-server, beside a fast one"
	rmmod rtrs_null || return 1
	insmod "$peers/rnbd-against/rnbd-server.ko" || return 1
	insmod "$peers/src/rtrs/rtrs-core.ko" && insmod "$peers/src/rtrs/rtrs-client.ko" &&
		insmod "$peers/src/rnbd/rnbd-client.ko" || return 1
	modprobe -a null_blk dm_delay || return 1
	sectors=$(blockdev --getsz /dev/nullb0)
	echo "0 $sectors delay /dev/nullb0 0 $delay_ms" | dmsetup create --noudevsync obs_slow || return 1
	# No udev here: the device's own node (devtmpfs), not /dev/mapper.
	slow=/dev/$(dmsetup info -c --noheadings -o blkdevname obs_slow)
	test -b "$slow" || return 1
	for s in fast slow; do
		dev=/dev/nullb0
		[ $s = slow ] && dev=$slow
		echo "sessname=obs_$s path=$pathname device_path=$dev" >$ctl/map_device || return 1
	done
	for s in fast slow; do
		wait_exists $class/obs_$s/paths/$pathname 20 || return 1
		echo 1 >$class/obs_$s/paths/$pathname/stats/rdma
	done
	sleep 1
	ls /sys/block | grep rnbd
	for dev in $(ls /sys/block | grep rnbd); do
		dd if=/dev/$dev of=/dev/null bs=4k count=48 iflag=direct status=none || return 1
		dd if=/dev/zero of=/dev/$dev bs=4k count=16 oflag=direct status=none || return 1
	done
	for s in fast slow; do
		echo "-- obs_$s:"
		cat $dbg/obs_$s/$pathname/latency
		"$cli" show obs_$s | grep latency
	done
	local fu su ft st
	fu=$(hist $dbg/obs_fast/$pathname/latency ulp p50)
	su=$(hist $dbg/obs_slow/$pathname/latency ulp p50)
	ft=$(hist $dbg/obs_fast/$pathname/latency transport p50)
	st=$(hist $dbg/obs_slow/$pathname/latency transport p50)
	echo "median buckets (2^i us): ulp fast $fu slow $su; transport fast $ft slow $st"
	check "slow ulp median >= 32 ms (bucket $su >= 15)" test "$su" -ge 15
	check "fast ulp median below 32 ms (bucket $fu < 15)" test "$fu" -lt 15
	check "slow transport median below 32 ms (bucket $st < 15)" test "$st" -lt 15
	check "the transport medians are alike (buckets $ft and $st, at most 2 apart)" \
		test $((st - ft)) -le 2 -a $((ft - st)) -le 2
	return 0
}
if [ -n "$peers" ] && [ -f "$peers/rnbd-against/rnbd-server.ko" ]; then
	t0=$SECONDS
	if slow_backend; then
		pass "slow backend part done in $((SECONDS - t0)) s"
	else
		fail "slow backend: a step failed (see above)"
	fi
	slow_cleanup
elif [ -n "$peers" ]; then
	fail "no $peers/rnbd-against/rnbd-server.ko: the slow-backend part cannot run"
else
	skip "no upstream peers given: the slow-backend part is left out"
fi

step "unload"
servers_down
check "our class is gone" test ! -e $class
check "our debugfs folder is gone" test ! -e $dbg
finish
