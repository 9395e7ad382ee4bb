#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Checks list-cases.py on made-up sources (no kernel needed): the cases of
# every registered suite in order, none from a comment; a case macro it does
# not know, an array no registered suite uses, a registered suite that is
# not defined, an empty suite or a file without suites is an error, not a
# shorter list. Then the real sources: every registered suite has cases.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
list() { python3 "$here/list-cases.py" "$@"; }

cat >"$t/good.c" <<'X'
static struct kunit_case a_cases[] = {
	KUNIT_CASE(a_one),	/* KUNIT_CASE(in_a_comment) */
	// KUNIT_CASE(commented_out),
	KUNIT_CASE(a_two),
	{}
};
static struct kunit_case b_cases[] = { KUNIT_CASE(b_one), {} };
static struct kunit_suite a_suite = { .name = "sa", .test_cases = a_cases, };
static struct kunit_suite b_suite = {
	.name = "sb",
	.test_cases = b_cases,
};
kunit_test_suites(&a_suite, &b_suite);
X
list "$t/good.c" | grep -v '^#' >"$t/out" || fail "good.c: exit $?"
printf 'sa a_one\nsa a_two\nsb b_one\n' >"$t/want"
cmp -s "$t/out" "$t/want" || { cat "$t/out"; fail "good.c: wrong list"; }

bad() { # name: sed script applied to good.c must make list-cases fail
	sed "$2" "$t/good.c" >"$t/$1.c"
	if list "$t/$1.c" >"$t/out" 2>"$t/err"; then
		cat "$t/out"; fail "$1: listed, wanted an error"
	fi
	grep -q '^list-cases: ' "$t/err" || { cat "$t/err"; fail "$1: no reason given"; }
}
bad param 's/KUNIT_CASE(a_two)/KUNIT_CASE_PARAM(a_two, gen)/'
bad slow 's/KUNIT_CASE(a_two)/KUNIT_CASE_SLOW(a_two)/'
bad unused 's/&a_suite, &b_suite/\&a_suite/'
bad undefined 's/&b_suite/\&c_suite/'
bad empty 's/KUNIT_CASE(b_one), //'
bad unregistered '/kunit_test_suites/d'
bad twice 's/KUNIT_CASE(a_two)/KUNIT_CASE(a_one)/'

n=$(list | grep -v '^#' | awk '{print $1}' | sort -u | wc -l)
[ "$n" -gt 0 ] || fail "no suite in the real sources"
for f in "$here"/*_kunit.c; do
	r=$(grep -c 'KUNIT_CASE(' "$f")
	l=$(list "$f" | grep -vc '^#')
	[ "$r" = "$l" ] || fail "$(basename "$f"): $r KUNIT_CASE( lines, $l listed"
done
echo "list-cases.py: ok"
