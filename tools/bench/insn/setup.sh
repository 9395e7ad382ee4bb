# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# What insn.sh and twohost.sh share, sourced with the folder's name for
# their results (insn, insn2h): the settings from the environment (see
# insn.sh's header), the module, the peers and the counter built, and a new
# results folder $out with $out/dumps for the plugin; insn_report, the
# report of a run.
# shellcheck disable=SC2034 # (all read by the script that sources this)
insn_kind=$1
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
cd "$top"
kver=${KVER:-$(tools/kernels.sh | awk "NR == 1")}
build=$(realpath -m "${RTRS_BUILD_DIR:-$top/build}")
servers=${SERVERS:-ours upstream}
invals=${INVALS:-Y N}
cases=${CASES:-randread-4k-qd1 randread-4k-qd32 randwrite-4k-qd1 randwrite-4k-qd32}
# INSN_ROOT: a release's root (tools/roots/make-root.sh, e.g. sid for
# 7.2) to build in and boot from; KVER is then the series (7.2).
insn_root=${INSN_ROOT:-}
inroot=()
guest_root=()
if [ -n "$insn_root" ]; then
	roots=${RTRS_ROOTS_DIR:-$HOME/.cache/rtrs-roots}
	inroot=(tools/roots/in-root.sh "$insn_root" --bind "$top" --bind "$build" --)
	guest_root=(--root "$roots/$insn_root" --bind "$top" --bind "$build")
fi
if [ "${BENCH_NO_BUILD:-}" != 1 ]; then
	"${inroot[@]}" tools/build-module.sh "$kver" "$build/module/$kver" >/dev/null
	"${inroot[@]}" tools/upstream/build-peers.sh --rnbd-server-against "$build/module/$kver" "$kver" \
		"$build/peers/$kver" >/dev/null
fi
tools/bench/insn/build.sh "$build/insn"
out=${INSN_OUT:-$build/bench/$insn_kind-$kver-$(date +%Y%m%d-%H%M%S)}
rm -rf "$out"
mkdir -p "$out/dumps"
out=$(realpath "$out")
load0=$(cut -d' ' -f1-3 /proc/loadavg)
begin=$(date +%s)

# insn_report RESULTS: report.py over the guest's RESULTS folder (marks,
# sections, fio) and the plugin's dumps: OUT/report.txt, printed, and
# OUT/report.json
insn_report() {
	/usr/bin/python3 tools/bench/insn/report.py --top "${TOP:-8}" \
		--ko ours="$build/module/$kver/rtrs-server.ko" \
		--ko upstream="$build/peers/$kver/src/rtrs/rtrs-server.ko" \
		--ko rtrs_core="$build/peers/$kver/src/rtrs/rtrs-core.ko" \
		--dumps "$out/dumps" "$1" >"$out/report.txt"
	cp "$1/report.json" "$out/report.json"
	cat "$out/report.txt"
}
