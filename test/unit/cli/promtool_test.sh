#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Checks `rtrs-srv metrics` with a real parser: Prometheus' promtool (Debian's
# prometheus package, tools/install-deps.sh) must accept its output, on the
# fake tree with latency files and on one without the module; --textfile
# writes the same text to DIR/rtrs_server.prom and leaves no temporary file.
# The fake tree's parameters folder gives the admission families too.
# Usage: promtool_test.sh SOURCE_DIR RTRS_SRV_BINARY
set -eu
top=$1 bin=$2
command -v promtool >/dev/null || { echo "FAIL: no promtool (tools/install-deps.sh installs prometheus)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rtrs-srv-promtool.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
root=$(sh "$top/test/unit/cli/make-fake-tree.sh" "$tmp/tree")
dbg=$tmp/tree/debug/rtrs-server
params=$tmp/tree/module/rtrs_server/parameters
fails=0 passes=0
ok() { passes=$((passes + 1)); echo "ok: $*"; }
no() { fails=$((fails + 1)); echo "FAIL: $*"; }

# promtool itself must reject what is broken, or its "ok" says nothing.
if printf 'x_total{a="b" 1\n' | promtool check metrics >/dev/null 2>&1; then
	no "promtool accepts a broken line"
else
	ok "promtool rejects a broken line"
fi

"$bin" --sysfs-root "$root" --debugfs-root "$dbg" --params-dir "$params" metrics >"$tmp/m.prom"
if out=$(promtool check metrics <"$tmp/m.prom" 2>&1) && [ -z "$out" ]; then
	ok "promtool accepts the metrics of the fake tree ($(wc -l <"$tmp/m.prom") lines)"
else
	no "promtool on the fake tree: $out"
fi
for family in rtrs_server_path_reads_total rtrs_server_path_ulp_latency_seconds_bucket \
	rtrs_server_path_transport_latency_seconds_count rtrs_server_session_paths_up \
	rtrs_server_admission_refusals_total; do
	if grep -q "^$family{" "$tmp/m.prom"; then ok "has $family"; else no "no $family"; fi
done
for sample in 'rtrs_server_admission_refusals_total{reason="not-allowed"} 3' \
	'rtrs_server_admission_refusals_total{reason="rate"} 12' \
	'rtrs_server_admission_allow_list 1' 'rtrs_server_admission_allow_entries 2'; do
	if grep -qxF "$sample" "$tmp/m.prom"; then ok "has $sample"; else no "no $sample"; fi
done
if [ "$(grep -c '^rtrs_server_admission_refusals_total{' "$tmp/m.prom")" -eq 6 ]; then
	ok "a refusal counter for each of the six reasons"
else
	no "not six refusal counters: $(grep '^rtrs_server_admission_refusals_total{' "$tmp/m.prom")"
fi

"$bin" --sysfs-root "$tmp/nothing" --params-dir "$tmp/nothing" metrics >"$tmp/none.prom"
if promtool check metrics <"$tmp/none.prom" && grep -qx 'rtrs_server_loaded 0' "$tmp/none.prom" &&
	! grep -q admission "$tmp/none.prom"; then
	ok "without the module: rtrs_server_loaded 0, no admission, and promtool accepts it"
else
	no "without the module"
fi

mkdir "$tmp/textfile"
"$bin" --sysfs-root "$root" --debugfs-root "$dbg" --params-dir "$params" metrics --textfile "$tmp/textfile"
if cmp -s "$tmp/textfile/rtrs_server.prom" "$tmp/m.prom" &&
	[ "$(ls -A "$tmp/textfile")" = rtrs_server.prom ]; then
	ok "--textfile writes rtrs_server.prom, the same text, and nothing else"
else
	no "--textfile: $(ls -A "$tmp/textfile")"
fi
echo "promtool: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
