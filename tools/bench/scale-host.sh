#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The host scaling benchmark (tools/bench/scale-host.cpp): builds the core
# with the threaded host environment (test/threaded) optimised, in
# BUILD_DIR (default build/threaded), and runs it with always_invalidate
# Y and N. Prints requests a second with one thread and with two, each
# driving its own connection of one path, and their ratio per round. Not
# a test; doc/benchmarks.md has the figures and how to read them.
#
#   tools/bench/scale-host.sh [BUILD_DIR]    # ROUNDS (7), MS (1000) per run
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build/threaded}
cmake -S "$src/test/threaded" -B "$build" -DCMAKE_BUILD_TYPE=Release -DRTRS_TSAN=OFF >/dev/null
nice cmake --build "$build" -j2 --target rtrs_scale_host >/dev/null
echo "cores: $(nproc); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for inv in Y N; do
	"$build/rtrs_scale_host" --rounds "${ROUNDS:-7}" --ms "${MS:-1000}" --invalidate "$inv"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
