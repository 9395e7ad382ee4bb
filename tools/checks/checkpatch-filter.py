#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""checkpatch's findings against the listed exceptions (checkpatch.sh).

checkpatch-filter.py EXCEPTIONS SERIES LOG FILE...

LOG is checkpatch --terse --show-types output for FILE...: one line a
finding ("file:line: LEVEL:TYPE: message") and one "total:" line a file.
A finding passes when a line of EXCEPTIONS matches it:

    FILE-GLOB | TYPE | REGEX | reason

FILE-GLOB matches the file (fnmatch), TYPE checkpatch's type, REGEX (Python
re.search) the file's line that the finding names. Fails on any other
finding, on a line of LOG that is neither, on a "total:" count that is not
one a file, and on an exception without a reason.
"""
import fnmatch
import re
import sys

FINDING = re.compile(r"^(\S+):(\d+): (ERROR|WARNING|CHECK):([A-Z0-9_]+): (.*)$")
TOTAL = re.compile(r"^total: \d+ errors, \d+ warnings, (\d+ checks, )?\d+ lines checked$")


def main():
    exc_path, series, log, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    rules, fail = [], []
    with open(exc_path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split(" | ", 3)]
            if len(parts) != 4 or not all(parts):
                fail.append(f"{exc_path}:{n}: not 'FILE-GLOB | TYPE | REGEX | reason'")
                continue
            rules.append((parts[0], parts[1], re.compile(parts[2]), parts[3], n))
    text = {}
    for fn in files:
        with open(fn, errors="replace") as f:
            text[fn] = f.read().split("\n")
    used = {}
    totals = 0
    findings = 0
    with open(log) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if TOTAL.match(line):
                totals += 1
                continue
            m = FINDING.match(line)
            if not m:
                fail.append(f"checkpatch printed something else: {line}")
                continue
            findings += 1
            fn, ln, level, typ, msg = m.group(1), int(m.group(2)), m.group(3), m.group(4), m.group(5)
            src = text.get(fn, [])
            src_line = src[ln - 1] if 0 < ln <= len(src) else ""
            for glob, rtype, rx, reason, n in rules:
                if fnmatch.fnmatch(fn, glob) and typ == rtype and rx.search(src_line):
                    used[n] = used.get(n, 0) + 1
                    break
            else:
                fail.append(f"{fn}:{ln}: {level}:{typ}: {msg}\n    {src_line.strip()}")
    if totals != len(files):
        fail.append(f"checkpatch reported on {totals} files, not the {len(files)} given (see {log})")
    print(f"checkpatch ({series}): {len(files)} files, {findings} findings, "
          f"{sum(used.values())} of them listed exceptions")
    for glob, rtype, rx, reason, n in rules:
        if n in used:
            print(f"  excepted {used[n]:3d} x {rtype} in {glob} ({rx.pattern}): {reason}")
    if fail:
        for f in fail:
            print("FAIL: " + f, file=sys.stderr)
        print(f"FAIL: checkpatch ({series}): {len(fail)} findings not in {exc_path}", file=sys.stderr)
        return 1
    print(f"ok: checkpatch ({series}) has nothing but the listed exceptions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
