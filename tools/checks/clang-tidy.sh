#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# clang-tidy on the C++ core and runtime (src/core/*.cpp, src/rt/*.cpp and
# the headers of both), with the checks of tools/checks/clang-tidy.yaml
# (what is off there, and why). The flags are the host's clang build of
# the core (test/thread-safety: the subset's flags, src/rt/cxx-subset.flags),
# whose compile database is made in BUILD_DIR. Fails on any finding.
#
#   tools/checks/clang-tidy.sh BUILD_DIR
set -u
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$1
mkdir -p "$build" && build=$(cd "$build" && pwd) || exit 1
start=$(date +%s)
command -v clang-tidy >/dev/null || { echo "FAIL: clang-tidy is not installed (tools/install-deps.sh)" >&2; exit 1; }
if ! CC=clang CXX=clang++ cmake -S "$top/test/thread-safety" -B "$build" \
	-DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$build/configure.log" 2>&1; then
	cat "$build/configure.log" >&2
	echo "FAIL: configuring the clang build of the core (test/thread-safety) failed" >&2
	exit 1
fi
db=$build/compile_commands.json
# src/rt/*.cpp (kernel_abi.cpp) is not in that build (nothing of it runs on
# the host): the core's flags serve.
python3 - "$db" "$top" <<'PY' || exit 1
import glob, json, os, sys
db, top = sys.argv[1], sys.argv[2]
entries = json.load(open(db))
core = [e for e in entries if "/src/core/" in e["file"]]
if not core:
    sys.exit("no src/core file in " + db)
have = {e["file"] for e in entries}
for f in sorted(glob.glob(os.path.join(top, "src/rt/*.cpp"))):
    if f not in have:
        e = dict(core[0])
        e["command"] = e["command"].replace(core[0]["file"], f).replace(
            os.path.basename(core[0]["file"]) + ".o", os.path.basename(f) + ".o")
        e["file"] = f
        entries.append(e)
json.dump(entries, open(db, "w"), indent=1)
PY
files=$(ls "$top"/src/core/*.cpp "$top"/src/rt/*.cpp)
out=$build/clang-tidy.log
echo "clang-tidy: $(clang-tidy --version | grep -i version | head -n 1 | sed 's/^ *//') on $(echo "$files" | wc -l) files"
# Two at a time, one file each; every finding is a line with "warning:" or
# "error:" (clang-tidy exits 0 on warnings).
# shellcheck disable=SC2086
printf '%s\n' $files | nice xargs -P2 -n1 clang-tidy --quiet -p "$build" \
	--config-file="$top/tools/checks/clang-tidy.yaml" >"$out" 2>"$build/clang-tidy.stderr"
rc=$?
findings=$(grep -E '(warning|error):' "$out" | sort -u)
if [ $rc -ne 0 ] || [ -n "$findings" ]; then
	grep -E -A3 '(warning|error):' "$out" | head -n 200 >&2
	grep -E 'error' "$build/clang-tidy.stderr" | head -n 20 >&2
	echo "FAIL: clang-tidy: $(printf '%s\n' "$findings" | grep -c .) findings (exit $rc; full log: $out)" >&2
	exit 1
fi
echo "ok: clang-tidy found nothing ($(($(date +%s) - start)) s)"
