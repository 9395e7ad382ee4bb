# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The one library of the guest test scripts (sourced; runs in the QEMU
# guest, which sees this checkout at the same path): each helper the guest
# suites share is defined here once. test/fault/lib.sh adds the fault
# suites' own. Defines variables and functions only, and never exits.

lib_dir=${BASH_SOURCE[0]%/*}
[ "$lib_dir" != "${BASH_SOURCE[0]}" ] || lib_dir=.
# What a kernel problem is: the one rule of tools/vm/kernel-issues.sh.
# (Without it, everything else is still defined here; the sourcing
# returns 2 at the end of this file.)
lib_missing=
# shellcheck source=tools/vm/kernel-issues.sh
. "$lib_dir/../../tools/vm/kernel-issues.sh" || lib_missing=tools/vm/kernel-issues.sh

passed=0
failed=0
skipped=0
allowed=0
# A suite may allow at most this many outcomes that the environment, not
# our server, caused (allow()); it sets it higher where a row needs it.
max_allowed=1

pass() {
	passed=$((passed + 1))
	echo "ok: $*"
}

fail() {
	failed=$((failed + 1))
	echo "FAIL: $*"
}

# A part left out, and why: counted, printed as "skip: ..." (the run's
# summary lists every skip of the guests' suites, tools/test-times.py).
skip() {
	skipped=$((skipped + 1))
	echo "skip: $*"
}

# allow WHAT EVIDENCE: an outcome accepted although it is not the one the
# check wants, because EVIDENCE (a line of the kernel log, a client's error,
# found by the caller) shows the environment caused it, not our server.
# Counted and printed as "allowed: ..." (the run's summary lists every one);
# more than max_allowed in a suite fails it at finish.
allow() {
	allowed=$((allowed + 1))
	echo "allowed: $1 (evidence: $2)"
}

# step TEXT: the heading of a part of a suite, with the seconds since the
# suite began (since it sourced this file).
suite_t0=$SECONDS
step() { echo "== [+$((SECONDS - suite_t0)) s] $*"; }
# note TEXT: a detail under a step (a figure, what happened).
note() { echo "   $*"; }

# The clock: now is the wall clock in seconds, to the microsecond (bash's
# EPOCHREALTIME: no process started, which is slow under emulation);
# elapsed tells spans of it. Whole seconds (a step's time, a deadline) are
# bash's SECONDS.
now() { local t=$EPOCHREALTIME; echo "${t/,/.}"; }
# elapsed T0 [T1 [DECIMALS]]: seconds from T0 to T1 (default, or empty:
# now), with DECIMALS decimals (default 2).
elapsed() { awk -v a="$1" -v b="${2:-$(now)}" -v d="${3:-2}" 'BEGIN { printf "%." d "f", b - a }'; }
# le A B: A <= B for decimal numbers.
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

# Kernel log lines containing a fixed string (the whole log: compare
# before and after).
log_count() { dmesg | grep -cF -- "$1"; }
# Kernel problem lines (tools/vm/kernel-issues.sh), counted over the whole
# log: counted before and after a step, they tell which step caused one.
problem_count() { dmesg | rtrs_issue_count; }
# kts STRING: the kernel timestamp of the last log line with STRING.
kts() { dmesg | grep -F -- "$1" | tail -n 1 | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p'; }
# log_since MARK LINE: seconds from the last kernel log line with MARK to
# the last with LINE (the kernel's own timestamps), or "never".
log_since() {
	local a b
	a=$(kts "$1") b=$(kts "$2")
	[ -n "$a" ] && [ -n "$b" ] && elapsed "$a" "$b" || echo never
}
# Marks: what a step caused is told from the lines after its own mark, not
# from the whole log, where earlier steps and suites of the boot print the
# same lines (for the same addresses).
# log_mark TEXT: the line "rtrs-test: TEXT" in the kernel log, now.
log_mark() { echo "rtrs-test: $*" >/dev/kmsg; }
# log_after MARK STRING: prints the kernel log's lines with STRING after the
# last line with MARK; false when there is none (or no MARK at all).
log_after() {
	dmesg | LIB_M=$1 LIB_S=$2 awk '
		index($0, ENVIRON["LIB_M"]) { seen = 1; n = 0; next }
		seen && index($0, ENVIRON["LIB_S"]) { l[++n] = $0 }
		END { for (i = 1; i <= n; i++) print l[i]; exit n == 0 }'
}
# log_has_after MARK STRING: such a line is there (quietly).
log_has_after() { log_after "$1" "$2" >/dev/null; }
# log_count_after MARK STRING: how many there are.
log_count_after() { log_after "$1" "$2" | grep -c ''; }
# log_secs_after MARK STRING: seconds from the last line with MARK to the
# first line with STRING after it (the kernel's timestamps), or "never".
log_secs_after() {
	local a b
	a=$(kts "$1") b=$(log_after "$1" "$2" | head -n 1 | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p')
	[ -n "$a" ] && [ -n "$b" ] && elapsed "$a" "$b" || echo never
}

# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() {
	desc=$1
	shift
	if "$@"; then pass "$desc"; else fail "$desc"; fi
}

# The plain closing line the test runners read, and the exit status.
finish() {
	[ "$skipped" -eq 0 ] || echo "$skipped skipped (the skip: lines above)"
	if [ "$allowed" -gt 0 ]; then
		echo "$allowed allowed (the allowed: lines above; at most $max_allowed in this suite)"
		[ "$allowed" -le "$max_allowed" ] ||
			fail "more outcomes allowed for the environment's sake than this suite may ($allowed > $max_allowed)"
	fi
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

# --- modules --------------------------------------------------------------
# load_deps KO: modprobes the in-kernel modules KO depends on (insmod does
# not). rtrs-core and rtrs-server are left out: they are never the
# kernel's own here, but ours or upstream's from the peers' folder, which
# the caller insmods first (upstream rtrs-server.ko needs rtrs-core.ko,
# rnbd-server.ko an rtrs-server.ko). Our rtrs-server.ko depends on neither.
load_deps() {
	local dep
	for dep in $(modinfo -F depends "$1" | tr ',' ' '); do
		case $dep in rtrs[-_]core | rtrs[-_]server) continue ;; esac
		modprobe "$dep" || { echo "cannot modprobe $dep"; return 1; }
	done
}
# insmod_deps KO [PARAMS...]: load_deps KO, then insmod KO with PARAMS.
insmod_deps() {
	load_deps "$1" && insmod "$@"
}

# servers_up [rtrs-server params...]: our rtrs-server and rtrs-null (port
# 1234) from $moddir (the suite's MODULE_DIR); rtrs-server gets the
# suite's server_params (an array, empty unless the suite sets it: the
# I/O suite's always_invalidate and max_chunk_size), then these.
server_params=()
# shellcheck disable=SC2154 # moddir: the suite's
servers_up() {
	insmod_deps "$moddir/rtrs-server.ko" "${server_params[@]}" "$@" &&
		insmod "$moddir/rtrs-null.ko"
}
# servers_down: rtrs-null and rtrs-server unloaded, whichever is loaded;
# false when an rmmod fails.
servers_down() {
	local m
	for m in rtrs_null rtrs_server; do
		[ -d "/sys/module/$m" ] || continue
		rmmod "$m" || return 1
	done
}

# our_modules: the rtrs* and rnbd* modules still loaded, users first (the
# order to unload them in).
our_modules() {
	local name _size users _rest
	while read -r name _size users _rest; do
		case $name in rtrs_* | rnbd_*) echo "$users $name" ;; esac
	done </proc/modules | sort -n | cut -d' ' -f2
}

# kmemleak_scan N [PAUSE]: N kmemleak scans, PAUSE seconds apart (default
# none); prints how long each took (a scan of a guest takes a while under
# emulation).
kmemleak_scan() {
	local i t
	for ((i = 1; i <= $1; i++)); do
		[ "$i" = 1 ] || [ "${2:-0}" = 0 ] || sleep "$2"
		t=$SECONDS
		echo scan >/sys/kernel/debug/kmemleak || return 1
		echo "kmemleak scan $i/$1 took $((SECONDS - t)) s"
	done
}

# tracefs_up: tracefs mounted at /sys/kernel/tracing, with task names not
# recorded. Enabling an event with names recorded (options/record-cmd) also
# hooks sched_switch, which patches __schedule's tracepoint while both CPUs
# run through it, and under TCG that patch can trap: a 7.2 guest of CI died
# of it ("Oops: int3" at __schedule+0x2a7), and toggling an event under load
# does it within seconds (on 6.1: a soft lockup in the patch's IPIs). With
# names off only the sites of our own events (cold ones) are patched.
tracefs_up() {
	local t=/sys/kernel/tracing
	mountpoint -q $t || mount -t tracefs tracefs $t || return 1
	echo 0 >$t/options/record-cmd
}

# nap SECONDS: a pause without starting a process (a read with a time
# limit on a pipe that nobody writes: this shell holds both of its ends).
# A process costs 0.15-0.2 s on the debug kernel under TCG, more than the
# pause itself; the suites' waits poll with it.
exec {lib_nap_fd}<> <(:)
nap() { read -r -t "$1" -u "$lib_nap_fd" _ 2>/dev/null || true; }

# fresh_dir DIR: DIR made anew, for a suite's files. The waits read the
# clients' output files there, and a file left by an earlier suite of the
# boot would answer them at once.
fresh_dir() { rm -rf "$1" && mkdir -p "$1"; }

# wait_for SECONDS COMMAND [ARGS...]: true once COMMAND succeeds, tried
# every 0.1 s; false after SECONDS * 10 tries. The bound counts tries, not
# the clock: on a slow (emulated, debug) guest each try takes longer, and
# so does the whole wait, as it always has for the suites' waits below.
wait_for() {
	local wait_try wait_tries=$(($1 * 10))
	shift
	for ((wait_try = 0; wait_try < wait_tries; wait_try++)); do
		"$@" && return 0
		nap 0.1
	done
	return 1
}

# has_line FILE REGEX: a line of FILE matches REGEX (extended, as grep -E;
# false, quietly, while FILE does not exist). What the waits poll, so a
# file of up to 1,000 lines is read by the shell itself (see nap); grep
# reads a longer one.
has_line() {
	local line lines
	[ -r "$1" ] || return 1
	mapfile -t -n 1000 lines <"$1"
	if [ ${#lines[@]} -ge 1000 ]; then
		grep -Eq -- "$2" "$1"
		return
	fi
	for line in "${lines[@]}"; do
		[[ $line =~ $2 ]] && return 0
	done
	return 1
}
# pid_ended PID: PID no longer runs.
pid_ended() { ! kill -0 "$1" 2>/dev/null; }

# held_zero SECONDS: true once rtrs-server holds nothing (its debugfs file
# "held": sessions, paths, connections, MRs, chunk pages all 0); else
# prints what it still holds. Mounts debugfs if needed.
held_zero() {
	local f=/sys/kernel/debug/rtrs-server/held
	mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
	[ -r "$f" ] || { echo "no $f"; return 1; }
	# shellcheck disable=SC2016 # awk's own $2
	wait_for "$1" awk '$2 != 0 { bad = 1 } END { exit bad }' "$f" && return 0
	echo "rtrs-server still holds: $(tr '\n' ' ' <"$f")"
	return 1
}

# wait_gone PATH SECONDS: true once PATH no longer exists.
wait_gone() { wait_for "$2" test ! -e "$1"; }

# wait_exists PATH SECONDS: true once PATH exists.
wait_exists() { wait_for "$2" test -e "$1"; }

# wait_line FILE REGEX SECONDS: true once a line of FILE matches.
wait_line() { wait_for "$3" has_line "$1" "$2"; }

# wait_line_while FILE REGEX SECONDS PID: true once a line of FILE matches;
# false when PID ends first (give it a moment to print its last line) or
# after SECONDS.
wait_line_while() {
	wait_for "$3" line_or_end "$1" "$2" "$4" || return 1
	has_line "$1" "$2" && return 0
	nap 0.2
	has_line "$1" "$2"
}
# line_or_end FILE REGEX PID: a line of FILE matches, or PID has ended.
line_or_end() { has_line "$1" "$2" || pid_ended "$3"; }

# wait_log STRING COUNT SECONDS: true once the kernel log has COUNT lines
# with STRING.
wait_log() { wait_for "$3" log_has "$1" "$2"; }
# log_has STRING COUNT: the kernel log has COUNT lines with STRING now.
log_has() { [ "$(log_count "$1")" -ge "$2" ]; }

# paths_up_or_end FILE N PID: FILE (rtrs-client's output: a " up: " line
# for each path up) says N paths are up, or PID has ended.
paths_up_or_end() { [ "$(grep -c ' up: ' "$1")" -ge "$2" ] || pid_ended "$3"; }

# wait_pid PID SECONDS: true once PID has ended (it is then reaped by the
# caller's wait); false if it still runs.
wait_pid() { wait_for "$2" pid_ended "$1"; }

# rxe_up: the test network. dummy0 carries 10.77.0.1 (server), 10.77.0.2
# (client), fd00::1 and fd00::2 and backs rxe0; dummy1 carries 10.78.0.1 and
# 10.78.0.2 and backs rxe1. Also loads the userspace RDMA CM.
rxe_up() {
	local i
	modprobe -a rdma_rxe rdma_cm rdma_ucm ib_uverbs || return 1
	# numdummies=0: 5.10's dummy makes a dummy0 of its own when it loads.
	modprobe dummy numdummies=0 || return 1
	ip link set lo up
	for i in 0 1; do
		ip link add dummy$i type dummy || return 1
		ip addr add 10.$((77 + i)).0.1/24 dev dummy$i
		ip addr add 10.$((77 + i)).0.2/24 dev dummy$i
		ip link set dummy$i up
		rdma link add rxe$i type rxe netdev dummy$i || return 1
	done
	ip -6 addr add fd00::1/64 dev dummy0 nodad
	ip -6 addr add fd00::2/64 dev dummy0 nodad
	# The rxe GID tables follow the addresses a moment later: wait for the
	# last ones added (10.78.0.2 on rxe1, fd00::2 on rxe0).
	wait_gids rxe1:0000:0000:0000:0000:0000:ffff:0a4e:0002 \
		rxe0:fd00:0000:0000:0000:0000:0000:0000:0002 && return 0
	echo "rxe_up: the GID tables did not get the addresses in 10 s" >&2
	return 1
}

# wait_gids DEV:GID...: true once port 1 of each rxe device DEV has GID (as
# sysfs spells it, e.g. 0000:...:ffff:0a4d:0002 for 10.77.0.2) in its table;
# false after 10 s.
wait_gids() { wait_for 10 gids_there "$@"; }
# gids_there DEV:GID...: each is in its device's table now.
gids_there() {
	local want
	for want in "$@"; do
		grep -qs "${want#*:}" /sys/class/infiniband/"${want%%:*}"/ports/1/gids/* || return 1
	done
}

# gids_back: rxe0 and rxe1 have their IPv4 GIDs (10.77.0.2, 10.78.0.2)
# again, after a device was added back; false after 10 s.
gids_back() {
	wait_gids rxe1:0000:0000:0000:0000:0000:ffff:0a4e:0002 rxe0:0000:0000:0000:0000:0000:ffff:0a4d:0002
}

# rxe_counters DEV: name=value of the device's hw counters (retransmissions,
# retry and RNR counts, ...), on one line; they tell a run that met
# soft-RoCE's retransmission trouble.
rxe_counters() {
	local f
	for f in /sys/class/infiniband/$1/ports/1/hw_counters/*; do
		[ -e "$f" ] && printf '%s=%s ' "${f##*/}" "$(cat "$f")"
	done
	echo
}

