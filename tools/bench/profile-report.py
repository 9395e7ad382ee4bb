#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Side-by-side summary of tools/bench/profile-guest.sh's perf reports.

usage: profile-report.py [--note TEXT] [--top N] --seconds S RAW_DIR OUT_DIR

RAW_DIR holds, per round R and server S: rR-S-stat.csv (perf stat -I 1000
-x,) and rR-S.times (when perf stat and the counted fio run started and
ended), rR-S.json (fio of the sampled run), rR-S.cpu (/proc/stat before
and after the sampled window), rR-S-dso.txt, rR-S-sym.txt and
rR-S-incl.txt (perf report --stdio -n: by module, by symbol, by symbol
with its callees). Writes OUT_DIR/profile.md, ours beside
upstream, medians over the rounds: the busy share of the window as
/proc/stat and as perf saw it, then shares of perf's busy samples (idle
left out) by module, by symbol (self) and by symbol with its callees.
"""
import argparse
import json
import os
import re
import statistics
import sys

SERVERS = ("ours", "upstream")
# Overhead [Children] Samples Object [k] Symbol
LINE = re.compile(r"^\s+([\d.]+)%\s+(?:([\d.]+)%\s+)?(\d+)\s+(\S+)(?:\s+\[(.)\]\s+(.+?))?\s*$")
IDLE = {"default_idle", "native_safe_halt", "cpu_idle_poll", "acpi_idle_do_entry",
        "intel_idle", "mwait_idle", "default_idle_call", "arch_cpu_idle", "do_idle",
        "pv_native_safe_halt", "acpi_safe_halt", "cpuidle_enter_state", "cpu_startup_entry",
        "start_secondary", "secondary_startup_64_no_verify", "rest_init", "arch_call_rest_init",
        "start_kernel", "x86_64_start_reservations", "x86_64_start_kernel", "cpuidle_idle_call",
        "arch_cpu_idle_enter", "default_enter_idle", "amd_e400_idle"}


def parse(path):
    """[(object, symbol or None, samples, children percent or None)]"""
    rows = []
    for line in open(path):
        m = LINE.match(line)
        if m:
            children = float(m.group(1)) if m.group(2) is not None else None
            rows.append((m.group(4), m.group(6), int(m.group(3)), children))
    return rows


def fio_iops(path):
    text = open(path).read()
    job = json.loads(text[text.index("{"):])["jobs"][0]
    return job["read"]["iops"] + job["write"]["iops"]


def stat_busy(path):
    """The busy share of the window from two /proc/stat cpu lines."""
    lines = [l.split() for l in open(path) if l.startswith("cpu ")]
    if len(lines) != 2:
        return None
    busy = lambda f: sum(int(f[i]) for i in (1, 2, 3, 6, 7))
    total = lambda f: sum(int(x) for x in f[1:9])
    t = total(lines[1]) - total(lines[0])
    return (busy(lines[1]) - busy(lines[0])) / t if t else None


def stat_counts(path, times):
    """{event: count} of a perf stat -I -x, file, summed over the intervals
    that lie inside the load: [fio start + 1 s, fio end - 1 s], perf's
    interval times taken from its start (times: the .times file)."""
    t = open(times).read().split()
    when = dict(zip(t[0::2], (float(x) for x in t[1::2])))
    lo = when["fio_start"] - when["stat_start"] + 1.0
    hi = when["fio_end"] - when["stat_start"] - 1.0
    counts, prev, intervals = {}, 0.0, set()
    for line in open(path):
        f = line.strip().split(",")
        if len(f) < 4 or not re.fullmatch(r"[\d.]+", f[0]) or not re.fullmatch(r"\d+", f[1]):
            continue
        end = float(f[0])
        # perf prints an interval's end; its start is the previous end
        if end - 1.0 >= lo - 0.05 and end <= hi:
            counts[f[3]] = counts.get(f[3], 0) + int(f[1])
            intervals.add(f[0])
    return counts, len(intervals)


def one(base):
    counts, intervals = stat_counts(base + "-stat.csv", base + ".times")
    # the I/Os of the counted window: /dev/rnbd0's completions, counted in it
    n = counts.pop("block:block_rq_complete", None)
    per_io = {e: c / n for e, c in counts.items()} if n else {}
    ios = {"counted": n, "intervals": intervals}
    dsos = {d: n for d, _, n, _ in parse(base + "-dso.txt")}
    total = sum(dsos.values())
    syms = parse(base + "-sym.txt")
    idle = sum(n for _, sym, n, _ in syms if sym in IDLE)
    busy = total - idle
    if busy <= 0:
        return None
    if "[kernel.kallsyms]" in dsos:
        dsos["[kernel.kallsyms]"] -= idle
    incl = {}
    for d, sym, _, children in parse(base + "-incl.txt"):
        if sym and sym not in IDLE and children is not None:
            incl[f"{d} {sym}"] = 100.0 * children * total / 100.0 / busy
    return {"iops": fio_iops(base + ".json"), "per_io": per_io,
            "ios": ios,
            "stat_busy": stat_busy(base + ".cpu") if os.path.exists(base + ".cpu") else None,
            "perf_busy": busy / total, "busy_samples": busy,
            "dso": {d: 100.0 * n / busy for d, n in dsos.items()},
            "sym": {f"{d} {sym}": 100.0 * n / busy for d, sym, n, _ in syms
                    if sym and sym not in IDLE},
            "incl": incl}


def collect(raw):
    rounds = sorted({int(m.group(1)) for n in os.listdir(raw)
                     for m in [re.match(r"r(\d+)-(ours|upstream)-sym\.txt$", n)] if m})
    data = []
    for r in rounds:
        row = {}
        for s in SERVERS:
            base = os.path.join(raw, f"r{r}-{s}")
            if not all(os.path.exists(base + x) for x in (".json", ".times", "-stat.csv", "-sym.txt", "-dso.txt", "-incl.txt")):
                break
            res = one(base)
            if res is None:
                break
            row[s] = res
        if len(row) == len(SERVERS):
            data.append(row)
    return data


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def f(x, digits=1):
    return "–" if x is None else f"{x:.{digits}f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--note", default="")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("raw")
    ap.add_argument("out")
    a = ap.parse_args()
    data = collect(a.raw)
    if not data:
        print(f"profile-report: no complete round in {a.raw}", file=sys.stderr)
        return 1
    val = lambda s, k: med([row[s][k] for row in data])
    sub = lambda s, k, key: med([row[s][k].get(key) for row in data])
    out = [f"profile: {len(data)} round(s); {a.note}", "",
           "Counted (perf stat -a, the whole guest: fio, rnbd-client, rtrs-client, rxe, the "
           "server, rnbd-server and null_blk), events per I/O completed on /dev/rnbd0 (its "
           "`block:block_rq_complete`, counted with them), over the 1 s intervals inside the "
           "load (perf stat runs from before the load to after it), medians over the rounds:", "",
           "| event | ours | upstream | ours/upstream |", "|---|---:|---:|---:|"]
    events = sorted({e for row in data for sv in SERVERS for e in row[sv]["per_io"]})
    for e in events:
        o, u = sub("ours", "per_io", e), sub("upstream", "per_io", e)
        out.append(f"| `{e}` | {f(o, 2)} | {f(u, 2)} | {f(o / u, 2) if o is not None and u else '–'} |")
    out += ["", "Sampled (perf record -a -g, a second window under the same load):", "",
           "| | ours | upstream |", "|---|---:|---:|",
           f"| fio IOPS | {f(val('ours', 'iops'), 0)} | {f(val('upstream', 'iops'), 0)} |",
           f"| busy share of the window, /proc/stat | {f(100 * (val('ours', 'stat_busy') or 0))} % "
           f"| {f(100 * (val('upstream', 'stat_busy') or 0))} % |",
           f"| busy share of perf's samples | {f(100 * val('ours', 'perf_busy'))} % "
           f"| {f(100 * val('upstream', 'perf_busy'))} % |",
           f"| busy samples | {f(val('ours', 'busy_samples'), 0)} | {f(val('upstream', 'busy_samples'), 0)} |",
           "",
           "Under TCG the guest's sampling timer reaches a busy vCPU late (the samples land "
           "where interrupts are enabled again, and fewer of them than the busy time), so "
           "perf's busy share is below /proc/stat's: read the shares below as where the busy "
           "samples fell, not as time.", "",
           "Share of the busy samples by module (%):", "",
           "| module | ours | upstream |", "|---|---:|---:|"]
    dsos = sorted({d for row in data for s in SERVERS for d in row[s]["dso"]},
                  key=lambda d: -max(sub("ours", "dso", d) or 0, sub("upstream", "dso", d) or 0))
    for d in dsos:
        o, u = sub("ours", "dso", d), sub("upstream", "dso", d)
        if max(o or 0, u or 0) >= 0.5:
            out.append(f"| `{d}` | {f(o)} | {f(u)} |")
    for key, title in (("sym", "by symbol, self"), ("incl", "by symbol with its callees")):
        out += ["", f"Share of the busy samples {title} (%), the top {a.top} by the larger of the two:", "",
                "| module symbol | ours | upstream |", "|---|---:|---:|"]
        syms = sorted({k for row in data for s in SERVERS for k in row[s][key]},
                      key=lambda k: -max(sub("ours", key, k) or 0, sub("upstream", key, k) or 0))
        for k in syms[:a.top]:
            out.append(f"| `{k}` | {f(sub('ours', key, k))} | {f(sub('upstream', key, k))} |")
    md = "\n".join(out) + "\n"
    os.makedirs(a.out, exist_ok=True)
    open(os.path.join(a.out, "profile.md"), "w").write(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
