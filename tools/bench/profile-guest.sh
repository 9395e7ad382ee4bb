#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Profile, inside the guest (tools/bench/profile.sh boots it): the same fio
# load on /dev/rnbd0 over our rtrs-server and over the upstream one (under
# upstream rnbd-server and rnbd-client, a null_blk behind), counted with
# `perf stat -a` (context switches, wake-ups, work items, softirqs,
# allocations, CQ polls: exact counts per I/O), then, in a second run of the
# load, sampled with `perf record -e cpu-clock -a -g`, reported at once
# (module symbols come from /proc/kallsyms while the stack is loaded).
#
# Usage: profile-guest.sh OUR_MODULE_DIR PEERS_DIR OUT_DIR SECONDS "FIO ARGS" INVALIDATE [ROUNDS ["PERF RECORD ARGS"]]
# Output per server and round: rR-SERVER-stat.csv (perf stat -I 1000 -x, of
# the events of stat_events, over the whole guest) and rR-SERVER.times (see
# profile), rR-SERVER.json (fio of the sampled run), rR-SERVER-dso.txt
# (samples by module), rR-SERVER-sym.txt (by module and symbol, self),
# rR-SERVER-incl.txt (the same with the time of the callees included), the
# reports with sample counts (-n); rR-SERVER.cpu (/proc/stat's "cpu" line
# before and after the sampled window).
set -uo pipefail
ours=$1 peers=$2 out=$3 secs=$4 fio_args=$5 inv=$6 rounds=${7:-1} perf_args=${8:--e cpu-clock}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../test/guest/lib.sh"
# shellcheck source=tools/bench/guest-lib.sh
. "$here/guest-lib.sh"
ctl=/sys/devices/virtual/rnbd-client/ctl
perf=$(command -v perf) || { echo "[profile] no perf (apt-get install linux-perf)"; exit 2; }

bench_setup || exit 1
echo -1 >/proc/sys/kernel/perf_event_paranoid
echo 0 >/proc/sys/kernel/kptr_restrict

# The events perf stat counts: software events and the tracepoints of this
# kernel among these (those it lacks are left out).
stat_events() {
	local e list=context-switches,cpu-migrations,page-faults
	for e in sched:sched_switch sched:sched_wakeup workqueue:workqueue_queue_work \
		workqueue:workqueue_execute_start irq:softirq_entry irq:tasklet_entry \
		irq:irq_handler_entry timer:hrtimer_expire_entry kmem:kmalloc kmem:kmem_cache_alloc \
		kmem:kfree kmem:kmem_cache_free kmem:mm_page_alloc rdma_core:cq_schedule \
		rdma_core:cq_reschedule rdma_core:cq_process rdma_core:cq_poll raw_syscalls:sys_enter; do
		[ -d "/sys/kernel/tracing/events/${e%%:*}/${e#*:}" ] && list=$list,$e
	done
	echo "$list"
}

# fio_run SECONDS OUTPUT: the load, SECONDS long.
fio_run() {
	# shellcheck disable=SC2086
	fio --name=prof --filename=/dev/rnbd0 --direct=1 --ioengine=libaio $fio_args \
		--runtime="$1" --time_based --eta=never --output-format=json --output="$2" >/dev/null
}

# profile SERVER ROUND: the same fio load twice. The first run is counted:
# perf stat is started before it and stopped after it (in 1 s intervals,
# /dev/rnbd0's completions counted with the rest as block:block_rq_complete
# filtered on its device number), so that no code is patched while the
# load runs: turning tracepoints on under load crashed the guest under TCG
# (6.1: both vCPUs looping on the int3 of a patch site, a soft lockup;
# 6.12: "Oops: int3" and a panic). rR-SERVER.times has when perf stat and
# fio started and ended; the report counts only the intervals inside the
# load. The second run is sampled (perf record of cpu-clock, which patches
# nothing), from 2 s in.
profile() {
	local srv=$1 p=$out/r$2-$1 data=/dev/shm/perf.data fio_pid stat_pid devt t_stat t0 t1
	echo "[profile] round $2: $srv"
	load_stack "$srv" "$inv" || return 1
	echo "sessname=prof path=ip:10.77.0.2@ip:10.77.0.1 device_path=/dev/nullb0" >$ctl/map_device || return 1
	wait_exists /dev/rnbd0 10 || return 1
	# the kernel's dev_t of a tracepoint: major << 20 | minor
	devt=$(awk -F: '{ print $1 * 1048576 + $2 }' /sys/block/rnbd0/dev)
	t_stat=$(now)
	"$perf" stat -a -I 1000 -x, -o "$p-stat.csv" -e "$events" \
		-e block:block_rq_complete --filter "dev == $devt" 2>"$p.stat.err" &
	stat_pid=$!
	sleep 3
	t0=$(now)
	fio_run $((secs + 2)) "$p-counted.json" || { kill -INT $stat_pid; echo "[profile] fio failed"; return 1; }
	t1=$(now)
	sleep 2
	kill -INT $stat_pid
	wait $stat_pid
	echo "stat_start $t_stat fio_start $t0 fio_end $t1" >"$p.times"
	# fio runs 2 s longer than the sampled window on each side.
	fio_run $((secs + 4)) "$p.json" &
	fio_pid=$!
	sleep 2
	# perf.data on the guest's tmpfs: written over 9p, its own writes were
	# most of the busy samples
	grep -m1 '^cpu ' /proc/stat >"$p.cpu"
	# shellcheck disable=SC2086
	"$perf" record -q $perf_args -a -g -o "$data" -- sleep "$secs" 2>"$p.record.err"
	grep -m1 '^cpu ' /proc/stat >>"$p.cpu"
	wait $fio_pid || { echo "[profile] fio failed"; return 1; }
	"$perf" report -i "$data" --stdio -n --no-children --sort dso -g none 2>/dev/null >"$p-dso.txt"
	"$perf" report -i "$data" --stdio -n --no-children --sort dso,sym -g none \
		2>/dev/null >"$p-sym.txt"
	"$perf" report -i "$data" --stdio -n --children --sort dso,sym -g none \
		2>/dev/null >"$p-incl.txt"
	rm -f "$data" "$data.old"
	echo normal >/sys/block/rnbd0/rnbd/unmap_device || return 1
	wait_gone /dev/rnbd0 10 || return 1
	unload_stack
}

events=$(stat_events)
echo "[profile] counted: $events"
for ((r = 1; r <= rounds; r++)); do
	pair="ours upstream"
	[ $((r % 2)) -eq 0 ] && pair="upstream ours"
	for srv in $pair; do
		profile "$srv" "$r" || { unload_stack; exit 1; }
	done
done
rmmod rnbd_client rtrs_client rtrs_core
exit 0
