#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Checks parse-ktap.sh on made-up KTAP (no kernel needed): all passing is a
# pass; a failed, skipped, missing or unlisted case is a failure; both the
# 6.1 case lines ("ok 1 name") and later ones ("ok 1 - name") are read, from
# debugfs results and from a timestamped kernel log.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$t/expected" <<'X'
# comment
s1 a
s1 b
s2 c
X
cat >"$t/s1.ktap" <<'X'
KTAP version 1
1..1
    KTAP version 1
    # Subtest: s1
    1..2
    ok 1 a
        ok 1 param-of-a-that-is-ignored
    ok 2 - b
# s1: pass:2 fail:0 skip:0 total:2
ok 1 s1
X
printf '[   12.000001]     # Subtest: s2\n[   12.1]     1..1\n[   12.2]     ok 1 c\n[   12.3] ok 2 s2\n' >"$t/dmesg"

check() { # want_rc want_last_line files...
	want_rc=$1 want=$2
	shift 2
	rc=0
	"$here/parse-ktap.sh" "$t/expected" "$@" >"$t/out" || rc=$?
	[ "$rc" = "$want_rc" ] || { cat "$t/out"; fail "exit $rc, wanted $want_rc"; }
	last=$(tail -n 1 "$t/out")
	[ "$last" = "$want" ] || { cat "$t/out"; fail "got '$last', wanted '$want'"; }
}
check 0 "3 passed, 0 failed" "$t/s1.ktap" "$t/dmesg"
check 1 "2 passed, 1 failed (1 of them missing)" "$t/s1.ktap"
sed 's/^    ok 2 - b/    not ok 2 - b/' "$t/s1.ktap" >"$t/s1-fail.ktap"
check 1 "2 passed, 1 failed" "$t/s1-fail.ktap" "$t/dmesg"
grep -q '^FAIL  *s1\.b$' "$t/out" || fail "no FAIL line for s1.b"
sed 's/^    ok 1 a/    ok 1 a # SKIP no device/' "$t/s1.ktap" >"$t/s1-skip.ktap"
check 1 "2 passed, 1 failed" "$t/s1-skip.ktap" "$t/dmesg"
sed 's/^    ok 2 - b/    ok 2 - b\n    ok 3 - new_case/' "$t/s1.ktap" >"$t/s1-new.ktap"
check 1 "3 passed, 1 failed" "$t/s1-new.ktap" "$t/dmesg"
grep -q '^UNEXPECTED s1\.new_case' "$t/out" || fail "no UNEXPECTED line"
: >"$t/empty.ktap"    # what guest-run.sh saves when a suite left no results
check 1 "0 passed, 3 failed (3 of them missing)" "$t/empty.ktap"
echo "parse-ktap.sh: ok"
