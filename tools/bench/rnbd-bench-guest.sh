#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark, inside the guest: fio on /dev/rnbd0 (a null_blk exported by
# upstream rnbd-server) over OUR rtrs-server and over the upstream
# rtrs-server, in interleaved rounds (ours, upstream, ours, upstream, ...) for
# each always_invalidate value, plus the raw rxe ceiling (ib_write_bw,
# ib_read_bw) once per round. Writes raw results only; the host turns them
# into table.md and a chart (tools/bench/report.py).
#
# Usage: rnbd-bench-guest.sh OUR_MODULE_DIR PEERS_DIR OUT_DIR ROUNDS SECONDS "CASES" "INVALIDATE" [ORDER [BASELINE_DIR]]
#   CASES: space-separated case names (see case_args), INVALIDATE: "Y N", "Y" or "N"
#   ORDER: fixed (ours first in every round, the default) or alternate (upstream
#   first in the even rounds: ours, upstream, upstream, ours, ...)
# Output in OUT_DIR: inv-Y/r1-ours-randread-4k-qd1.json (fio) and .cpu (two
# /proc/stat "cpu" lines: before and after), inv-Y/r1-ceiling-write.txt ...
set -uo pipefail
ours=$1 peers=$2 out=$3 rounds=$4 secs=$5 cases=$6 invs=$7 order=${8:-fixed} baseline=${9:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../test/guest/lib.sh"
# shellcheck source=tools/bench/guest-lib.sh
. "$here/guest-lib.sh"
ctl=/sys/devices/virtual/rnbd-client/ctl

# case_args NAME: the fio options of a case.
case_args() {
	case $1 in
	randread-4k-qd1) echo "--rw=randread --bs=4k --iodepth=1" ;;
	randread-4k-qd32) echo "--rw=randread --bs=4k --iodepth=32" ;;
	randwrite-4k-qd1) echo "--rw=randwrite --bs=4k --iodepth=1" ;;
	randwrite-4k-qd32) echo "--rw=randwrite --bs=4k --iodepth=32" ;;
	read-128k-seq) echo "--rw=read --bs=128k --iodepth=4" ;;
	write-128k-seq) echo "--rw=write --bs=128k --iodepth=4" ;;
	mixed-70r-4k64k-qd8)
		echo "--rw=randrw --rwmixread=70 --bssplit=4k/40:8k/20:16k/20:32k/10:64k/10 --iodepth=8" ;;
	*) return 1 ;;
	esac
}
for c in $cases; do
	case_args "$c" >/dev/null || { echo "[bench] unknown case $c"; exit 2; }
done

bench_setup || exit 1

# fio_case NAME PREFIX: PREFIX.json (fio) and PREFIX.cpu (the /proc/stat
# "cpu" line just before and just after the I/O: fio runs exec_prerun and
# exec_postrun around its job and writes their output to NAME.prerun.txt and
# NAME.postrun.txt in its current folder).
fio_case() {
	local dir=${2%/*}
	# shellcheck disable=SC2046
	(cd "$dir" && fio --name="$1" --filename=/dev/rnbd0 --direct=1 --ioengine=libaio \
		$(case_args "$1") --runtime="$secs" --time_based --eta=never \
		--exec_prerun="grep -m1 '^cpu ' /proc/stat" --exec_postrun="grep -m1 '^cpu ' /proc/stat" \
		--output-format=json --output="$2.json" >/dev/null) || return 1
	cat "$dir/$1.prerun.txt" "$dir/$1.postrun.txt" >"$2.cpu" && rm -f "$dir/$1.prerun.txt" "$dir/$1.postrun.txt"
}

# server_round LABEL INV DIR ROUND
server_round() {
	local c
	echo "[bench] always_invalidate=$2 round $4: $1 (at $((SECONDS - start)) s)"
	load_stack "$1" "$2" || return 1
	echo "sessname=bench path=ip:10.77.0.2@ip:10.77.0.1 device_path=/dev/nullb0" > $ctl/map_device || return 1
	wait_exists /dev/rnbd0 10 || return 1
	for c in $cases; do
		fio_case "$c" "$3/r$4-$1-$c" || { echo "[bench] fio $c failed"; return 1; }
	done
	echo normal > /sys/block/rnbd0/rnbd/unmap_device || return 1
	wait_gone /dev/rnbd0 10 || return 1
	unload_stack
}

# ceiling TOOL FILE: one perftest run on rxe0, the device the rnbd session
# uses (its client connects to 10.77.0.1 and binds the same address),
# 128 KiB messages; as many as take about
# SECONDS at 12 MiB/s, what it gets here (a count, not -D: with -D 2 it measured 64 messages
# here, a fraction of the run).
ceiling() {
	local srv i
	timeout $((secs * 4 + 60)) "$1" -R -F -s 131072 -n $((secs * 100)) >/dev/null 2>&1 &
	srv=$!
	for ((i = 0; i < 20; i++)); do
		sleep 0.5
		timeout $((secs * 4 + 30)) "$1" -R -F -s 131072 -n $((secs * 100)) 10.77.0.1 >"$2" 2>&1 && break
	done
	wait $srv
}

start=$SECONDS
getconf CLK_TCK > "$out/clk_tck"
for inv in $invs; do
	d=$out/inv-$inv
	mkdir -p "$d"
	for ((r = 1; r <= rounds; r++)); do
		pair="ours upstream"
		[ "$order" = alternate ] && [ $((r % 2)) -eq 0 ] && pair="upstream ours"
		for srv in $pair; do
			server_round $srv "$inv" "$d" $r || { unload_stack; exit 1; }
		done
		if command -v ib_write_bw >/dev/null; then
			echo "[bench] round $r: ceiling (at $((SECONDS - start)) s)"
			ceiling ib_write_bw "$d/r$r-ceiling-write.txt"
			ceiling ib_read_bw "$d/r$r-ceiling-read.txt"
		fi
	done
done
echo "[bench] done in $((SECONDS - start)) s"
rmmod rnbd_client rtrs_client rtrs_core
exit 0
