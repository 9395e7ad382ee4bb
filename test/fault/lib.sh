# SPDX-License-Identifier: GPL-2.0
# Shared helpers of the fault suites (sourced; runs in the QEMU guest).
# test/guest/lib.sh gives check/pass/fail/finish, step and note, the clock
# (now, elapsed, le), the kernel log's counts (log_count, problem_count,
# log_since), load_deps, servers_up and servers_down, the waits (wait_for and those on it: wait_gone,
# wait_line, wait_exists, wait_pid, wait_log, ...) and rxe_up.

fault_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$fault_here/../guest/lib.sh" || exit 2

# The client is built with ASan: its leak check at exit costs seconds per
# run under emulation (4 s on the debug kernel), and the client's own
# leaks are not what these suites look at.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

class=/sys/class/rtrs-server
srv=10.77.0.1 cli=10.77.0.2 srv2=10.78.0.1 cli2=10.78.0.2
p1=ip:$cli@ip:$srv p2=ip:$cli2@ip:$srv2
# RTRS_FAULT_LONG=1: the long soaks (tools/fault/load-figures.sh).
long=${RTRS_FAULT_LONG:-0}

# The kernel problem lines (tools/vm/kernel-issues.sh, which lib.sh reads).
problem_re=$rtrs_issue_re
# no_new_problems SINCE WHAT: a check that no problem line appeared since
# the count SINCE.
no_new_problems() {
	local got=$(($(problem_count) - $1))
	check "$2: no kernel warning, oops or rxe complaint ($got new)" test "$got" -eq 0
	[ "$got" -eq 0 ] || dmesg | grep -E -- "$problem_re" | tail -n 5
}

# removal_close MARK SESS PATH: the first close of SESS's PATH in the kernel
# log after MARK (written as the device's removal began): sets rm_secs
# (seconds from MARK, or never) and rm_why (its reason, or nothing).
# removal_closed LIMIT: that close was for the removal, within LIMIT s.
# The removal closes a path either by the CM's removal event ("device
# removal") or, when soft-RoCE fails the QP's work first, by that failure
# ("transport error": seen on the debug kernel, "send failed: local QP
# operation error"): which comes first is the environment's race, and
# both are the removal's doing once they come after it began. Any other
# reason, a close before the mark, or none within LIMIT is not.
rm_secs=never rm_why=
removal_close() {
	local line
	line=$(log_after "$1" "$2: closing path $3 (" | head -n 1)
	rm_secs=$(log_secs_after "$1" "$2: closing path $3 (")
	rm_why=
	[ -n "$line" ] && { rm_why=${line##*"$3 ("}; rm_why=${rm_why%)}; }
	return 0
}
removal_closed() {
	[ "$rm_secs" != never ] && le "$rm_secs" "$1" &&
		{ [ "$rm_why" = "device removal" ] || [ "$rm_why" = "transport error" ]; }
}

# refusal_due UP BUDGET_MIB AVAIL_MIB TOTAL_MIB: whether our server would
# refuse the next 64 MiB session, UP being held: prints what refuses it
# (the chunk memory budget, or the headroom of an eighth of the memory),
# false when neither would. A session takes 64 MiB of chunks and about 2
# MiB of charges (14 sessions held 922 MiB of the budget on 6.1).
refusal_due() {
	local up=$1 budget=$2 avail=$3 total=$4
	if [ "$budget" -gt 0 ] && [ $(((up + 1) * 66)) -gt "$budget" ]; then
		echo "the budget ($budget MiB, $up sessions held)"
	elif [ $((avail - 66)) -lt $((total / 8)) ]; then
		echo "the headroom ($avail MiB available, $((total / 8)) kept)"
	else
		return 1
	fi
}

# The session folders of our class (none: prints nothing).
class_sessions() { ls -A "$class" 2>/dev/null; }
class_empty() { [ -z "$(class_sessions)" ]; }
# wait_class_empty SECONDS
wait_class_empty() { wait_for "$1" class_empty; }

new_uuid() { cat /proc/sys/kernel/random/uuid; }

# reload [params...]: servers down and up again with these parameters.
reload() {
	servers_down && servers_up "$@"
}
param() { cat "/sys/module/rtrs_server/parameters/$1"; }

show() {  # show FILE...: a client's output, for a failure
	local f
	for f in "$@"; do
		echo "--- $f:"
		tail -n 30 "$f" 2>/dev/null
	done
	echo "---"
}

# cpu_hogs N: N busy loops in the background (their PIDs in $hogs).
hogs=
cpu_hogs() {
	local i
	for ((i = 0; i < $1; i++)); do
		(while :; do :; done) &
		hogs="$hogs $!"
	done
}
stop_hogs() {
	[ -n "$hogs" ] && kill $hogs 2>/dev/null
	wait $hogs 2>/dev/null
	hogs=
}
