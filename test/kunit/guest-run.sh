#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs rtrs-server-kunit.ko inside a guest on the debug kernel (see
# test/kunit/run.sh, which starts it through tools/vm/run-guest), checks
# every expected case, then unloads the module and asks kmemleak for leaks.
#
# Usage: guest-run.sh MODULE.ko OUTDIR [EXPECTED]
#   OUTDIR    where the results go (run-guest's results folder): kunit/*.ktap
#             (the debugfs results of each suite), kunit-dmesg.txt,
#             kmemleak.txt, kernel-reports.txt
#   EXPECTED  the list of cases (default: made from the sources by
#             list-cases.py, kept as OUTDIR/expected-cases.txt)
#
# Exit status 0 only if every expected case passed, none is missing, the
# module unloaded, kmemleak found nothing and the kernel log has no problem
# line (tools/vm/kernel-issues.sh: KASAN, lockdep, BUG, WARNING,
# debugobjects, ...) from the run. Prints
# "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
# load_deps, kmemleak_scan, and what a kernel problem is: rtrs_issue_re from
# tools/vm/kernel-issues.sh (the guest sees this checkout).
. "$here/../guest/lib.sh" || { echo "cannot read test/guest/lib.sh" >&2; exit 2; }
[ $# -ge 2 ] || { echo "usage: $0 MODULE.ko OUTDIR [EXPECTED]" >&2; exit 2; }
ko=$1 out=$2 expected=${3:-}
dbg=/sys/kernel/debug
leak=$dbg/kmemleak
PATH=$PATH:/usr/sbin:/sbin

say() { printf '[kunit] %s\n' "$*"; }
die() { say "FAIL: $*"; exit 1; }

[ -r "$ko" ] || die "no module $ko"
mkdir -p "$out/kunit" || die "cannot write to $out"
if [ -z "$expected" ]; then
	expected=$out/expected-cases.txt
	python3 "$here/list-cases.py" >"$expected" || die "cannot list the cases of $here/*_kunit.c"
fi
mountpoint -q "$dbg" || mount -t debugfs debugfs "$dbg" || die "cannot mount debugfs"
[ -e "$leak" ] || die "no $leak: is this the debug kernel (CONFIG_DEBUG_KMEMLEAK)? $(uname -r)"
[ -d "$dbg/kunit" ] || die "no $dbg/kunit: the kernel needs CONFIG_KUNIT=y and CONFIG_KUNIT_DEBUGFS=y"
say "kernel $(uname -r), module $ko"

# kmemleak only reports an object that has been unreferenced for 5 s or more.
# A scan of a 1-2 GB guest takes a while under TCG: kmemleak_scan (lib.sh)
# says how long.

# Whatever the kernel leaked (or seemed to) before the test is not ours:
# report it once, then mark it as seen.
kmemleak_scan 1 || die "cannot trigger a kmemleak scan"
cat "$leak" >"$out/kmemleak-before.txt" 2>/dev/null
[ -s "$out/kmemleak-before.txt" ] &&
	say "note: $(grep -c '^unreferenced object' "$out/kmemleak-before.txt") kmemleak suspect(s) from before the test (cleared; see kmemleak-before.txt)"
echo clear >"$leak"

# The kernel log of this run starts at this line.
marker="rtrs-kunit: guest-run.sh starts $(date +%s)"
echo "$marker" >/dev/kmsg
run_log() { dmesg | sed -n "/$marker/,\$p"; }

# The module's dependencies from the kernel's own modules, then the module.
load_deps "$ko" || die "cannot load the dependencies of $ko"
modname=$(modinfo -F name "$ko" 2>/dev/null)
modname=${modname:-rtrs_server_kunit}
# The suites run while the module loads (KUnit's module notifier).
t0=$SECONDS
insmod "$ko" || die "insmod $ko failed"
say "module loaded; the suites ran in $((SECONDS - t0)) s"

rc=0
suites=$(grep -Ev '^[[:space:]]*(#|$)' "$expected" | awk '{print $1}' | sort -u)
for s in $suites; do
	if [ -r "$dbg/kunit/$s/results" ]; then
		cat "$dbg/kunit/$s/results" >"$out/kunit/$s.ktap"
		cat "$out/kunit/$s.ktap"
	else
		say "no results for suite $s in $dbg/kunit"
		: >"$out/kunit/$s.ktap"
	fi
done
# Suites of the module that the list does not know also count (parse-ktap
# reports their cases as UNEXPECTED).
for d in "$dbg"/kunit/*/; do
	s=$(basename "$d")
	[ -e "$out/kunit/$s.ktap" ] && continue
	grep -q "^$s " "$expected" && continue
	case $s in rtrs_srv_*) cat "$d/results" >"$out/kunit/$s.ktap" ;; esac
done

# A first look for leaks while the module is still loaded, so that the
# allocation backtraces name its functions (after rmmod they are bare
# addresses). kmemleak ignores objects younger than 5 s.
sleep 6
kmemleak_scan 1 && cat "$leak" >"$out/kmemleak-loaded.txt"

rmmod "$modname" || { say "FAIL: rmmod $modname failed"; rc=1; }
run_log >"$out/kunit-dmesg.txt"

say "results:"
"$here/parse-ktap.sh" "$expected" "$out"/kunit/*.ktap >"$out/kunit-summary.txt"
parse_rc=$?
cat "$out/kunit-summary.txt"
[ $parse_rc = 0 ] || rc=1

# Leaks: everything the module allocated is gone now that it is unloaded.
# Two scans: a stale pointer (a register, a stack slot) can hide an object
# from the first.
kmemleak_scan 2 2 || { say "FAIL: kmemleak scan failed"; rc=1; }
cat "$leak" >"$out/kmemleak.txt"
if [ -s "$out/kmemleak.txt" ]; then
	say "FAIL: kmemleak reports $(grep -c '^unreferenced object' "$out/kmemleak.txt") leak(s):"
	cat "$out/kmemleak.txt"
	if [ -s "$out/kmemleak-loaded.txt" ]; then
		say "the same scan while the module was loaded (backtraces with its symbols):"
		cat "$out/kmemleak-loaded.txt"
	fi
	rc=1
else
	say "kmemleak: no leaks"
fi

# The checkers' reports in the kernel log of this run, by the rule every
# verdict uses (run-guest also scans the whole log; this makes the verdict
# stand on its own).
run_log |
	grep -aE -A30 -- "$rtrs_issue_re" \
	>"$out/kernel-reports.txt"
if [ -s "$out/kernel-reports.txt" ]; then
	say "FAIL: kernel reports during the run:"
	cat "$out/kernel-reports.txt"
	rc=1
else
	rm -f "$out/kernel-reports.txt"
	say "kernel log: no KASAN, lockdep, debugobjects, BUG or WARNING report"
fi

say "$(tail -n 1 "$out/kunit-summary.txt")"
[ $rc = 0 ] && say "PASS" || say "FAIL"
exit $rc
