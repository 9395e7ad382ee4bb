#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Installs what building and testing rtrs-server needs on Debian 12, as root:
# Debian 12's kernel (6.1) with its headers and sources, mmdebstrap (the
# other releases' kernels, compilers and sources live in roots of their own
# that it makes: tools/roots/make-root.sh), the compilers (and lld: tools/mutants
# links each mutant with it, 0.9 s against ld's 1.4 s), QEMU,
# rdma-core and GoogleTest, DKMS and Debian's packaging tools (the package
# test), Prometheus' promtool (checks `rtrs-srv metrics`), groff (the man
# page check), trace-cmd, perf and bpftrace (read the trace events in the
# guest), sparse and clang-tidy (a reviewer's checks: tools/checks). The tests fail, not skip, when one of these is missing. Safe to
# run again. With --demo, only what the main job (tools/demo.sh) needs;
# with --debug-kernel, only what tools/debug-kernel/build.sh needs.
set -eu
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: run as root (apt-get)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# --demo: only what tools/demo.sh needs (the module and rtrs-srv built on
# their own, the upstream peers, a guest, mmdebstrap for --release): no test
# frameworks, sanitizers, packaging or tracing tools.
demo="
	build-essential g++ gcc make cmake kmod cpio gzip xz-utils zstd pahole
	linux-image-amd64 linux-headers-amd64 linux-source-6.1 mmdebstrap
	qemu-system-x86 busybox-static iproute2 procps
"
packages="$demo
	bc flex bison libelf-dev libssl-dev openssl pkg-config
	rdma-core ibverbs-providers ibverbs-utils rdmacm-utils
	libibverbs-dev librdmacm-dev
	fio dmsetup perftest python3-matplotlib
	googletest libgtest-dev libgmock-dev
	clang libclang-rt-14-dev lld
	sparse clang-tidy
	dkms dh-dkms debhelper dpkg-dev lintian python3
	prometheus trace-cmd bpftrace linux-perf groff-base
"
# --debug-kernel: only what building the debug kernel needs, so that
# tools/run-tests.sh can start that build (the longest step of the test
# command) before the rest is installed.
debug_kernel="
	build-essential gcc make bc flex bison libelf-dev libssl-dev openssl xz-utils
	kmod cpio linux-source-6.1
"
[ "${1:-}" = --demo ] && packages=$demo
[ "${1:-}" = --debug-kernel ] && packages=$debug_kernel
missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "install-deps: everything is installed"
	exit 0
fi
echo "install-deps: installing$missing"
# RTRS_APT_UPDATED=1: the package lists were updated earlier in this run.
[ "${RTRS_APT_UPDATED:-}" = 1 ] || apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
