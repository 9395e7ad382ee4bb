#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Lays out a fake /sys/class/rtrs-server under DIR, as the kernel does (the
# class entries are symbolic links into devices/virtual/rtrs-server), with
# three sessions: two IPv4 paths, an IPv6 path, and a session of an upstream
# server (four counters, no inflight). Prints the class folder to use with
# rtrs-srv --sysfs-root. The paths of "backup 1" also have latency files in
# a fake debugfs, DIR/debug/rtrs-server (rtrs-srv --debugfs-root), and the
# module's parameters folder, with admission rules and refusals, is
# DIR/module/rtrs_server/parameters (rtrs-srv --params-dir). For the
# README's examples and by-hand tries:
#   root=$(sh test/unit/cli/make-fake-tree.sh /tmp/fake) && rtrs-srv --sysfs-root "$root" list
set -eu
dir=${1:?usage: make-fake-tree.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
class=$dir/class/rtrs-server
devices=$dir/devices/virtual/rtrs-server
mkdir -p "$class" "$devices"

# path SESSION SRC DST HCA PORT STATS
path() {
	p=$devices/$1/paths/$2@$3
	mkdir -p "$p/stats"
	printf '%s\n' "$4" >"$p/hca_name"
	printf '%s\n' "$5" >"$p/hca_port"
	printf '%s\n' "$2" >"$p/src_addr"
	printf '%s\n' "$3" >"$p/dst_addr"
	printf 'Usage: echo 1 > disconnect\n' >"$p/disconnect"
	printf '%s\n' "$6" >"$p/stats/rdma"
	chmod 0444 "$p/hca_name" "$p/hca_port" "$p/src_addr" "$p/dst_addr"
	chmod 0644 "$p/disconnect" "$p/stats/rdma"
}
session() {
	mkdir -p "$devices/$1/paths"
	ln -sfn "../../devices/virtual/rtrs-server/$1" "$class/$1"
}

session "backup 1"
path "backup 1" ip:10.77.0.2 ip:10.77.0.1 rxe0 1 "12 49152 3 12288 0"
path "backup 1" ip:10.77.1.2 ip:10.77.1.1 rxe1 1 "1048576 4294967296 524288 2147483648 7"
# buckets I=N...: the 32 bucket counts, N in bucket I, 0 elsewhere
buckets() {
	awk -v spec="$*" 'BEGIN { n = split(spec, kv, " "); for (i = 1; i <= n; i++) { split(kv[i], p, "="); b[p[1]] = p[2] }
		for (i = 0; i < 32; i++) printf "%s%d", (i ? " " : ""), b[i] + 0 }'
}
# latency SESSION PATH "COUNT SUM_US MAX_US" ULP_BUCKETS "COUNT SUM_US MAX_US" TRANSPORT_BUCKETS
latency() {
	d=$dir/debug/rtrs-server/$1/$2
	mkdir -p "$d"
	{
		echo '# name count sum_us max_us, then 32 buckets: i counts [2^i, 2^(i+1)) us'
		echo "ulp $3 $(buckets $4)"
		echo "transport $5 $(buckets $6)"
	} >"$d/latency"
}
latency "backup 1" ip:10.77.0.2@ip:10.77.0.1 "15 3120 870" "6=2 7=5 8=6 9=2" "15 1204 190" "5=4 6=8 7=3"
latency "backup 1" ip:10.77.1.2@ip:10.77.1.1 "1572864 4718592000 41236" "10=1048000 11=524000 12=800 15=64" \
	"1572864 125829120 2100" "5=1000000 6=572000 7=800 11=64"
session vm-images
path vm-images ip:fd00::2 ip:fd00::1 rxe0 1 "0 0 0 0 0"
session legacy
path legacy ip:10.77.0.3 ip:10.77.0.1 mlx5_0 1 "5 20480 0 0"
# The module's parameters: admission as the core shows it (the refusals so
# far, then the rules), admission_close write-only.
params=$dir/module/rtrs_server/parameters
mkdir -p "$params"
printf '%s\n' \
	'# refused so far: not-allowed=3 sessions=0 paths=1 connections=0 rate=12 name=2' \
	'allow 10.77.0.0/16 names=vm-images,legacy' \
	'allow fd00::/64' \
	'limit sessions=4 rate=10/s burst=20' >"$params/admission"
: >"$params/admission_close"
chmod 0644 "$params/admission"
chmod 0200 "$params/admission_close"
echo "$class"
