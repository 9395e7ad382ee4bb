#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Builds the core and the host unit tests with clang and -Wthread-safety
# -Werror (test/thread-safety/CMakeLists.txt) in BUILD_DIR: fails on any
# warning of the analysis, that is on a member touched without the lock
# that guards it, or a function called without the lock it needs.
#
#   test/thread-safety/run.sh BUILD_DIR
#
# The annotations: rt/thread_safety.h (the macros), core/lock.h (Lock,
# Guard), and the core's headers.
set -u

if [ $# -ne 1 ]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi
build=$1
src=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$build" || exit 1
build=$(cd "$build" && pwd)

start=$(date +%s)
if ! CC=clang CXX=clang++ cmake -S "$src" -B "$build" >"$build/configure.log" 2>&1; then
	cat "$build/configure.log" >&2
	echo "thread-safety: configuring failed (clang installed?)" >&2
	exit 1
fi
# -k: every finding, not only the first file's.
if ! nice cmake --build "$build" -j2 -- -k >"$build/build.log" 2>&1; then
	# The analysis' findings first, then the end of the log.
	grep -E 'warning:|error:' "$build/build.log" | sort -u | head -n 60 >&2
	echo "--- last lines of $build/build.log:" >&2
	tail -n 20 "$build/build.log" >&2
	echo "thread-safety: FAILED: the build with clang -Wthread-safety -Werror (full log: $build/build.log)" >&2
	exit 1
fi
echo "thread-safety: the core and the unit tests build clean with clang -Wthread-safety -Werror ($(($(date +%s) - start)) s)"
