#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The latency histograms' cost, inside the guest: the same counted I/O
# (rtrs-client io to rtrs-null) timed on a module with the histograms and on
# one built with RTRS_NO_LATENCY=1, in alternating rounds (ABAB...), so that
# the machine's drift hits both alike.
# Usage: latency-cost-guest.sh MODULE_DIR NOLAT_MODULE_DIR CLIENT ROUNDS OUT_DIR
set -uo pipefail
on=$1 off=$2 client=$3 rounds=$4 out=$5
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../test/guest/lib.sh"
rxe_up || exit 1
load_deps "$on/rtrs-server.ko" || exit 1
# name:reads:writes:size:qd
cases="4k-qd1:1500:1500:4096:1 4k-qd16:4000:4000:4096:16 64k-qd8:600:600:65536:8"
: >"$out/results.txt"
for ((r = 1; r <= rounds; r++)); do
	for variant in on off; do
		dir=$on
		[ $variant = off ] && dir=$off
		insmod "$dir/rtrs-server.ko" && insmod "$dir/rtrs-null.ko" || exit 1
		for c in $cases; do
			IFS=: read -r name reads writes size qd <<<"$c"
			t0=$(now)
			"$client" io --session bench --server 10.77.0.1 --src 10.77.0.2 --cons 3 --reads "$reads" \
				--writes "$writes" --size "$size" --qd "$qd" --quiet >/dev/null 2>&1 || exit 1
			t1=$(now)
			ops=$(echo "($reads + $writes) / ($t1 - $t0)" | bc -l)
			printf '%s %s %d %.1f\n' "$variant" "$name" "$r" "$ops" | tee -a "$out/results.txt"
			wait_gone /sys/class/rtrs-server/bench 20
		done
		rmmod rtrs_null rtrs_server
	done
done
echo "| case | with histograms (req/s, median of $rounds) | without | ratio with/without |"
echo "|---|---:|---:|---:|"
for c in $cases; do
	name=${c%%:*}
	med() { awk -v v="$1" -v n="$name" '$1 == v && $2 == n { print $4 }' "$out/results.txt" | sort -n |
		awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
	a=$(med on) b=$(med off)
	printf '| %s | %.0f | %.0f | %.3f |\n' "$name" "$a" "$b" "$(echo "$a / $b" | bc -l)"
done | tee "$out/table.md"
