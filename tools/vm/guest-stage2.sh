#!/bin/bash
# Stage 2 of the run-guest VM.  guest-init.sh (busybox, in the initramfs)
# switch_root's into an overlay of the host's / and execs this file with the
# host's bash as PID 1.  It:
#   - sets up the usual pseudo filesystems and a fresh /run (/tmp is the
#     host's, seen through the overlay: writable, changes stay in the guest),
#   - mounts the writable results folder (9p tag "rtrsout") at the same
#     absolute path as on the host,
#   - optionally bind-mounts another kernel's modules over /lib/modules/VER,
#   - leaves libibverbs only the soft-RoCE providers (rxe, siw),
#   - runs the command script written by run-guest,
#   - with rtrsvm.kmemleak=1 (run-guest --kmemleak): clears what kmemleak
#     suspects before the command, unloads the rtrs/rnbd modules the command
#     left loaded, then scans twice and saves the report as kmemleak.txt,
#   - saves the kernel log, prints RTRSVM-EXIT-STATUS=<n> and powers off.
# Parameters come from the kernel command line (percent-encoded values):
#   rtrsvm.out=DIR rtrsvm.script=FILE rtrsvm.kver=VER rtrsvm.modroot=DIR

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C
umask 022

say() { echo "rtrsvm: $*"; }

power_off() {
	sync
	echo o >/proc/sysrq-trigger
	# PID 1 must never exit (the kernel would panic); wait for the power-off.
	sleep 20
	say "sysrq power-off did not happen, forcing"
	/bin/busybox poweroff -f
	while :; do sleep 1; done
}

fatal() {
	say "FATAL: $*"
	power_off
}

# is_mounted DIR (bash builtins only: every exec is slow under TCG)
is_mounted() {
	local _dev mp _rest
	while read -r _dev mp _rest; do
		# Mount points are octal-escaped there (space is \040).
		[[ $mp == *\\* ]] && printf -v mp '%b' "$mp"
		[ "$mp" = "$1" ] && return 0
	done </proc/self/mounts
	return 1
}

# mount_once FSTYPE SOURCE DIR [OPTIONS]
mount_once() {
	is_mounted "$3" && return 0
	[ -d "$3" ] || mkdir -p "$3"
	mount -t "$1" ${4:+-o "$4"} "$2" "$3"
}

has_fs() {
	local line
	while read -r line; do
		[ "${line##*[[:space:]]}" = "$1" ] && return 0
	done </proc/filesystems
	return 1
}

