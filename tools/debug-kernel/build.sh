#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds the debug kernel for rtrs-server tests (KASAN, lockdep, kmemleak,
# debugobjects, KUnit) from Debian's linux-source-6.1, and caches it outside
# the clone.  A second run with the same source and config only prints the
# paths.
#
# Usage: build.sh [--check | --print-key | --help]
#   (none)       build if needed, then print the paths
#   --check      print the paths and exit 0 if the kernel is already built;
#                exit 1 (building nothing) if it is not
#   --print-key  print the cache key and exit
#
# Environment:
#   RTRS_DEBUG_KERNEL_CACHE   cache folder (default ~/.cache/rtrs-debug-kernel)
#   RTRS_DEBUG_KERNEL_SOURCE  kernel source tarball
#                             (default /usr/src/linux-source-6.1.tar.xz)
#   RTRS_DEBUG_KERNEL_JOBS    make -j (default 2; the machine is shared)
#   RTRS_DEBUG_KERNEL_VARIANT a variant: kcsan (config.fragment without its
#                             KASAN lines, then config-kcsan.fragment: KCSAN
#                             cannot share a kernel with KASAN); a kernel
#                             of its own in the cache (KEY has the variant)
#
# Cache layout (KEY = <series>-<source version>-<hash of the config recipe>):
#   src/<source key>/                  the unpacked source tree (shared by all
#                                      configs of one source version)
#   KEY/build/                         the O= build folder: .config, vmlinux,
#                                      Module.symvers, headers and scripts for
#                                      out-of-tree modules (make -C KEY/build M=...)
#   KEY/bzImage                        the kernel image
#   KEY/modroot/lib/modules/<kver>/    modules_install output (for run-guest
#                                      --modules-root KEY/modroot)
#   KEY/env                            the paths below, as shell assignments
#   KEY/build.log, KEY/build-seconds   the build's output and duration
#   KEY/done                           written last: the kernel is complete
#
# Output (stdout, last lines; also in KEY/env):
#   RTRS_DEBUG_KERNEL_BZIMAGE=...  RTRS_DEBUG_KERNEL_BUILD=...
#   RTRS_DEBUG_KERNEL_MODROOT=...  RTRS_DEBUG_KERNEL_VERSION=...
#   RTRS_DEBUG_KERNEL_DIR=...
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
fragment=$here/config.fragment
cache=${RTRS_DEBUG_KERNEL_CACHE:-$HOME/.cache/rtrs-debug-kernel}
tarball=${RTRS_DEBUG_KERNEL_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
jobs=${RTRS_DEBUG_KERNEL_JOBS:-2}
mode=build

case "${1:-}" in
'') ;;
--check) mode=check ;;
--print-key) mode=key ;;
-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
*) echo "build.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
esac

msg() { printf '[debug-kernel] %s\n' "$*" >&2; }
die() { msg "error: $*"; exit 1; }
elapsed() { local s=$1; printf '%dm%02ds' $((s / 60)) $((s % 60)); }

[ -r "$tarball" ] || die "no kernel source at $tarball (apt-get install linux-source-6.1)"
[ -r "$fragment" ] || die "missing $fragment"
variant=${RTRS_DEBUG_KERNEL_VARIANT:-}
if [ -n "$variant" ]; then
	vfragment=$here/config-$variant.fragment
	[ -r "$vfragment" ] || die "no variant $variant ($vfragment)"
	mkdir -p "$cache"
	grep -v -E '^(# )?CONFIG_KASAN' "$fragment" >"$cache/config-$variant.fragment.tmp"
	cat "$vfragment" >>"$cache/config-$variant.fragment.tmp"
	mv -f "$cache/config-$variant.fragment.tmp" "$cache/config-$variant.fragment"
	fragment=$cache/config-$variant.fragment
fi

