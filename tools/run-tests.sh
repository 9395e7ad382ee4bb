#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs every test: host unit tests, the C++ subset checks, and for each
# Debian release's kernel (bookworm 6.1 on the host; bullseye 5.10, trixie
# 6.12 and sid 7.2 each in a root of its own, made from Debian's registry:
# tools/roots) the module build, its symbol check and the guest tests.
# Installs what it needs first (as root, with apt).
# The last line is ctest's summary.
#
# tools/run-tests.sh --extended [CTEST ARGS]: every suite on every kernel
# (CMake RTRS_EXTENDED_TESTS; see CMakeLists.txt): not for CI's time budget.
# The fault suites' long soaks are tools/fault/load-figures.sh's.
set -euo pipefail
extended=OFF
if [ "${1:-}" = --extended ]; then
	extended=ON
	shift
fi
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${RTRS_BUILD_DIR:-$top/build}
for dir in "$top" "$build"; do
	case "$dir" in *[[:space:]]*)
		echo "${0##*/}: '$dir' has white space in it, which Kbuild cannot build in: use a folder without" >&2
		exit 1 ;;
	esac
done

mkdir -p "$build"
background=0
[ $# -eq 0 ] && background=1
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
echo "== installing dependencies"
if [ "$(id -u)" -eq 0 ] && [ $background = 1 ]; then
	# What the debug kernel's build needs first: that build and then its
	# boots are the critical path of the whole command, and it can run
	# while the rest is installed (mostly downloads). Its compile runs at
	# nice 10 and takes the CPU the guests leave: at nice 0, beside the
	# host's builds and 6.1's guest, it took 20 min, and that guest used
	# 638 s of CPU for its suites against 500 s (runs of 2026-12-06): a
	# guest of 2 vCPUs wastes CPU when the host takes a core from it; at
	# nice 19 the host's long tests left it nothing (CMakeLists.txt,
	# "scheduling": they run at nice 19 now).
	tools/install-deps.sh --debug-kernel
	echo "== building the debug kernel in the background (log: $build/debug-kernel.log)"
	tools/debug-kernel/build.sh >"$build/debug-kernel.log" 2>&1 &
	RTRS_APT_UPDATED=1 tools/install-deps.sh
else
	if [ "$(id -u)" -eq 0 ]; then
		tools/install-deps.sh
	else
		echo "not root: assuming the packages of tools/install-deps.sh are installed"
	fi
	if [ $background = 1 ]; then
		echo "== building the debug kernel in the background (log: $build/debug-kernel.log)"
		tools/debug-kernel/build.sh >"$build/debug-kernel.log" 2>&1 &
	fi
fi

releases=${RTRS_RELEASES:-bookworm bullseye trixie sid}
echo "== the host's kernel: $(tools/kernels.sh --require); releases under test: $releases"

# What takes longest starts before the host build, in the background: the
# debug kernel (above, at nice 10: the critical path of the whole command,
# its build and then its boot) and the roots of the other releases (mostly
# downloads and unpacking). ctest's debug.kernel and root.SERIES then find
# them made, or wait for them (each holds a lock) and say why they failed.
# (Only for a whole run: with ctest arguments, ctest's tests do what they
# need.) Whatever of it still runs when this script ends is stopped.
if [ $background = 1 ] && [ "$(id -u)" -eq 0 ]; then
	for r in $releases; do
		[ "$r" = bookworm ] && continue
		echo "== making the root of $r in the background (log: $build/root-$r.log)"
		tools/roots/make-root.sh "$r" >"$build/root-$r.log" 2>&1 &
	done
fi

echo "== configuring and building in $build"
cmake -S "$top" -B "$build" -DRTRS_RELEASES="${releases// /;}" -DRTRS_GUEST_TESTS=ON \
	-DRTRS_EXTENDED_TESTS=$extended
cmake --build "$build" -j"$(nproc)"

echo "== running the tests"
cd "$build"
# Four at a time: debug.kernel waits in one slot for the build started
# above, guests run on the lanes of CMakeLists.txt (a guest whose suites
# time the server alone; the debug kernel's two boots side by side; the
# light guests one at a time, beside them or alone), and host tests take
# the slots left.
# Every guest boot of the run is counted in one ledger, which holds the
# run's one budget of retries (tools/vm/boot-budget.sh).
export RTRS_VM_RUN_BOOTS=$build/boots-of-the-run.txt
rm -f "$RTRS_VM_RUN_BOOTS" "$RTRS_VM_RUN_BOOTS.lock"
t0=$SECONDS
rc=0
rm -f "$build"/checks/stack-*.txt
ctest -j4 --output-on-failure --no-tests=error --output-junit "$build/ctest-junit.xml" "$@" |
	tee "$build/ctest.log" || rc=$?
echo
echo "== step times"
python3 "$top/tools/test-times.py" "$build" "$build/ctest-junit.xml" $((SECONDS - t0)) || true
echo
# The module's stack on each kernel (check.stack.*, tools/checks/stack.py;
# every function's frame: build/checks/frames-SERIES.txt).
for f in "$build"/checks/stack-*.txt; do
	[ -f "$f" ] || continue
	k=${f##*/stack-}
	echo "== stack on ${k%.txt}"
	cat "$f"
done
echo
grep -E '^[0-9]+% tests passed' "$build/ctest.log" | tail -n 1
exit $rc
