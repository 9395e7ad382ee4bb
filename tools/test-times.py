#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Prints the step times of a test run as a table: every ctest test that took
a second or more (from ctest's JUnit file; a boot with the CPU its QEMU
used, tools/vm/run-guest's cpu-seconds), and under each guest boot the
suites it ran with the processes each started (from tools/vm/boot-suites'
results), then the totals; then,
for the tests that failed, the last lines each printed, so that the end of
a long log (all a CI report may keep of it) says what went wrong.

Usage: test-times.py BUILD_DIR JUNIT_FILE [WALL_SECONDS]
"""
import os
import sys
import xml.etree.ElementTree as ET


def suite_marks(suite_dir):
    """The "skip: ..." and "allowed: ..." lines of a suite's log
    (test/guest/lib.sh skip() and allow()), each without its prefix."""
    try:
        text = open(os.path.join(suite_dir, "log"), errors="replace").read()
    except OSError:
        return [], []
    lines = text.splitlines()
    return ([l[len("skip: "):] for l in lines if l.startswith("skip: ")],
            [l[len("allowed: "):] for l in lines if l.startswith("allowed: ")])


def suite_rows(build, boot):
    """(name, seconds, status, marks) of each suite of a boot, in the order
    they ran; marks are (skips, allowances): the reasons of its "skip: "
    and "allowed: " lines."""
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
        skips, allowed = suite_marks(sd)
        more = ", %d skipped" % len(skips) if skips else ""
        more += ", %d allowed" % len(allowed) if allowed else ""
        try:
            secs = int(open(os.path.join(sd, "seconds")).read())
            st = int(open(os.path.join(sd, "status")).read())
            rows.append((name, secs, ("passed" if st == 0 else "FAILED (%d)" % st) + more,
                         (skips, allowed)))
        except (OSError, ValueError):
            rows.append((name, None, "no result", (skips, allowed)))
    return rows


def read_int(path):
    """The number in a file, or None without one."""
    try:
        return int(open(path).read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


# Names longer than this are cut in the table (a few parameterised unit
# tests have long ones).
WIDTH = 56


def cut(text, width):
    return text if len(text) <= width else text[:width - 2] + ".."


def tail(text, n, width=160):
    lines = [l.replace("\r", "") for l in text.rstrip("\n").split("\n")]
    return ["  | " + cut(l, width) for l in lines[-n:]]


BOOT_STATUS = {"124": "the guest timed out", "125": "the guest died or reported no status",
               "2": "usage error, or the suite runner failed at once"}


def boot_of(name):
    """The boot (folder under BUILD/vm) a guest.boot.KVER or debug.boot[.PART]
    test ran (debug.boot.fault: debug-fault)."""
    if name.startswith("guest.boot."):
        return name[len("guest.boot."):]
    if name == "debug.boot" or name.startswith("debug.boot."):
        return "debug" + name[len("debug.boot"):].replace(".", "-")
    return None


def booted_again(build):
    """(folder, why) of every guest booted again in the run: each results
    folder under the build folder with a booted-again file (the guest
    tests' under vm/, the two-host lab's guests under vm/twohost-*/, the
    benchmarks' under bench/)."""
    found = []
    for top in ("vm", "bench"):
        for d, dirs, files in os.walk(os.path.join(build, top)):
            dirs.sort()
            if "booted-again" in files:
                found.append((os.path.relpath(d, build),
                              open(os.path.join(d, "booted-again")).read().strip()))
    return found


def run_boots(build):
    """(boots, retries) from the run's ledger (tools/vm/boot-budget.sh,
    RTRS_VM_RUN_BOOTS of tools/run-tests.sh), or None without one."""
    try:
        kinds = [l.split()[0] for l in open(os.path.join(build, "boots-of-the-run.txt")) if l.strip()]
    except OSError:
        return None
    return len(kinds), kinds.count("retry")


def failures(build, tests, outputs):
    """The last lines of each failed test's output (the first few tests at
    more length), the boots that needed a second try, and how many tests did
    not run because a test they need failed."""
    failed = [t[0] for t in tests if t[2] == "FAILED"]
    notrun = [t[0] for t in tests if t[2] == "NOT RUN"]
    again = booted_again(build)
    vm = os.path.join(build, "vm")
    if not failed and not notrun and not again:
        return
    print()
    print("== what failed (the last lines of each failed test's output)")
    for boot, why in again:
        print("boot %s was booted again: %s" % (boot, why))
    for i, name in enumerate(failed[:8]):
        boot = boot_of(name)
        console = boot and os.path.join(vm, boot, "console.log")
        if console and os.path.exists(console):
            # A boot's own output can be longer than what ctest keeps of it.
            try:
                st = open(os.path.join(vm, boot, "run-guest-status")).read().strip()
            except OSError:
                st = "none"
            print("%s: run-guest status %s (%s); the end of its console:" %
                  (name, st, BOOT_STATUS.get(st, "see its output")))
            text = open(console, errors="replace").read()
        else:
            print("%s:" % name)
            text = outputs.get(name, "")
        for line in tail(text, 14 if i < 2 else 6):
            print(line)
    if len(failed) > 8:
        print("... and %d more failed: %s" % (len(failed) - 8, " ".join(failed[8:])))
    if notrun:
        print("%d not run (a test they need failed): %s" % (len(notrun), cut(" ".join(notrun), 400)))


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    build, junit = sys.argv[1], sys.argv[2]
    wall = int(sys.argv[3]) if len(sys.argv) > 3 else None
    tests = []
    outputs = {}
    for tc in ET.parse(junit).getroot().iter("testcase"):
        status = {"run": "passed", "fail": "FAILED", "notrun": "NOT RUN"}.get(tc.get("status"), tc.get("status"))
        tests.append((tc.get("name"), float(tc.get("time") or 0), status))
        out = tc.find("system-out")
        outputs[tc.get("name")] = out.text if out is not None and out.text else ""
    width = min(max([len(t[0]) for t in tests] + [40]), WIDTH)
    print("%-*s %8s  %s" % (width, "step", "seconds", "result"))
    print("%s %s  %s" % ("-" * width, "-" * 8, "-" * 6))
    rows = {}

    def rows_of(boot):
        """suite_rows(), read once a boot."""
        if boot not in rows:
            rows[boot] = suite_rows(build, boot)
        return rows[boot]

    small = 0
    small_n = 0
    for name, secs, status in sorted(tests, key=lambda t: -t[1]):
        if secs < 1.0:
            small += secs
            small_n += 1
            continue
        boot = boot_of(name)
        cpu = read_int(os.path.join(build, "vm", boot, "cpu-seconds")) if boot else None
        if cpu is not None:
            status += " (the guest's CPU: %d s)" % cpu
        print("%-*s %8.0f  %s" % (width, cut(name, width), secs, status))
        if boot:
            for sname, ssecs, sst, _ in rows_of(boot):
                procs = read_int(os.path.join(build, "vm", boot, "suites", sname, "processes"))
                if procs is not None:
                    sst += ", %d processes" % procs
                print("%-*s %8s  %s" % (width, "    suite " + sname,
                                         "-" if ssecs is None else ssecs, sst))
    print("%-*s %8.0f  (%d tests under a second each)" % (width, "the rest", small, small_n))
    print("%-*s %8.0f" % (width, "sum of the steps (two run at a time)",
                          sum(t[1] for t in tests)))
    if wall is not None:
        print("%-*s %8d  (%dm%02ds)" % (width, "wall clock of ctest", wall, wall // 60, wall % 60))
    # Every boot's suites, the ones not in the table too.
    vm = os.path.join(build, "vm")
    boots = sorted(os.listdir(vm)) if os.path.isdir(vm) else []
    for i, what in enumerate(("skips", "allowances (the environment's failures, with evidence)")):
        marks = [(boot, sname, why)
                 for boot in boots
                 for sname, _, _, m in rows_of(boot) for why in m[i]]
        print()
        print("%s in the guests' suites: %d" % (what, len(marks)))
        for boot, name, why in marks:
            print("  %s %s: %s" % (boot, name, cut(why, 300)))
    boots = run_boots(build)
    if boots is not None:
        print()
        print("guest boots in this run: %d, of which retries: %d (at most 2 in a run: tools/vm/boot-budget.sh)"
              % boots)
    failures(build, tests, outputs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
