#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Compiles one snippet the way the module compiles its C++ (subset flags, the
# enforce header, the object check) and checks the outcome the snippet's
# first line names: "// expect-ok" must build; "// expect: REGEX" must fail
# with a message matching REGEX.
# Usage: run.sh CXX TOP SNIPPET OBJDIR
set -eu
cxx=$1 top=$2 snippet=$3 objdir=$4
mkdir -p "$objdir"
obj="$objdir/$(basename "$snippet" .cpp).o"
log="$objdir/$(basename "$snippet" .cpp).log"
first=$(head -n 1 "$snippet")
rc=0
{
	# shellcheck disable=SC2046
	"$cxx" $(cat "$top/src/rt/cxx-subset.flags") -O2 -Wall -Wextra -Werror \
		-I"$top/src" -include "$top/src/rt/enforce.h" -c -o "$obj" "$snippet" &&
	"$top/tools/check-cxx-object.sh" objdump nm "$obj"
} >"$log" 2>&1 || rc=$?
case "$first" in
"// expect-ok"*)
	if [ "$rc" -ne 0 ]; then
		cat "$log"
		echo "FAIL: $snippet should build under the subset" >&2
		exit 1
	fi
	echo "ok: $snippet builds"
	;;
"// expect: "*)
	want=${first#// expect: }
	if [ "$rc" -eq 0 ]; then
		echo "FAIL: $snippet built, but the subset must reject it ($want)" >&2
		exit 1
	fi
	if ! grep -Eq -- "$want" "$log"; then
		cat "$log"
		echo "FAIL: $snippet was rejected, but not for the expected reason ($want)" >&2
		exit 1
	fi
	echo "ok: $snippet rejected: $(grep -Em1 -- "$want" "$log")"
	;;
*)
	echo "FAIL: $snippet has no expectation line" >&2
	exit 1
	;;
esac
