#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Builds the fuzz targets with clang (test/fuzz/CMakeLists.txt) in BUILD_DIR
# and runs each one for a bounded number of inputs from its seed corpus
# (test/fuzz/corpus/<target>), with a fixed seed, so that a run is
# repeatable. Fails if any target crashes, leaks or times out.
#
#   test/fuzz/run.sh BUILD_DIR [RUNS]
#
# RUNS (argument or environment) is the number of inputs core_session runs
# (default 10000: 10 to 70 s on this 2-core machine, depending on what else
# runs (20000 took 137 s in a full run of 2026-12-06, a share of the test
# command's CPU budget it cannot spare); a build from scratch adds 30 to
# 40 s); the codec targets, two to three orders of magnitude faster, run
# 50 x RUNS each (500,000: a few seconds for the three). SEED (default 1) picks libFuzzer's seed. A longer
# run: RUNS=500000 test/fuzz/run.sh BUILD_DIR (about an hour).
#
# What a run found stays in BUILD_DIR/run/<target>/: log, the corpus it
# grew (corpus/), and a crashing input (crash-*, leak-*, timeout-*) to
# replay with BUILD_DIR/fuzz_<target> FILE. Keep a crashing input in
# test/fuzz/corpus/<target>/ once the bug is fixed.
set -u

usage() {
	echo "usage: $0 BUILD_DIR [RUNS]" >&2
	exit 2
}
if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
build=$1
runs=${2:-${RUNS:-10000}}
seed=${SEED:-1}
case $runs in '' | *[!0-9]*) usage ;; esac
src=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$build" || exit 1
build=$(cd "$build" && pwd)

now() { date +%s.%N; }
since() { echo "$1 $(now)" | awk '{ printf "%.1f", $2 - $1 }'; }

start=$(now)
echo "fuzz: configuring and building with clang in $build"
if ! CC=clang CXX=clang++ cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	>"$build/configure.log" 2>&1; then
	cat "$build/configure.log" >&2
	echo "fuzz: configuring failed (clang and libclang-rt-14-dev installed?)" >&2
	exit 1
fi
if ! cmake --build "$build" -j2 >"$build/build.log" 2>&1; then
	tail -n 40 "$build/build.log" >&2
	echo "fuzz: build failed (full log: $build/build.log)" >&2
	exit 1
fi
echo "fuzz: built in $(since "$start") s"

# Sanitizers: stop at the first report; a smaller quarantine than ASan's
# 256 MiB keeps core_session (chunks of up to 64 KiB) near 0.5 GiB.
export ASAN_OPTIONS="${ASAN_OPTIONS:-quarantine_size_mb=64:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

failed=""
# target  runs  max_len  timeout (s)  extra flags
plan="conn_req $((runs * 50)) 256 5 -
info_req $((runs * 50)) 600 5 -
io_req $((runs * 50)) 600 5 -
core_session $runs 1024 20 -len_control=10"
count=$(echo "$plan" | wc -l)
i=0
echo "$plan" | {
	while read -r t n max_len timeout extra; do
		i=$((i + 1))
		dir=$build/run/$t
		rm -rf "$dir"
		mkdir -p "$dir/corpus"
		[ "$extra" = - ] && extra=""
		echo "fuzz: [$i/$count] $t: $n runs (seed $seed, max_len $max_len, timeout ${timeout}s) ..."
		t0=$(now)
		# shellcheck disable=SC2086
		"$build/fuzz_$t" -runs="$n" -seed="$seed" -max_len="$max_len" -timeout="$timeout" \
			-rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$dir/" $extra \
			"$dir/corpus" "$src/corpus/$t" >"$dir/log" 2>&1
		status=$?
		secs=$(since "$t0")
		done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
		rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log")
		last=$(grep -E '^#[0-9]+.*cov: ' "$dir/log" | tail -n 1)
		cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
		ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
		corp=$(echo "$last" | sed -n 's/.* corp: \([^ ]*\).*/\1/p')
		if [ "$status" -eq 0 ]; then
			echo "fuzz: [$i/$count] $t: ok: ${done_runs:-?} runs in $secs s (${rate:-?}/s), coverage ${cov:-?} edges, ${ft:-?} features, corpus ${corp:-?}"
		else
			echo "fuzz: [$i/$count] $t: FAILED (libFuzzer exit status $status) after $secs s; the report:"
			# From the first report line (the check that failed, the core's
			# trouble, a sanitizer's error) to libFuzzer's summary.
			awk '/fuzz check failed|harness check failed|the core left trouble|^after |rtrs_env_warn|runtime error|==[0-9]+== ?ERROR/ { on = 1 }
				on { print "    " $0; if (++n >= 60 || /^SUMMARY/) exit }' "$dir/log"
			for a in "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-* "$dir"/slow-unit-*; do
				[ -e "$a" ] && echo "    input: $a (replay: $build/fuzz_$t $a)"
			done
			echo "    full log: $dir/log"
			failed="$failed $t"
		fi
	done
	echo "fuzz: total $(since "$start") s (build included)"
	if [ -n "$failed" ]; then
		echo "fuzz: FAILED:$failed"
		exit 1
	fi
	echo "fuzz: every target ran clean"
}