# --- upstream rnbd-client ------------------------------------------------------
# map SESSION DEVICE [PATHS...]: maps DEVICE (the server's) with rnbd-client
# over PATHS ("path=ip:SRC@ip:DST" words; default the one path over rxe0);
# prints the new /dev/rnbdN once it is there; false if the map is refused
# or no new device comes within 10 s.
map() {
	local sess=$1 dev=$2 before
	shift 2
	[ $# -gt 0 ] || set -- path=ip:10.77.0.2@ip:10.77.0.1
	before=$(rnbd_devices)
	echo "sessname=$sess $* device_path=$dev" >/sys/devices/virtual/rnbd-client/ctl/map_device || return 1
	wait_for 10 new_rnbd "$before"
}
# rnbd_devices: the rnbd block devices there are, sorted.
rnbd_devices() {
	local d
	for d in /sys/block/*rnbd*; do
		[ -e "$d" ] && echo "${d##*/}"
	done | sort
}
# new_rnbd BEFORE: prints /dev/NAME of the devices not in BEFORE (a list
# from rnbd_devices); false when there is none.
new_rnbd() {
	local new
	new=$(comm -13 <(echo "$1") <(rnbd_devices))
	[ -n "$new" ] && echo "/dev/$new"
}

if [ -n "$lib_missing" ]; then
	echo "test/guest/lib.sh: cannot read $lib_missing" >&2
	return 2
fi
