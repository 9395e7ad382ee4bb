#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The scale benchmark, inside the guest (tools/bench/scale.sh boots it): for
# our rtrs-server and the upstream one in interleaved rounds, under upstream
# rnbd-server and rnbd-client:
#   - N sessions mapped at once (N writes to rnbd-client's map_device started
#     together, one null_blk each, one path each): the time until all are
#     mapped (each write returns once its session's path is up and the
#     device is open), and the memory they hold (MemAvailable and Slab from
#     /proc/meminfo, page cache dropped before each reading);
#   - 8 sessions of 2 paths each (rxe0 and rxe1) doing 4k random reads and
#     writes at once (fio, one job a device): aggregate IOPS and busy guest
#     CPU time per I/O.
# Writes raw results only; tools/bench/scale-report.py makes the tables.
#
# Usage: scale-guest.sh OUR_MODULE_DIR PEERS_DIR OUT_DIR ROUNDS "COUNTS" SECONDS INVALIDATE
#   COUNTS: session counts to map at once, e.g. "1 8 32"; SECONDS: per fio job
# Output: OUT_DIR/results.tsv, one line a measurement:
#   round server metric count value
# metrics: map_s (seconds until all COUNT mapped), memavail_kib and slab_kib
# (before minus with COUNT mapped), unmap_s (until the server has no session
# left), and per fio job (randread, randwrite): JOB_iops, and JOB_window_s and
# JOB_cpu_ticks (busy ticks while every job ran, see fio_all) (count 8);
# OUT_DIR/clk_tck; fio's JSON and the stamped /proc/stat lines beside.
set -uo pipefail
ours=$1 peers=$2 out=$3 rounds=$4 counts=$5 secs=$6 inv=$7
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../test/guest/lib.sh"
# shellcheck source=tools/bench/guest-lib.sh
. "$here/guest-lib.sh"
ctl=/sys/devices/virtual/rnbd-client/ctl
class=/sys/class/rtrs-server
tsv=$out/results.tsv
max=8
for n in $counts; do [ "$n" -gt "$max" ] && max=$n; done

bench_setup nr_devices="$max" || exit 1
getconf CLK_TCK >"$out/clk_tck"
: >"$tsv"

meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
quiet_mem() { sync; echo 3 >/proc/sys/vm/drop_caches; sleep 1; }
record() { echo "$*" >>"$tsv"; }
sessions_up() { find $class -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }

# map_all PREFIX COUNT PATHS...: COUNT map_device writes at once, session
# PREFIX-I on /dev/nullbI over the given paths; true when all succeeded.
map_all() {
	local prefix=$1 count=$2 i pids=() rc=0 p
	shift 2
	for ((i = 0; i < count; i++)); do
		(echo "sessname=$prefix-$i $* device_path=/dev/nullb$i" >$ctl/map_device) &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	return $rc
}

# all_unmapped: the server holds no session, and no rnbd device is left.
# shellcheck disable=SC2317 # run by wait_for
all_unmapped() { [ "$(sessions_up)" -eq 0 ] && ! ls /dev/rnbd* >/dev/null 2>&1; }
# unmap_all: every rnbd device, then until the server holds no session.
unmap_all() {
	local d
	for d in /sys/block/rnbd*/rnbd/unmap_device; do
		[ -e "$d" ] && echo normal >"$d"
	done
	wait_for 60 all_unmapped && return 0
	echo "[scale] left after unmapping: $(sessions_up) session(s), devices: $(echo /dev/rnbd*)"
	return 1
}

