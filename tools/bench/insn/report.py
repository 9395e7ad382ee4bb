#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per I/O from an insn-guest.sh run (tools/bench/insn/insn.sh).

Reads OUT/marks.txt, DUMPS/dump-NNNN.txt (the plugin's counts per guest
virtual address between two markers), OUT/sections-SERVER-INVAL.txt (where
the modules' text sections were loaded) and OUT/SERVER-INVAL-CASE.json
(fio). Maps addresses to modules and functions with the .ko files given
(readelf: section sizes and FUNC symbols) and prints, per case:
instructions per I/O in our rtrs_server, in upstream's rtrs_server, in
rtrs_core, upstream's server with its share of rtrs_core (rtrs_core in its
run less rtrs_core in ours: our server does not use rtrs_core, the client
does), the ratio ours / upstream, the whole guest's and the kernel's
instructions per I/O, and the top functions. Writes OUT/report.json.
"""
import argparse
import bisect
import json
import os
import re
import subprocess
import sys


def elf_text(ko):
    """{section: (size, [(start, end, name)] sorted)} of the text sections."""
    secs = {}
    idx = {}
    for line in subprocess.run(["readelf", "-SW", ko], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m and m.group(2).startswith(".text"):
            idx[int(m.group(1))] = m.group(2)
            secs[m.group(2)] = (int(m.group(6), 16), [])
    for line in subprocess.run(["readelf", "-sW", ko], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC" and f[6].isdigit() and int(f[6]) in idx:
            v, size = int(f[1], 16), int(f[2], 0)
            secs[idx[int(f[6])]][1].append((v, v + max(size, 1), f[7]))
    for s in secs.values():
        s[1].sort()
    return secs


def read_dump(path):
    total = kernel = 0
    counts = {}
    with open(path) as f:
        for line in f:
            a, b = line.split()
            if a == "total":
                total = int(b)
            elif a == "kernel":
                kernel = int(b)
            else:
                counts[int(a, 16)] = int(b)
    return total, kernel, counts


def attribute(counts, ranges):
    """ranges: [(lo, hi, module, section, syms)]; returns {module: n}, {module: {func: n}}."""
    per_mod, per_fn = {}, {}
    los = [r[0] for r in ranges]
    for a, n in counts.items():
        i = bisect.bisect_right(los, a) - 1
        if i >= 0 and a < ranges[i][1]:
            lo, _, mod, sec, syms = ranges[i]
            off = a - lo
            j = bisect.bisect_right(syms, (off, float("inf"), "")) - 1
            fn = syms[j][2] if j >= 0 and off < syms[j][1] else sec
        else:
            mod, fn = "other", "other"
        per_mod[mod] = per_mod.get(mod, 0) + n
        per_fn.setdefault(mod, {})
        per_fn[mod][fn] = per_fn[mod].get(fn, 0) + n
    return per_mod, per_fn


def summary_row(case, inv, o, u):
    """The report's row of a case from each server's figures (o: ours, u:
    upstream's, each None when that server did not run): instructions per
    I/O of its module. A server whose module got no instruction in the
    count (its sections not read, or none of its text sections met) has no
    figure, never a 0: SERVER_missing instead."""
    row = {"case": case, "inval": inv}
    if o and "rtrs_server" in o["modules"]:
        row["ours"] = o["modules"]["rtrs_server"]
    elif o:
        row["ours_missing"] = True
    if u and "rtrs_server" not in u["modules"]:
        row["upstream_missing"] = True
        u = None
    if u:
        row["upstream_srv"] = u["modules"]["rtrs_server"]
        row["upstream_core"] = u["modules"].get("rtrs_core", 0) - (
            o["modules"].get("rtrs_core", 0) if o else 0)
        row["upstream"] = row["upstream_srv"] + row["upstream_core"]
    if "ours" in row and u:
        row["ratio"] = row["ours"] / row["upstream"]
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ko", action="append", default=[], help="ours=KO, upstream=KO, rtrs_core=KO")
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--dumps", required=True, help="the plugin's dump-NNNN.txt files")
    ap.add_argument("out", help="the guest's results (marks.txt, sections, fio)")
    a = ap.parse_args()
    kos = dict(k.split("=", 1) for k in a.ko)
    elf = {k: elf_text(v) for k, v in kos.items()}
    res = {}
    for line in open(os.path.join(a.out, "marks.txt")):
        no, srv, inv, case = line.split()
        dump = os.path.join(a.dumps, "dump-%04d.txt" % int(no))
        total, kernel, counts = read_dump(dump)
        ranges = []
        for sl in open(os.path.join(a.out, "sections-%s-%s.txt" % (srv, inv))):
            mod, sec, addr = sl.split()
            key = srv if mod == "rtrs_server" else mod
            if key in elf and sec in elf[key]:
                size, syms = elf[key][sec]
                ranges.append((int(addr, 16), int(addr, 16) + size, mod, sec, syms))
        ranges.sort()
        per_mod, per_fn = attribute(counts, ranges)
        job = json.load(open(os.path.join(a.out, "%s-%s-%s.json" % (srv, inv, case))))["jobs"][0]
        ios = job["read"]["total_ios"] + job["write"]["total_ios"]
        res.setdefault("%s %s" % (case, inv), {})[srv] = {
            "ios": ios, "total": total / ios, "kernel": kernel / ios,
            "modules": {m: n / ios for m, n in per_mod.items()},
            "top": sorted(((n / ios, f) for f, n in per_fn.get("rtrs_server", {}).items()),
                          reverse=True)[:a.top],
            "core_top": sorted(((n / ios, f) for f, n in per_fn.get("rtrs_core", {}).items()),
                               reverse=True)[:a.top],
        }
    rows = []
    print("| case | inval | I/Os | ours rtrs_server | upstream rtrs_server | upstream rtrs_core share | "
          "upstream total | ratio ours/upstream | guest instr/I/O ours | upstream | kernel ours | upstream |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key, r in res.items():
        case, inv = key.split()
        o, u = r.get("ours"), r.get("upstream")
        row = summary_row(case, inv, o, u)
        if row.get("upstream_missing"):
            u = None
        rows.append(row)
        f = lambda k, d=r: "%.1f" % k if isinstance(k, float) else str(k)
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            case, inv, "/".join(str(r[s]["ios"]) for s in r),
            f(row.get("ours", "-")), f(row.get("upstream_srv", "-")), f(row.get("upstream_core", "-")),
            f(row.get("upstream", "-")), "%.2f" % row["ratio"] if "ratio" in row else "-",
            f(o["total"]) if o else "-", f(u["total"]) if u else "-",
            f(o["kernel"]) if o else "-", f(u["kernel"]) if u else "-"))
    for key, r in res.items():
        for srv, v in r.items():
            print("\n%s, %s: top functions (instructions per I/O)" % (key, srv))
            for n, fn in v["top"]:
                print("  %8.1f  rtrs_server %s" % (n, fn))
            if srv == "upstream":
                for n, fn in v["core_top"][:max(3, a.top // 2)]:
                    print("  %8.1f  rtrs_core %s (client's and server's)" % (n, fn))
    with open(os.path.join(a.out, "report.json"), "w") as f:
        json.dump({"rows": rows, "detail": res}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
