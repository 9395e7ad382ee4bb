#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Builds the userspace programs the guest suites run (rtrs-client, the ABI
# suite, rtrs-srv) with the compiler and libraries of the system it runs on:
# tools/roots/in-root.sh runs it in a Debian release's root, so that they
# run in that release's guest. Warnings are errors (as in the full build).
# Usage: build-tools.sh OUTDIR     (OUTDIR/rtrs-client, OUTDIR/rtrs_abi_tests,
#                                   OUTDIR/rtrs-srv/rtrs-srv)
set -eu
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
echo "building the guest's tools with $(g++ --version | head -n 1), $(cmake --version | head -n 1)"
cmake -S "$top" -B "$out" -DRTRS_TOOLS_ONLY=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$out.configure.log" 2>&1 ||
	{ cat "$out.configure.log"; echo "FAIL: configuring the tools failed" >&2; exit 1; }
cmake --build "$out" -j"$(nproc)" --target rtrs-client rtrs_abi_tests rtrs-srv
ls -l "$out/tools/rtrs-client/rtrs-client" "$out/test/abi/rtrs_abi_tests" "$out/tools/rtrs-srv/rtrs-srv"
