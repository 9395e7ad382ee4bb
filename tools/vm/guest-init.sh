#!/bin/busybox sh
# Stage 1 of the run-guest VM: this file is /init of the tiny initramfs built
# by tools/vm/run-guest.  It runs under busybox sh as PID 1 and:
#   1. loads the few modules needed to reach the host filesystem
#      (listed, in order, in /modules/order),
#   2. mounts the host's / (9p tag "hostroot", read-only; or the root tree
#      run-guest --root shares under that tag),
#   3. stacks a tmpfs-backed overlay on top so the guest can write, and
#      does the same for each host folder run-guest --bind shares (9p tags
#      "rtrsbindN", at the path rtrsvm.bindN= gives),
#   4. sets up the pseudo filesystems, /run, lo, the hostname and the
#      results folder (9p tag "rtrsout", mounted at rtrsvm.out=) in it,
#   5. switch_root's into it and execs stage 2 (guest-stage2.sh, run by the
#      host's bash), whose path is given as rtrsvm.stage2=.
# Kernel command line values are percent-encoded by run-guest.
# A failure here prints an error and powers the VM off without the status
# marker; run-guest then reports that the guest did not report a status.

/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin /proc /sys /dev
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
# Tells run-guest's boot-stall watch that /init runs, whatever the
# loglevel (the kernel's own "Run /init" line is info level).
echo "rtrsvm-init: started"
mount -t proc proc /proc
mount -t sysfs sysfs /sys

die() {
	echo "rtrsvm-init: FATAL: $*"
	sync
	echo o >/proc/sysrq-trigger 2>/dev/null || poweroff -f
	# Never let PID 1 exit (that panics the kernel); wait for power-off.
	while :; do sleep 1; done
}

# Decode a percent-encoded kernel command line value.
decode() {
	printf '%b' "$(printf '%s' "$1" | sed 's/%\([0-9A-Fa-f][0-9A-Fa-f]\)/\\x\1/g')"
}

stage2='' out='' rootcache=loose
set -f
# shellcheck disable=SC2013 # words, not lines
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	rtrsvm.stage2=*) stage2=$(decode "${arg#rtrsvm.stage2=}") ;;
	rtrsvm.out=*) out=$(decode "${arg#rtrsvm.out=}") ;;
	rtrsvm.rootcache=*) rootcache=${arg#rtrsvm.rootcache=} ;;
	esac
done
set +f
[ -n "$stage2" ] || die "rtrsvm.stage2= missing from the kernel command line"

# Each line: "NAME.ko" (required) or "NAME.ko optional".
if [ -f /modules/order ]; then
	while read -r mod opt; do
		[ -n "$mod" ] || continue
		name=${mod##*/}
		name=${name%.ko}
		# Already present (e.g. loaded as a dependency or builtin)?
		[ -d "/sys/module/$(echo "$name" | tr - _)" ] && continue
		if ! insmod "/modules/$mod"; then
			[ "$opt" = optional ] || die "insmod $mod failed"
		fi
	done </modules/order
fi

mkdir -p /lower /rw /newroot
p9opts=trans=virtio,version=9p2000.L,msize=262144
# The host root is mounted with cache=loose: the guest keeps what it read in
# its page cache, which makes exec and imports 2-3x faster under TCG.  The
# catch: host-side changes made while the guest runs may go unseen.  Boot
# with rtrsvm.rootcache=none (run-guest --append) to turn it off.
# The virtio device may take a moment to show up after virtio_pci loads.
tries=0
until mount -t 9p -o "$p9opts,ro,cache=$rootcache" hostroot /lower 2>/dev/null; do
	tries=$((tries + 1))
	if [ "$tries" -ge 50 ]; then
		mount -t 9p -o "$p9opts,ro,cache=$rootcache" hostroot /lower # shows the error
		die "cannot mount the host root (9p tag hostroot)"
	fi
	sleep 0.1
done
mount -t tmpfs -o mode=0755 rwlayer /rw || die "cannot mount tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work \
	rootfs /newroot || die "cannot mount the overlay root"

# The host's folders bound into another release's root, outer ones first:
# read-only 9p, each under an overlay of its own (writes stay in the guest).
set -f
n=0
# shellcheck disable=SC2013 # words, not lines
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	rtrsvm.bind[0-9]*=*) ;;
	*) continue ;;
	esac
	tag=${arg%%=*}
	tag=rtrsbind${tag#rtrsvm.bind}
	dir=$(decode "${arg#*=}")
	mkdir -p "/binds/$n/lower" "/rw/bind$n/upper" "/rw/bind$n/work" "/newroot$dir" ||
		die "cannot make the mount points of $dir"
	mount -t 9p -o "$p9opts,ro,cache=$rootcache" "$tag" "/binds/$n/lower" ||
		die "cannot mount the host's $dir (9p tag $tag)"
	mount -t overlay -o "lowerdir=/binds/$n/lower,upperdir=/rw/bind$n/upper,workdir=/rw/bind$n/work" \
		"bind$n" "/newroot$dir" || die "cannot mount the overlay of $dir"
	n=$((n + 1))
done
set +f

[ -x /newroot/bin/bash ] || die "no /bin/bash in the host root"
[ -f "/newroot$stage2" ] || die "stage 2 script $stage2 not found in the host root"

# Hand the pseudo filesystems over to the new root.
for fs in dev proc sys; do
	mount --move "/$fs" "/newroot/$fs" || die "cannot move /$fs"
done

# Set up the rest of the guest here: busybox from the initramfs is much faster
# under TCG than the host's dynamically linked tools over 9p.
# guest-stage2.sh checks each of these and fills in whatever is missing.
cd /newroot || die "cd /newroot"
mkdir -p dev/pts dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts dev/pts
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs dev/shm
ln -sfn /proc/self/fd dev/fd
ln -sfn /proc/self/fd/0 dev/stdin
ln -sfn /proc/self/fd/1 dev/stdout
ln -sfn /proc/self/fd/2 dev/stderr
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs run
mkdir -p run/lock run/shm
has_fs() { grep -qw "$1" proc/filesystems; }
has_fs debugfs && mount -t debugfs debugfs sys/kernel/debug
has_fs tracefs && [ -d sys/kernel/tracing ] && mount -t tracefs tracefs sys/kernel/tracing
has_fs configfs && [ -d sys/kernel/config ] && mount -t configfs configfs sys/kernel/config
echo rtrsvm >proc/sys/kernel/hostname
ip link set lo up
# The results folder (writable 9p share), at the same path as on the host.
if [ -n "$out" ]; then
	mkdir -p "/newroot$out" &&
		mount -t 9p -o "$p9opts" rtrsout "/newroot$out"
fi
cd /

# shellcheck disable=SC2093 # only reached if switch_root fails
exec switch_root /newroot /bin/bash "$stage2"
die "switch_root failed"
