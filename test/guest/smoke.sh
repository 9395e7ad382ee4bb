#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest smoke test of rtrs-server.ko: the class appears on load and goes on
# unload, three times over; parameters show their defaults; bad parameters
# refuse the load with a message in the kernel log.
# Usage (inside the guest): smoke.sh PATH/rtrs-server.ko
set -u
. "$(dirname "$0")/lib.sh"
ko=$1
if [ ! -f "$ko" ]; then
	echo "FAIL: no module at $ko (cwd $(pwd))"
	exit 1
fi
class=/sys/class/rtrs-server
params=/sys/module/rtrs_server/parameters

echo "kernel $(uname -r), module $ko"
check "the module's dependencies load ($(modinfo -F depends "$ko"))" load_deps "$ko"
check "class absent before the first load" test ! -e $class

for round in 1 2 3; do
	if insmod "$ko"; then pass "round $round: insmod"; else fail "round $round: insmod"; continue; fi
	check "round $round: $class exists" test -d $class
	check "round $round: class has no sessions yet" test -z "$(ls -A $class)"
	if rmmod rtrs_server; then pass "round $round: rmmod"; else fail "round $round: rmmod"; fi
	check "round $round: $class gone after unload" test ! -e $class
	check "round $round: module gone after unload" test ! -e /sys/module/rtrs_server
done

insmod "$ko"
check "always_invalidate defaults to Y" test "$(cat $params/always_invalidate)" = Y
check "max_chunk_size defaults to 131072" test "$(cat $params/max_chunk_size)" = 131072
check "sess_queue_depth defaults to 512" test "$(cat $params/sess_queue_depth)" = 512
check "max_chunk_mem_mb defaults to 0 (half of RAM)" test "$(cat $params/max_chunk_mem_mb)" = 0
check "signal_interval defaults to 0 (one in 512)" test "$(cat $params/signal_interval)" = 0
for p in always_invalidate max_chunk_size sess_queue_depth max_chunk_mem_mb signal_interval; do
	check "$p is read-only (0444)" test "$(stat -c %a $params/$p)" = 444
done
# The budget in effect is half of the memory the kernel counts.
half=$(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 2048 ))
said=$(dmesg | sed -n 's/.*rtrs_server: loaded .*chunk memory budget \([0-9]*\) MiB$/\1/p' | tail -n 1)
check "the load message says the default budget, half of RAM ($said MiB, MemTotal/2 = $half MiB)" \
	test -n "$said" -a "${said:-0}" -ge $((half - 64)) -a "${said:-0}" -le $((half + 64))
rmmod rtrs_server

insmod "$ko" max_chunk_mem_mb=100
check "max_chunk_mem_mb given at load is taken" test "$(cat $params/max_chunk_mem_mb)" = 100
check "the load message says the budget given" \
	sh -c "dmesg | grep -q 'rtrs_server: loaded .*chunk memory budget 100 MiB'"
rmmod rtrs_server

insmod "$ko" always_invalidate=N max_chunk_size=65536 sess_queue_depth=128
check "parameters given at load are taken (always_invalidate)" test "$(cat $params/always_invalidate)" = N
check "parameters given at load are taken (max_chunk_size)" test "$(cat $params/max_chunk_size)" = 65536
check "parameters given at load are taken (sess_queue_depth)" test "$(cat $params/sess_queue_depth)" = 128
rmmod rtrs_server

# Each bad value: the load fails with EINVAL, the log says why, and nothing
# of the module is left behind.
bad_load() {
	local args=$1 why=$2 out
	dmesg -C
	if out=$(insmod "$ko" $args 2>&1); then
		fail "insmod $args was accepted"
		rmmod rtrs_server
		return
	fi
	if printf '%s' "$out" | grep -q "Invalid argument\|Invalid parameters"; then
		pass "insmod $args refused with EINVAL"
	else
		fail "insmod $args refused, but not with EINVAL: $out"
	fi
	if dmesg | grep -q "rtrs_server: refusing to load: .*$why"; then
		pass "insmod $args: kernel log says '$why'"
	else
		fail "insmod $args: no clear message in the kernel log"; dmesg | tail -n 5
	fi
	check "insmod $args: no class left behind" test ! -e $class
	check "insmod $args: no module left behind" test ! -e /sys/module/rtrs_server
}
bad_load "max_chunk_size=4096" "max_chunk_size 4096"
bad_load "max_chunk_size=100000" "must be a power of two"
bad_load "sess_queue_depth=0" "sess_queue_depth 0"
bad_load "sess_queue_depth=65536" "must be between 1 and 65535"
bad_load "sess_queue_depth=65535 max_chunk_size=8192" "29 bits"
bad_load "max_chunk_size=-8192" "max_chunk_size -8192"

# A value the kernel's parameter parser itself rejects.
dmesg -C
if insmod "$ko" always_invalidate=maybe 2>/dev/null; then
	fail "always_invalidate=maybe was accepted"; rmmod rtrs_server
elif dmesg | grep -q "maybe' invalid for parameter \`always_invalidate'"; then
	pass "always_invalidate=maybe refused by the parameter parser"
else
	fail "always_invalidate=maybe refused, but not by the parameter parser"; dmesg | tail -n 3
fi
check "no module left after a parser refusal" test ! -e /sys/module/rtrs_server

finish
