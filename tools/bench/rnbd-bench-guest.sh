#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark, inside the guest: fio on /dev/rnbd0 (a null_blk exported by
# upstream rnbd-server) once over OUR rtrs-server and once over the upstream
# rtrs-server, in the same guest run, then a table with the ratios.
# Usage: rnbd-bench-guest.sh OUR_MODULE_DIR PEERS_DIR RUNTIME_S OUT_DIR
set -uo pipefail
ours=$1 peers=$2 runtime=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../test/guest/lib.sh"
ctl=/sys/devices/virtual/rnbd-client/ctl

rxe_up || exit 1
modprobe null_blk || exit 1

insmod "$peers/src/rtrs/rtrs-core.ko" || exit 1
insmod "$peers/src/rtrs/rtrs-client.ko" || exit 1
insmod "$peers/src/rnbd/rnbd-client.ko" || exit 1

cases="randread-4k-qd1:randread:4k:1 randread-4k-qd32:randread:4k:32
randwrite-4k-qd1:randwrite:4k:1 randwrite-4k-qd32:randwrite:4k:32
read-128k-seq:read:128k:4 write-128k-seq:write:128k:4"

run_fio() {  # run_fio LABEL -> OUT/LABEL-CASE.json
	local label=$1 c name rw bs qd
	for c in $cases; do
		IFS=: read -r name rw bs qd <<<"$c"
		echo "[bench] $label $name"
		fio --name="$name" --filename=/dev/rnbd0 --direct=1 --ioengine=libaio \
			--rw="$rw" --bs="$bs" --iodepth="$qd" --runtime="$runtime" --time_based \
			--ramp_time=1 --eta=never --output-format=json --output="$out/$label-$name.json" ||
			return 1
	done
}

map_and_run() {  # LABEL
	echo "sessname=bench path=ip:10.77.0.2@ip:10.77.0.1 device_path=/dev/nullb0" > $ctl/map_device || return 1
	wait_exists /dev/rnbd0 10 || return 1
	run_fio "$1" || return 1
	echo normal > /sys/block/rnbd0/rnbd/unmap_device
	wait_gone /dev/rnbd0 10
}

echo "[bench] round 1: our rtrs-server"
load_deps "$ours/rtrs-server.ko"
insmod "$ours/rtrs-server.ko" || exit 1
insmod "$peers/rnbd-against/rnbd-server.ko" || exit 1
map_and_run ours || exit 1
rmmod rnbd_server rtrs_server

echo "[bench] round 2: upstream rtrs-server"
insmod "$peers/src/rtrs/rtrs-server.ko" || exit 1
insmod "$peers/src/rnbd/rnbd-server.ko" || exit 1
map_and_run upstream || exit 1
rmmod rnbd_server rtrs_server

python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
cases = ["randread-4k-qd1", "randread-4k-qd32", "randwrite-4k-qd1", "randwrite-4k-qd32",
         "read-128k-seq", "write-128k-seq"]
def load(label, case):
    j = json.load(open(os.path.join(out, f"{label}-{case}.json")))["jobs"][0]
    d = j["read"] if j["read"]["io_bytes"] > 0 else j["write"]
    return d["iops"], d["bw"] / 1024.0  # MiB/s
rows = [f"| case | ours IOPS | ours MiB/s | upstream IOPS | upstream MiB/s | ours/upstream |",
        "|---|---:|---:|---:|---:|---:|"]
for c in cases:
    oi, ob = load("ours", c)
    ui, ub = load("upstream", c)
    rows.append(f"| {c} | {oi:.0f} | {ob:.1f} | {ui:.0f} | {ub:.1f} | {oi / ui:.2f} |")
table = "\n".join(rows)
print(table)
open(os.path.join(out, "table.md"), "w").write(table + "\n")
PY