decode() {
	local v=${1//%/\\x}
	printf '%b' "$v"
}

# --- pseudo filesystems ----------------------------------------------------
# guest-init.sh normally did all of this already; only fill in the gaps.
[ -r /proc/self/mounts ] || mount -t proc proc /proc
mount_once sysfs sysfs /sys
mount_once devtmpfs devtmpfs /dev
mount_once devpts devpts /dev/pts gid=5,mode=620,ptmxmode=666
mount_once tmpfs tmpfs /dev/shm mode=1777,nosuid,nodev
for l in fd:/proc/self/fd stdin:/proc/self/fd/0 stdout:/proc/self/fd/1 stderr:/proc/self/fd/2; do
	[ -e "/dev/${l%%:*}" ] || ln -sfn "${l#*:}" "/dev/${l%%:*}"
done
mount_once tmpfs tmpfs /run mode=0755,nosuid,nodev
[ -d /run/lock ] || mkdir -p /run/lock /run/shm
if has_fs debugfs; then
	mount_once debugfs debugfs /sys/kernel/debug
fi
if has_fs tracefs && [ -d /sys/kernel/tracing ]; then
	mount_once tracefs tracefs /sys/kernel/tracing
fi
has_fs configfs || modprobe -q configfs 2>/dev/null
if has_fs configfs && [ -d /sys/kernel/config ]; then
	mount_once configfs configfs /sys/kernel/config
fi

# --- parameters ------------------------------------------------------------
out='' script='' kver='' modroot='' kmemleak=0
read -r -a cmdline </proc/cmdline
for arg in "${cmdline[@]}"; do
	case "$arg" in
	rtrsvm.out=*) out=$(decode "${arg#*=}") ;;
	rtrsvm.script=*) script=$(decode "${arg#*=}") ;;
	rtrsvm.kver=*) kver=$(decode "${arg#*=}") ;;
	rtrsvm.modroot=*) modroot=$(decode "${arg#*=}") ;;
	rtrsvm.kmemleak=*) kmemleak=${arg#*=} ;;
	esac
done
[ -n "$out" ] || fatal "rtrsvm.out= missing from the kernel command line"
[ -n "$script" ] || fatal "rtrsvm.script= missing from the kernel command line"

# --- results folder (writable, same path as on the host) -------------------
if ! is_mounted "$out"; then
	mkdir -p "$out" || fatal "cannot create $out"
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 rtrsout "$out" ||
		fatal "cannot mount the results folder at $out"
fi

# --- another kernel's modules ----------------------------------------------
if [ -n "$modroot" ]; then
	[ -n "$kver" ] || kver=$(uname -r)
	src="$modroot/lib/modules/$kver"
	if [ -d "$src" ]; then
		mkdir -p "/lib/modules/$kver"
		mount --bind "$src" "/lib/modules/$kver" ||
			fatal "cannot bind-mount $src"
	else
		say "warning: $src does not exist, keeping /lib/modules/$kver"
	fi
fi

# --- misc ------------------------------------------------------------------
read -r hn </proc/sys/kernel/hostname
[ "$hn" = rtrsvm ] || echo rtrsvm >/proc/sys/kernel/hostname
read -r lo_flags </sys/class/net/lo/flags
if ((!(lo_flags & 1))); then
	ip link set lo up 2>/dev/null || say "warning: could not bring lo up"
fi

# --- verbs providers -----------------------------------------------------------
# The guest's RDMA devices are soft-RoCE's. libibverbs loads every provider
# listed in /etc/libibverbs.d when a process first looks for devices (17
# libraries on Debian 12), which made each verbs program's start cost about
# 1.1 s more in the debug kernel's guest: 20 runs of ibv_devices took 33.5 s,
# and 10.5 s with rxe's provider alone. Only rxe's and siw's stay (a
# removal in the overlay: the host's folder is untouched).
provdir=/etc/libibverbs.d
if [ -e "$provdir/rxe.driver" ]; then
	drop=()
	for f in "$provdir"/*.driver; do
		case ${f##*/} in rxe.driver | siw.driver) ;; *) drop+=("$f") ;; esac
	done
	[ ${#drop[@]} -eq 0 ] || rm -f "${drop[@]}" ||
		say "warning: could not drop the verbs providers other than rxe's"
fi

# --- kmemleak ------------------------------------------------------------------
# kmemleak_scan N (N scans) and our_modules (the rtrs* and rnbd* modules
# still loaded, users first) are test/guest/lib.sh's, read from this
# checkout (which the guest sees at the same path, as it sees this file)
# when kmemleak is asked for.
leakfile=/sys/kernel/debug/kmemleak
# Before the command: what the kernel itself left (boot) is reported once,
# in kmemleak-boot.txt, and then marked as seen. No automatic scans: the
# result must come from the scans after the command.
kmemleak_before() {
	rm -f "$out/kmemleak.txt" "$out/kmemleak-boot.txt" "$out/kmemleak-unload.txt"
	[ -w "$leakfile" ] || { say "kmemleak: no $leakfile on $(uname -r)"; return 1; }
	echo scan=off >"$leakfile" || return 1
	kmemleak_scan 1 || return 1
	cat "$leakfile" >"$out/kmemleak-boot.txt"
	[ -s "$out/kmemleak-boot.txt" ] &&
		say "kmemleak: $(grep -c '^unreferenced object' "$out/kmemleak-boot.txt") suspect(s) from boot, cleared (kmemleak-boot.txt)"
	echo clear >"$leakfile"
}
# After the command: unload what it left of rtrs/rnbd (whatever it
# allocated must be freed by then), let the objects age past kmemleak's 5 s,
# scan twice (a stale pointer can hide an object from one scan).
kmemleak_after() {
	local m left tries=0
	: >"$out/kmemleak-unload.txt"
	while left=$(our_modules) && [ -n "$left" ] && [ $tries -lt 5 ]; do
		for m in $left; do
			rmmod "$m" 2>>"$out/kmemleak-unload.txt" &&
				echo "unloaded $m (left loaded by the command)" >>"$out/kmemleak-unload.txt"
		done
		tries=$((tries + 1))
	done
	left=$(our_modules)
	if [ -n "$left" ]; then
		say "kmemleak: cannot unload:" $left
		echo "still loaded:" $left >>"$out/kmemleak-unload.txt"
		return 1
	fi
	sleep 6
	kmemleak_scan 2 || return 1
	cat "$leakfile" >"$out/kmemleak.tmp" && mv "$out/kmemleak.tmp" "$out/kmemleak.txt"
	if [ -s "$out/kmemleak.txt" ]; then
		say "kmemleak: $(grep -c '^unreferenced object' "$out/kmemleak.txt") suspected leak(s), see kmemleak.txt"
	else
		say "kmemleak: no leaks after the command"
	fi
}

# --- the command -------------------------------------------------------------
cd / || true
[ -f "$script" ] || fatal "command script $script not found"
kmemleak_ok=1
if [ "$kmemleak" = 1 ]; then
	lib=${BASH_SOURCE[0]%/*}/../../test/guest/lib.sh
	# shellcheck source=test/guest/lib.sh
	if ! . "$lib"; then
		kmemleak_ok=0
		say "kmemleak: cannot read $lib"
	fi
	[ $kmemleak_ok = 0 ] || kmemleak_before || { kmemleak_ok=0; say "kmemleak: setup failed"; }
fi
env -i TERM=dumb /bin/bash --noprofile --norc "$script" </dev/null
status=$?
# An oops or a BUG taints the kernel with D: unloading modules could then
# wait forever for a lock the dead task held. No kmemleak result then (the
# run fails on the oops anyway, and on the missing result).
read -r tainted </proc/sys/kernel/tainted
if [ "$kmemleak" = 1 ] && [ $kmemleak_ok = 1 ] && ((tainted >> 7 & 1)); then
	say "kmemleak: the kernel oopsed (tainted $tainted): no unload, no scan"
elif [ "$kmemleak" = 1 ] && [ $kmemleak_ok = 1 ]; then
	kmemleak_after || say "kmemleak: the check after the command failed"
fi

dmesg >"$out/dmesg.txt" 2>&1 || say "warning: dmesg failed"
sync
printf '\nRTRSVM-EXIT-STATUS=%d\n' "$status"
umount "$out" 2>/dev/null
power_off
