# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# What counts as a problem in a guest's kernel log: the one rule, sourced by
# run-guest and suite-result on the host, and inside the guest (which sees
# the host's / at the same paths, so this checkout too) by test/guest/lib.sh,
# whose problem_count the suites that count problem lines step by step use
# (the fault suites, test/io/guest-run.sh; test/kunit/guest-run.sh uses the
# rule itself). A whole boot, each suite of it and each step of a suite are
# judged by the same lines. Bash; defines variables and functions
# only. tools/vm/selftest.sh --host has a sample line for each pattern.

# Kernel log lines that make a run fail (extended regex, matched against
# kernel lines only).
rtrs_issue_re='BUG:|kernel BUG at|BUG [^ ]+ \((Not t|T)ainted[^)]*\)|WARNING:|Oops|KASAN|UBSAN'
rtrs_issue_re+='|new suspected memory leaks|refcount_t:|Kernel panic'
rtrs_issue_re+='|general protection fault|Call Trace:'
rtrs_issue_re+='|possible circular locking dependency|possible recursive locking'
rtrs_issue_re+='|inconsistent lock state|INFO: task .* blocked for more than'
rtrs_issue_re+='|rcu.*detected stall|rcu: INFO:|list_add corruption|list_del corruption'
rtrs_issue_re+='|ODEBUG:|page allocation failure|Out of memory|oom-kill'
# rxe before 6.0 said so when a pool went away with objects in it (6.1 and
# 6.12 WARN_ON instead, which "WARNING:" catches): from test/fault/lib.sh.
rtrs_issue_re+="|pool destroyed with unfree'd"
# Our module unloaded with sessions, paths, connections, MRs or chunk pages
# still counted (src/kernel/main.c).
rtrs_issue_re+='|unloaded while still holding'

# printk line prefix as produced with printk.time=1, e.g. "[    1.234567] ".
rtrs_printk_re='\[ *[0-9]+\.[0-9]+\] '

# rtrs_issue_count: how many lines of stdin are problem lines (prints 0 for
# none). The suites count before and after a step: dmesg | rtrs_issue_count.
rtrs_issue_count() { grep -caE -- "$rtrs_issue_re"; }

# rtrs_issue_lines: the problem lines of stdin.
rtrs_issue_lines() { grep -aE -- "$rtrs_issue_re"; }

# rtrs_kernel_lines FILE: the kernel lines of FILE: every line of a
# dmesg.txt (or of stdin, for FILE -), only the "[ seconds.micros] ..."
# printk lines of a console log, so that a command's own output saying
# "WARNING" is not a kernel problem.
rtrs_kernel_lines() {
	case "$1" in
	- | */dmesg.txt | dmesg.txt) sed 's/\r$//' "$1" ;;
	*) sed 's/\r$//' "$1" | grep -aoE "$rtrs_printk_re.*" ;;
	esac
}

# rtrs_scan_logs REPORT FILE...: the problem lines of the kernel lines of
# FILEs (missing or empty ones skipped), each once, on stdout; REPORT gets
# them with context, file by file (it is left empty when there are none).
rtrs_scan_logs() {
	local report=$1 f klines
	shift
	klines=$(mktemp) || return 2
	: >"$report"
	for f in "$@"; do
		[ -s "$f" ] || continue
		rtrs_kernel_lines "$f" >"$klines"
		grep -qaE -- "$rtrs_issue_re" "$klines" || continue
		{
			case "${f##*/}" in
			dmesg.txt) echo "=== ${f##*/}" ;;
			*) echo "=== ${f##*/} (kernel lines only; line numbers count those)" ;;
			esac
			grep -naE -B3 -A12 -- "$rtrs_issue_re" "$klines"
			echo
		} >>"$report"
		grep -aE -- "$rtrs_issue_re" "$klines"
	done | awk '!seen[$0]++'
	rm -f "$klines"
}
