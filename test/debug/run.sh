#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The guest tests again, on the debug kernel (tools/debug-kernel: KASAN,
# lockdep, kmemleak, debugobjects, list debugging, delayed kobject
# releases). ctest builds the modules (steps module, kunit-module), then
# boots once for every debug suite (step boot; debug.* in CMakeLists.txt);
# tools/debug-kernel/build.sh must have built the kernel first (ctest:
# debug.kernel).
#
# Every boot runs with module.sig_enforce=1 (a Secure Boot server's
# lockdown refuses unsigned modules the same way): the steps that build
# modules sign them with the kernel's test key (tools/debug-kernel/sign.sh).
#
# Usage: test/debug/run.sh BUILD_DIR STEP [ARGS...]
#   module                 build rtrs-server.ko and rtrs-null.ko against the
#                          debug kernel, in BUILD_DIR/debug/module, and sign
#                          them; for the signing suite also
#                          unsigned/rtrs-server.ko (the same module without
#                          its signature) and other-key/rtrs-server.ko
#                          (signed by a key the kernel does not trust)
#   kunit-module           build rtrs-server-kunit.ko (test/kunit/build.sh) in
#                          BUILD_DIR/debug/kunit, and sign it
#   boot --suites FILE --out DIR
#                          boot the debug kernel once and run the suites of
#                          FILE (tools/vm/boot-suites): what ctest's debug.boot
#                          does
# By hand, one suite a boot:
#   peers                  build the upstream peers against it (rnbd-server
#                          against our Module.symvers), in BUILD_DIR/debug/peers,
#                          and sign them
#   signing                test/debug/signing.sh (needs module)
#   smoke                  test/guest/smoke.sh
#   abi ABI_TESTS CLIENT   test/abi/guest-run.sh
#   io CLIENT Y|N          test/io/guest-run.sh
#   lifecycle CLIENT       test/fault/lifecycle.sh, rows 24, 28 and 29 (with
#                          RTRS_FAULT_LONG=1: 100 unloads and 100 device
#                          removals, FAILURES.md's counts; about 90 minutes)
#   interop Y|N            test/interop/rnbd-guest.sh (needs peers; by hand
#                          only, see README.md)
#   upstream-rnbd          test/debug/upstream-rnbd.sh: upstream's server and
#                          rnbd alone, no module of ours (needs peers)
# Each of these guest steps boots the debug kernel with run-guest --kmemleak: after the
# test, the rtrs/rnbd modules are unloaded and kmemleak must find nothing;
# any KASAN, lockdep, debugobjects or other kernel report fails the step.
# Results: BUILD_DIR/vm/debug-STEP[-ARG].
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

usage() { sed -n '/^# Usage:/,/^# Results:/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
build=$(mkdir -p "$1" && cd "$1" && pwd)
step=$2
shift 2

if ! env=$("$top/tools/debug-kernel/build.sh" --check); then
	echo "FAIL: the debug kernel is not built (ctest debug.kernel, or tools/debug-kernel/build.sh)" >&2
	exit 1
fi
eval "$env"
kver=$RTRS_DEBUG_KERNEL_VERSION
moddir=$build/debug/module
peersdir=$build/debug/peers
sign=$top/tools/debug-kernel/sign.sh
enforce=(--append module.sig_enforce=1)

# Guest memory: 1 GB keeps each kmemleak scan near 20 s under TCG.
guest() { # NAME TIMEOUT COMMAND...
	local name=$1 timeout=$2
	shift 2
	[ -f "$moddir/rtrs-server.ko" ] ||
		{ echo "FAIL: no $moddir/rtrs-server.ko (ctest debug.module)" >&2; exit 1; }
	exec "$top/tools/vm/run-guest" --kernel "$RTRS_DEBUG_KERNEL_BZIMAGE" \
		--modules-root "$RTRS_DEBUG_KERNEL_MODROOT" --kver "$kver" \
		--kmemleak --mem 1024 --timeout "$timeout" "${enforce[@]}" \
		--out "$build/vm/debug-$name" -- "$@"
}

case $step in
module)
	"$top/tools/build-module.sh" --kdir "$RTRS_DEBUG_KERNEL_BUILD" "$kver" "$moddir"
	"$sign" "$moddir/rtrs-server.ko" "$moddir/rtrs-null.ko"
	mkdir -p "$moddir/unsigned" "$moddir/other-key"
	"$sign" --unsigned "$moddir/rtrs-server.ko" "$moddir/unsigned/rtrs-server.ko"
	"$sign" --unsigned "$moddir/rtrs-server.ko" "$moddir/other-key/rtrs-server.ko"
	"$sign" --new-key "$build/debug/untrusted-key.pem" "$build/debug/untrusted-key.x509"
	"$sign" --key "$build/debug/untrusted-key.pem" "$build/debug/untrusted-key.x509" \
		"$moddir/other-key/rtrs-server.ko"
	;;
peers)
	"$top/tools/upstream/build-peers.sh" --kdir "$RTRS_DEBUG_KERNEL_BUILD" \
		--rnbd-server-against "$moddir" "$kver" "$peersdir"
	find "$peersdir" -name '*.ko' -exec "$sign" {} +
	;;
kunit-module)
	"$top/test/kunit/build.sh" "$RTRS_DEBUG_KERNEL_BUILD" "$build/debug/kunit"
	"$sign" "$build/debug/kunit/rtrs-server-kunit.ko"
	;;
boot)
	exec "$top/tools/vm/boot-suites" --kernel "$RTRS_DEBUG_KERNEL_BZIMAGE" \
		--modules-root "$RTRS_DEBUG_KERNEL_MODROOT" --kver "$kver" \
		--kmemleak --mem 1024 "${enforce[@]}" "$@" ;;
signing)
	[ $# -eq 0 ] || usage
	guest signing 900 "$here/signing.sh" "$moddir" ;;
smoke)
	[ $# -eq 0 ] || usage
	guest smoke 1500 "$top/test/guest/smoke.sh" "$moddir/rtrs-server.ko" ;;
abi)
	[ $# -eq 2 ] || usage
	guest abi 2400 "$top/test/abi/guest-run.sh" "$moddir" "$1" "$2" \
		"--gtest_output=xml:$build/vm/debug-abi/" ;;
io)
	[ $# -eq 2 ] || usage
	guest "io-$2" 2400 "$top/test/io/guest-run.sh" "$moddir" "$1" "$2" ;;
lifecycle)
	[ $# -eq 1 ] || usage
	guest lifecycle 7200 env RTRS_FAULT_LONG="${RTRS_FAULT_LONG:-}" \
		"$top/test/fault/lifecycle.sh" "$moddir" "$1" 24,28,29 3 2 192 30 ;;
interop)
	[ $# -eq 1 ] || usage
	guest "interop-$1" 2400 "$top/test/interop/rnbd-guest.sh" "$moddir" "$peersdir" "$1" ;;
upstream-rnbd)
	[ $# -eq 0 ] || usage
	guest upstream-rnbd 1200 "$top/test/debug/upstream-rnbd.sh" "$peersdir" ;;
*)
	usage ;;
esac
