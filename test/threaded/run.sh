#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The ThreadSanitizer stress test (stress.cpp): builds the core with the
# threaded host environment (thread_env.h) and clang's -fsanitize=thread in
# BUILD_DIR, and runs it; fails on a data race (TSan halts on its first
# report), a violation of the environment's rules, a request not answered,
# a warning of the core or anything left over.
#
#   test/threaded/run.sh BUILD_DIR [ROUNDS]
set -u
if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [ROUNDS]" >&2
	exit 2
fi
build=$1
rounds=${2:-8}
src=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$build" || exit 1
start=$(date +%s)
if ! CC=clang CXX=clang++ cmake -S "$src" -B "$build" -DRTRS_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	>"$build/configure.log" 2>&1; then
	cat "$build/configure.log" >&2
	echo "tsan-stress: configuring failed (clang installed?)" >&2
	exit 1
fi
if ! nice cmake --build "$build" -j2 --target rtrs_tsan_stress >"$build/build.log" 2>&1; then
	grep -E 'error' "$build/build.log" | head -n 40 >&2
	echo "tsan-stress: FAILED: the build (full log: $build/build.log)" >&2
	exit 1
fi
built=$(date +%s)
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" "$build/rtrs_tsan_stress" --rounds "$rounds"
rc=$?
echo "tsan-stress: built in $((built - start)) s, ran in $(($(date +%s) - built)) s"
exit $rc