# fio_all JOB PREFIX: one fio job per mapped device, 4k, queue depth 8 each.
# Each job stamps the time and the /proc/stat "cpu" line just before its
# I/O starts and just after it ends (exec_prerun/exec_postrun, written to
# JOBNAME.prerun.txt/.postrun.txt in fio's folder): the window from the last
# start to the first end has every job doing I/O, without fio's own start
# and end. PREFIX.window gets "SECONDS BUSY_TICKS" of that window.
fio_all() {
	local job=$1 prefix=$2 dir args=() d stamp
	dir=$(mktemp -d "$out/fio.XXXX")
	# fio hands the command to the shell (system(3)) when the job runs
	# shellcheck disable=SC2016
	stamp='echo $(date +%s.%N) $(grep -m1 "^cpu " /proc/stat)'
	for d in /dev/rnbd*; do
		args+=(--name="${d##*/}" --filename="$d" --exec_prerun="$stamp" --exec_postrun="$stamp")
	done
	(cd "$dir" && fio --direct=1 --ioengine=libaio --rw="$job" --bs=4k --iodepth=8 --runtime="$secs" \
		--time_based --group_reporting --eta=never --output-format=json \
		--output="$prefix.json" "${args[@]}" >/dev/null) || return 1
	cat "$dir"/*.prerun.txt >"$prefix.starts" && cat "$dir"/*.postrun.txt >"$prefix.ends" || return 1
	rm -rf "$dir"
	# the latest start and the earliest end: "TIME cpu USER NICE SYSTEM IDLE IOWAIT IRQ SOFTIRQ ..."
	awk 'FNR == 1 { f++ }
		f == 1 && (s == "" || $1 > s) { s = $1; sb = $3 + $4 + $5 + $8 + $9 }
		f == 2 && (e == "" || $1 < e) { e = $1; eb = $3 + $4 + $5 + $8 + $9 }
		END { if (e > s) printf "%.3f %d\n", e - s, eb - sb; else exit 1 }' \
		"$prefix.starts" "$prefix.ends" >"$prefix.window"
}

# fio_iops FILE: the aggregate IOPS of a group-reported fio JSON (read + write).
fio_iops() {
	python3 -c '
import json, sys
t = open(sys.argv[1]).read()
j = json.loads(t[t.index("{"):])["jobs"][0]
print("%.1f" % (j["read"]["iops"] + j["write"]["iops"]))
' "$1"
}

# server_round SERVER ROUND
server_round() {
	local srv=$1 r=$2 n t0 t1 a0 a1 s0 s1 job iops win ticks
	echo "[scale] round $r: $srv (at $((SECONDS - start)) s)"
	load_stack "$srv" "$inv" || return 1
	for n in $counts; do
		quiet_mem
		a0=$(meminfo MemAvailable) s0=$(meminfo Slab)
		t0=$(now)
		map_all "r$r-$n" "$n" "path=ip:10.77.0.2@ip:10.77.0.1" ||
			{ echo "[scale] $srv: mapping $n sessions at once failed"; unmap_all; return 1; }
		t1=$(now)
		[ "$(sessions_up)" -eq "$n" ] ||
			{ echo "[scale] $srv: $(sessions_up) sessions up, not $n"; unmap_all; return 1; }
		record "$r $srv map_s $n $(elapsed "$t0" "$t1" 3)"
		quiet_mem
		a1=$(meminfo MemAvailable) s1=$(meminfo Slab)
		record "$r $srv memavail_kib $n $((a0 - a1))"
		record "$r $srv slab_kib $n $((s1 - s0))"
		echo "[scale]   $n at once: mapped in $(elapsed "$t0" "$t1" 3) s, MemAvailable -$(((a0 - a1) / 1024)) MiB, Slab +$(((s1 - s0) / 1024)) MiB"
		t0=$(now)
		unmap_all || return 1
		record "$r $srv unmap_s $n $(elapsed "$t0" "$(now)" 3)"
	done
	map_all "r$r-io" 8 "path=ip:10.77.0.2@ip:10.77.0.1 path=ip:10.78.0.2@ip:10.78.0.1" ||
		{ echo "[scale] $srv: mapping 8 two-path sessions failed"; unmap_all; return 1; }
	for job in randread randwrite; do
		fio_all "$job" "$out/r$r-$srv-$job" || { echo "[scale] fio $job failed"; unmap_all; return 1; }
		iops=$(fio_iops "$out/r$r-$srv-$job.json")
		read -r win ticks <"$out/r$r-$srv-$job.window"
		record "$r $srv ${job}_iops 8 $iops"
		record "$r $srv ${job}_window_s 8 $win"
		record "$r $srv ${job}_cpu_ticks 8 $ticks"
		echo "[scale]   8 x 2 paths, $job: $iops IOPS ($ticks busy ticks in the $win s all jobs ran)"
	done
	unmap_all || return 1
	unload_stack
}

start=$SECONDS
for ((r = 1; r <= rounds; r++)); do
	pair="ours upstream"
	[ $((r % 2)) -eq 0 ] && pair="upstream ours"
	for srv in $pair; do
		server_round "$srv" "$r" || { unload_stack; exit 1; }
	done
done
echo "[scale] done in $((SECONDS - start)) s"
rmmod rnbd_client rtrs_client rtrs_core
exit 0
