#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Prints the step times of a test run as a table: every ctest test that took
a second or more (from ctest's JUnit file), and under each guest boot the
suites it ran (from tools/vm/run-suites' results), then the totals.

Usage: test-times.py BUILD_DIR JUNIT_FILE [WALL_SECONDS]
"""
import os
import sys
import xml.etree.ElementTree as ET


def suite_rows(build, boot):
    """(name, seconds, status) of each suite of a boot, in the order they ran."""
    d = os.path.join(build, "vm", boot)
    listing = os.path.join(d, "suites.list")
    rows = []
    if not os.path.exists(listing):
        return rows
    for line in open(listing):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        name = words[0]
        sd = os.path.join(d, "suites", name)
        try:
            secs = int(open(os.path.join(sd, "seconds")).read())
            st = int(open(os.path.join(sd, "status")).read())
            rows.append((name, secs, "passed" if st == 0 else "FAILED (%d)" % st))
        except (OSError, ValueError):
            rows.append((name, None, "no result"))
    return rows


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    build, junit = sys.argv[1], sys.argv[2]
    wall = int(sys.argv[3]) if len(sys.argv) > 3 else None
    tests = []
    for tc in ET.parse(junit).getroot().iter("testcase"):
        status = {"run": "passed", "fail": "FAILED", "notrun": "NOT RUN"}.get(tc.get("status"), tc.get("status"))
        tests.append((tc.get("name"), float(tc.get("time") or 0), status))
    width = max([len(t[0]) for t in tests] + [40])
    print("%-*s %8s  %s" % (width, "step", "seconds", "result"))
    print("%s %s  %s" % ("-" * width, "-" * 8, "-" * 6))
    small = 0
    small_n = 0
    for name, secs, status in sorted(tests, key=lambda t: -t[1]):
        if secs < 1.0:
            small += secs
            small_n += 1
            continue
        print("%-*s %8.0f  %s" % (width, name, secs, status))
        boot = None
        if name.startswith("guest.boot."):
            boot = name[len("guest.boot."):]
        elif name == "debug.boot":
            boot = "debug"
        if boot:
            for sname, ssecs, sst in suite_rows(build, boot):
                print("%-*s %8s  %s" % (width, "    suite " + sname,
                                         "-" if ssecs is None else ssecs, sst))
    print("%-*s %8.0f  (%d tests under a second each)" % (width, "the rest", small, small_n))
    print("%-*s %8.0f" % (width, "sum of the steps (two run at a time)",
                          sum(t[1] for t in tests)))
    if wall is not None:
        print("%-*s %8d  (%dm%02ds)" % (width, "wall clock of ctest", wall, wall // 60, wall % 60))
    return 0


if __name__ == "__main__":
    sys.exit(main())
