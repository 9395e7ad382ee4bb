# SPDX-License-Identifier: GPL-2.0
# What counts as a problem in a guest's kernel log; sourced by run-guest and
# suite-result (bash), so that a whole boot and each suite of it are judged
# by the same rule.

# Kernel log lines that make a run fail (extended regex, matched against
# kernel lines only).
rtrs_issue_re='BUG:|kernel BUG at|BUG [^ ]+ \((Not t|T)ainted\)|WARNING:|Oops|KASAN|UBSAN'
rtrs_issue_re+='|new suspected memory leaks|refcount_t:|Kernel panic'
rtrs_issue_re+='|general protection fault|Call Trace:'
rtrs_issue_re+='|possible circular locking dependency|possible recursive locking'
rtrs_issue_re+='|inconsistent lock state|INFO: task .* blocked for more than'
rtrs_issue_re+='|rcu.*detected stall|rcu: INFO:|list_add corruption|list_del corruption'
rtrs_issue_re+='|ODEBUG:|page allocation failure|Out of memory|oom-kill'

# printk line prefix as produced with printk.time=1, e.g. "[    1.234567] ".
rtrs_printk_re='\[ *[0-9]+\.[0-9]+\] '
