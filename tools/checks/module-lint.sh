#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The module's build as a reviewer makes it, on one kernel (run it in the
# kernel's release root: tools/roots/in-root.sh; see doc/testing.md):
#
#   module-lint.sh w1 KVER OUTDIR      the test variant built with W=1
#                                      (Kbuild's extra warnings, and up to
#                                      6.12 kernel-doc on the C files: 7.x
#                                      skips it for external modules),
#                                      and with -fstack-usage and
#                                      -fcallgraph-info=su for stack.py
#   module-lint.sh sparse KVER OUTDIR  sparse on every C file (C=2) of the
#                                      same build, against that kernel's
#                                      headers, with its own checker flags
#
# Both are tools/build-module.sh with Kbuild's variables in the environment
# (in-root.sh clears the caller's), and it fails on any warning in the
# build's output: a compiler's or objtool's, or sparse's. The sparse run
# makes the same build again (the same flags, so nothing is compiled when
# w1 ran first in OUTDIR) with C=2, which checks every C file whether it
# was rebuilt or not; C++ files are not C and are not checked by sparse.
set -eu
[ $# -eq 3 ] || { echo "usage: $0 w1|sparse KVER OUTDIR" >&2; exit 2; }
mode=$1 kver=$2 out=$3
top=$(cd "$(dirname "$0")/../.." && pwd)
KBUILD_EXTRA_WARN=1
KCFLAGS="-fstack-usage -fcallgraph-info=su"
export KBUILD_EXTRA_WARN KCFLAGS
case $mode in
w1) ;;
sparse)
	command -v sparse >/dev/null ||
		{ echo "FAIL: sparse is not installed here (tools/install-deps.sh; the roots' recipe)" >&2; exit 1; }
	echo "sparse: $(sparse --version 2>&1 | head -n 1)"
	# 7.x's Makefile turns C= off unless scripts/checker-valid.sh passes
	# (a sparse that knows __typeof_unqual__, which its headers use), and
	# Debian's 7.2 headers lack that script. Where the Makefile asks for
	# it, module-lint.sh checks the same thing and gives C=2 as make's
	# command line does (MAKEFLAGS), which stands; elsewhere (5.10 to
	# 6.12) C=2 goes in the environment, as Kbuild reads it.
	case $kver in *.*.*) k=$kver ;; *) k=$("$top/tools/kernels.sh" --series "$kver") ;; esac
	mk=/lib/modules/$k/build/Makefile
	# shellcheck disable=SC2046
	if grep -qs checker-valid.sh "$mk" $(sed -n 's/^include[[:space:]]*//p' "$mk" 2>/dev/null); then
		probe=$(mktemp)
		printf 'static inline int u(const int *q)\n{\n\t__typeof_unqual__(*q) v = *q;\n\treturn v;\n}\n' >"$probe.c"
		if sparse "$probe.c" 2>&1 | grep -q error; then
			rm -f "$probe" "$probe.c"
			echo "FAIL: this sparse does not know __typeof_unqual__, which $k's headers use" >&2
			exit 1
		fi
		rm -f "$probe" "$probe.c"
		MAKEFLAGS="KBUILD_CHECKSRC=2${MAKEFLAGS:+ $MAKEFLAGS}"
		export MAKEFLAGS
	else
		KBUILD_CHECKSRC=2
		export KBUILD_CHECKSRC
	fi ;;
*) echo "usage: $0 w1|sparse KVER OUTDIR" >&2; exit 2 ;;
esac
"$top/tools/build-module.sh" "$kver" "$out"
if [ "$mode" = sparse ]; then
	# Each C file is checked: one CHECK line for each in the log.
	n=$(grep -c '^ *CHECK ' "$out/build.log" || true)
	want=$(find "$top/src/kernel" "$top/src/null" -maxdepth 1 -name "*.c" | wc -l)
	if [ "$n" -lt "$want" ]; then
		echo "FAIL: sparse checked $n files, not the $want C files of src/kernel and src/null" >&2
		exit 1
	fi
	echo "ok: sparse checked $n C files, no warning"
fi