# --- the cache key ---------------------------------------------------------
# The source version: Debian's package version when the tarball is the
# packaged one, else the tarball's name, size and time.  The config key: the
# fragment and the part of this script that turns it into a .config.
series=$(basename "$tarball" .tar.xz)
series=${series#linux-source-}
srcver=$(dpkg-query -S "$tarball" 2>/dev/null | cut -d: -f1 | head -n 1 || true)
[ -n "$srcver" ] && srcver=$(dpkg-query -W -f='${Version}' "$srcver" 2>/dev/null || true)
if [ -z "$srcver" ]; then
	srcver=$(stat -L -c '%s-%Y' "$tarball")
fi
srcver=$(printf '%s' "$srcver" | tr -c 'A-Za-z0-9.+_\n-' '_')
recipe_hash=$( {
	printf 'source=%s %s\n' "$tarball" "$(stat -L -c '%s %Y' "$tarball")"
	cat "$fragment"
	sed -n '/^# --- recipe: begin/,/^# --- recipe: end/p' "$0"
} | sha256sum | cut -c1-12)
srckey=linux-$series-$srcver
key=$series${variant:+-$variant}-$srcver-$recipe_hash
[ "$mode" = key ] && { echo "$key"; exit 0; }

srcdir=$cache/src/$srckey
dir=$cache/$key
build=$dir/build
modroot=$dir/modroot

print_paths() {
	cat "$dir/env"
}

if [ -e "$dir/done" ] && [ -s "$dir/bzImage" ] && [ -s "$dir/env" ]; then
	msg "cached: $dir"
	print_paths
	exit 0
fi
if [ "$mode" = check ]; then
	msg "not built yet: $dir (run $0)"
	exit 1
fi

mkdir -p "$cache/src" "$dir"
# One build per key at a time (ctest -j, two shells): the second waits.
exec 9>"$dir.lock"
if ! flock -n 9; then
	msg "another build.sh is building $key; waiting for it"
	flock 9
	if [ -e "$dir/done" ]; then print_paths; exit 0; fi
fi

t_start=$(date +%s)

# --- unpack the source, once per source version -----------------------------
if [ ! -e "$srcdir/.rtrs-unpacked" ]; then
	msg "unpacking $tarball into $srcdir"
	rm -rf "$srcdir.tmp"
	mkdir -p "$srcdir.tmp"
	# At the caller's priority: at nice 19 beside the host's builds this
	# took 8 min once (13 s on an idle machine).
	tar -xJf "$tarball" -C "$srcdir.tmp" --strip-components=1
	touch "$srcdir.tmp/.rtrs-unpacked"
	rm -rf "$srcdir"
	mv "$srcdir.tmp" "$srcdir"
	msg "unpacked in $(elapsed $(($(date +%s) - t_start)))"
fi

# nice 10: below the guests (nice 0), whose suites time the server, above
# the host's long tests (nice 19: CMakeLists.txt, "scheduling").
kmake() { nice -n 10 make -C "$srcdir" O="$build" "$@"; }

# --- recipe: begin (this part is in the cache key) ---------------------------
# allnoconfig with the fragment as its preset: the kernel has what the
# fragment asks for (and what that selects), nothing else.
# The module signing key: the kernel's build makes certs/signing_key.pem
# (openssl) from certs/x509.genkey when there is none, and trusts its
# certificate; a genkey of ours names it as a test key and makes it RSA 2048
# (the kernel's default is 4096: slower to check under TCG, for nothing).
# Made anew with each build, kept in the build folder, nobody's secret.
configure() {
	mkdir -p "$build/certs"
	cat >"$build/certs/x509.genkey" <<-'GENKEY'
		[ req ]
		default_bits = 2048
		distinguished_name = req_distinguished_name
		prompt = no
		string_mask = utf8only
		x509_extensions = myexts

		[ req_distinguished_name ]
		CN = rtrs-server debug kernel test key (not a secret)

		[ myexts ]
		basicConstraints=critical,CA:FALSE
		keyUsage=digitalSignature
		subjectKeyIdentifier=hash
		authorityKeyIdentifier=keyid
	GENKEY
	kmake -s KCONFIG_ALLCONFIG="$fragment" allnoconfig
}
# --- recipe: end ---------------------------------------------------------------

# Every option of the fragment must have the value written there: Kconfig
# drops an option whose dependencies are not met without a word.
check_config() {
	local line opt bad=0
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			grep -qxF -- "$line" "$build/.config" ||
				{ msg "config: wanted $line, got: $(grep -E "^(# )?${line%%=*}[= ]" "$build/.config" || echo unset)"; bad=1; }
			;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			if grep -q "^$opt=" "$build/.config"; then
				msg "config: wanted $opt off, got: $(grep "^$opt=" "$build/.config")"
				bad=1
			fi
			;;
		esac
	done <"$fragment"
	[ $bad = 0 ] || die "the .config does not match $fragment (see above)"
}

if [ ! -e "$build/.config" ] || [ ! -e "$dir/configured" ]; then
	msg "configuring $build"
	configure
	check_config
	touch "$dir/configured"
else
	check_config
fi

# --- build, with a progress line every minute -----------------------------------
log=$dir/build.log
msg "building bzImage and modules: nice -n 10 make -j$jobs (log: $log)"
msg "a first build takes about 8 minutes on 2 idle cores, longer beside other jobs"
t_build=$(date +%s)
kmake -j"$jobs" all >"$log" 2>&1 &
make_pid=$!
trap 'kill -- $make_pid 2>/dev/null || true' INT TERM
while kill -0 $make_pid 2>/dev/null; do
	for _ in $(seq 60); do
		kill -0 $make_pid 2>/dev/null || break
		sleep 1
	done
	kill -0 $make_pid 2>/dev/null || break
	n=$(grep -c '^  CC' "$log" || true)
	last=$(grep -E '^  (CC|LD|AR|AS)' "$log" | tail -n 1 | sed 's/^ *//' || true)
	msg "$(elapsed $(($(date +%s) - t_build))): $n objects compiled; now: $last"
done
rc=0
wait $make_pid || rc=$?
trap - INT TERM
if [ $rc != 0 ]; then
	grep -E -B2 -A8 'error|Error' "$log" | tail -n 60 >&2 || tail -n 60 "$log" >&2
	die "kernel build failed (exit $rc); full log: $log"
fi
build_s=$(($(date +%s) - t_build))
msg "kernel built in $(elapsed $build_s)"

kver=$(cat "$build/include/config/kernel.release")

# --- install -------------------------------------------------------------------
msg "installing modules into $modroot"
rm -rf "$modroot"
kmake -s INSTALL_MOD_PATH="$modroot" modules_install >>"$log" 2>&1 ||
	die "modules_install failed; see $log"
moddir=$modroot/lib/modules/$kver
[ -d "$moddir/kernel" ] || die "modules_install left no $moddir/kernel"
# modules_install signed the kernel's modules with the test key
# (MODULE_SIG_ALL): a boot with module.sig_enforce=1 loads them.
for f in "$build/certs/signing_key.pem" "$build/certs/signing_key.x509"; do
	[ -s "$f" ] || die "the build made no $f"
done
unsigned=$(find "$moddir/kernel" -name '*.ko' | while read -r ko; do
	tail -c 28 "$ko" | cmp -s - <(printf '~Module signature appended~\n') || echo "$ko"
done)
[ -z "$unsigned" ] || die "modules_install left unsigned modules: $unsigned"
# The usual links, so that tools that look for the headers through the
# modules folder find the build folder.
ln -sfn "$build" "$moddir/build"
ln -sfn "$srcdir" "$moddir/source"
cp -f "$build/arch/x86/boot/bzImage" "$dir/bzImage.tmp"
mv -f "$dir/bzImage.tmp" "$dir/bzImage"
cp -f "$fragment" "$dir/config.fragment"
echo "$build_s" >"$dir/build-seconds"

cat >"$dir/env" <<EOF
RTRS_DEBUG_KERNEL_DIR=$dir
RTRS_DEBUG_KERNEL_BZIMAGE=$dir/bzImage
RTRS_DEBUG_KERNEL_BUILD=$build
RTRS_DEBUG_KERNEL_MODROOT=$modroot
RTRS_DEBUG_KERNEL_VERSION=$kver
EOF
touch "$dir/done"
msg "done in $(elapsed $(($(date +%s) - t_start))) (compile $(elapsed $build_s))"
print_paths
