#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side of the KUnit test (ctest: debug.kunit): builds rtrs-server-kunit.ko
# against the cached debug kernel (tools/debug-kernel/build.sh) and runs
# guest-run.sh in a guest booted on that kernel.
#
# Usage: test/kunit/run.sh [--src TOP] [--module-dir DIR] [--out DIR]
#   --src TOP         sources to test (default: this checkout); see build.sh
#   --module-dir DIR  where the module is built (default: build/kunit/module)
#   --out DIR         run-guest results folder (default: build/vm/kunit-debug)
# Both folders must be visible in the guest (the host's / is; not /run).
# Exit status: run-guest's (0 pass, 1 a test failed or leaked, 3 a kernel
# report such as KASAN or lockdep, 124 timeout, 125 guest failure).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
src_args=()
moddir=$top/build/kunit/module
out=$top/build/vm/kunit-debug
while [ $# -gt 0 ]; do
	case $1 in
	--src) src_args=(--src "$2"); shift 2 ;;
	--module-dir) moddir=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	*) echo "usage: $0 [--src TOP] [--module-dir DIR] [--out DIR]" >&2; exit 2 ;;
	esac
done

if ! env=$("$top/tools/debug-kernel/build.sh" --check); then
	echo "FAIL: the debug kernel is not built: run tools/debug-kernel/build.sh (~20 min)" >&2
	exit 1
fi
eval "$env"
echo "debug kernel $RTRS_DEBUG_KERNEL_VERSION: $RTRS_DEBUG_KERNEL_BZIMAGE"

"$here/build.sh" "${src_args[@]}" "$RTRS_DEBUG_KERNEL_BUILD" "$moddir"
moddir=$(cd "$moddir" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/kunit" "$out"/kmemleak*.txt "$out"/kunit-*.txt "$out/kernel-reports.txt"

# 1 GB: a kmemleak scan takes about twice as long with 2 GB.
rc=0
"$top/tools/vm/run-guest" --kernel "$RTRS_DEBUG_KERNEL_BZIMAGE" \
	--modules-root "$RTRS_DEBUG_KERNEL_MODROOT" --kver "$RTRS_DEBUG_KERNEL_VERSION" \
	--out "$out" --timeout "${RTRS_KUNIT_TIMEOUT:-900}" --mem 1024 \
	-- "$here/guest-run.sh" "$moddir/rtrs-server-kunit.ko" "$out" || rc=$?
if [ -s "$out/kunit-summary.txt" ]; then
	echo "kunit: $(tail -n 1 "$out/kunit-summary.txt")"
else
	echo "kunit: no results (see $out/console.log)"
	[ $rc = 0 ] && rc=1
fi
echo "results: $out (exit $rc)"
exit $rc
