#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Turns the raw results of tools/bench/scale-guest.sh (RAW_DIR/results.tsv:
"round server metric count value" lines) into scale.md and scale.json.

usage: scale-report.py [--kver K] [--note TEXT] RAW_DIR OUT_DIR

Per measurement: the median (min-max) of each server over its rounds, and
the median (min-max) of the per-round ratios ours/upstream (ours paired with
the upstream run of the same round).
"""
import argparse
import json
import os
import statistics
import sys

SERVERS = ("ours", "upstream")


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def load(path):
    """{(metric, count): {round: {server: value}}}"""
    data = {}
    for line in open(path):
        f = line.split()
        if len(f) != 5:
            continue
        r, server, metric, count, value = int(f[0]), f[1], f[2], int(f[3]), float(f[4])
        data.setdefault((metric, count), {}).setdefault(r, {})[server] = value
    return data


def derived(data, clk):
    """Adds cpu_us_per_io for each fio job: the busy ticks of the window in
    which every job ran, over the I/Os of that window (aggregate IOPS times
    its length)."""
    for job in ("randread", "randwrite"):
        iops = data.get((f"{job}_iops", 8), {})
        win = data.get((f"{job}_window_s", 8), {})
        ticks = data.get((f"{job}_cpu_ticks", 8), {})
        per = {}
        for r, row in iops.items():
            for s, v in row.items():
                w, t = win.get(r, {}).get(s), ticks.get(r, {}).get(s)
                if w and t is not None and v:
                    per.setdefault(r, {})[s] = t * 1e6 / clk / (v * w)
        if per:
            data[(f"{job}_cpu_us_per_io", 8)] = per


def summarize(data):
    out = {}
    for key, rounds in data.items():
        e = {s: spread([row.get(s) for row in rounds.values()]) for s in SERVERS}
        e["ratio"] = spread([row["ours"] / row["upstream"] for row in rounds.values()
                             if row.get("ours") is not None and row.get("upstream")])
        out[key] = e
    return out


def fmt_spread(s, digits):
    if s is None:
        return "–"
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"


ROWS = [
    # metric, unit label, scale, digits
    ("map_s", "seconds until all are mapped", 1.0, 2),
    ("memavail_kib", "MemAvailable taken, MiB per session", 1 / 1024.0, 1),
    ("slab_kib", "Slab grown, MiB per session", 1 / 1024.0, 2),
    ("unmap_s", "seconds until the server holds none", 1.0, 2),
]


def table(summary, head):
    counts = sorted({c for (m, c) in summary if m == "map_s"})
    out = [head, "",
           "Sessions mapped at once through upstream rnbd-client (one path each, one null_blk "
           "each): medians (min–max) over the rounds; the ratio is ours/upstream per round. "
           "Memory per session is the reading before mapping minus the reading with all "
           "mapped, divided by the count (page cache dropped before both; the client's side "
           "is included, the same for both servers).", "",
           "| sessions | measure | ours | upstream | ours/upstream |",
           "|---:|---|---:|---:|---:|"]
    for n in counts:
        for metric, label, scale, digits in ROWS:
            e = summary.get((metric, n))
            if not e:
                continue
            per = 1.0 / n if metric in ("memavail_kib", "slab_kib") else 1.0
            cell = {s: None if e[s] is None else {k: (v * scale * per if k != "n" else v)
                                                   for k, v in e[s].items()} for s in SERVERS}
            out.append(f"| {n} | {label} | {fmt_spread(cell['ours'], digits)} "
                       f"| {fmt_spread(cell['upstream'], digits)} | {fmt_spread(e['ratio'], 2)} |")
    jobs = [j for j in ("randread", "randwrite") if (f"{j}_iops", 8) in summary]
    if jobs:
        out += ["", "8 sessions of 2 paths each (rxe0 and rxe1), one fio job per device at once "
                "(4k, libaio, direct, queue depth 8 each: 64 I/Os in flight): aggregate IOPS, "
                "and busy guest CPU time (user+nice+system+irq+softirq, both vCPUs, fio "
                "included) per I/O over the window in which every job was doing I/O.", "",
                "| job | measure | ours | upstream | ours/upstream |",
                "|---|---|---:|---:|---:|"]
        for j in jobs:
            for metric, label, digits in ((f"{j}_iops", "IOPS", 0),
                                          (f"{j}_cpu_us_per_io", "CPU µs per I/O", 0)):
                e = summary.get((metric, 8))
                if e:
                    out.append(f"| {j} 4k | {label} | {fmt_spread(e['ours'], digits)} "
                               f"| {fmt_spread(e['upstream'], digits)} | {fmt_spread(e['ratio'], 2)} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kver", default="?")
    ap.add_argument("--note", default="")
    ap.add_argument("raw")
    ap.add_argument("out")
    a = ap.parse_args()
    tsv = os.path.join(a.raw, "results.tsv")
    if not os.path.exists(tsv):
        print(f"scale-report: no {tsv}", file=sys.stderr)
        return 1
    clk_path = os.path.join(a.raw, "clk_tck")
    clk = int(open(clk_path).read()) if os.path.exists(clk_path) else 100
    data = load(tsv)
    if not data:
        print(f"scale-report: no results in {tsv}", file=sys.stderr)
        return 1
    derived(data, clk)
    summary = summarize(data)
    rounds = sorted({r for rows in data.values() for r in rows})
    head = (f"scale, kernel {a.kver}, {len(rounds)} round(s) per server"
            + (f"; {a.note}" if a.note else ""))
    md = table(summary, head)
    os.makedirs(a.out, exist_ok=True)
    open(os.path.join(a.out, "scale.md"), "w").write(md)
    json.dump({f"{m}/{c}": v for (m, c), v in summary.items()},
              open(os.path.join(a.out, "scale.json"), "w"), indent=1)
    print(md)
    print(f"table: {os.path.join(a.out, 'scale.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
