#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Turns the raw results of tools/bench/rnbd-bench-guest.sh into table.md,
results.json and chart.png (if matplotlib is there).

usage: report.py [--kver K] [--rounds N] [--seconds S] RAW_DIR OUT_DIR

RAW_DIR holds inv-Y/ and/or inv-N/ with, per round R, server (ours,
upstream) and case: rR-SERVER-CASE.json (fio) and rR-SERVER-CASE.cpu (the
/proc/stat "cpu" line just before and just after the fio job), and
rR-ceiling-write.txt / rR-ceiling-read.txt (ib_write_bw / ib_read_bw).
"""
import argparse
import json
import os
import re
import statistics
import sys

CASES = ["randread-4k-qd1", "randread-4k-qd32", "randwrite-4k-qd1", "randwrite-4k-qd32",
         "read-128k-seq", "write-128k-seq", "mixed-70r-4k64k-qd8"]
# Which perftest run bounds a sequential case: an rnbd read makes the server
# RDMA-write into the client's buffer, an rnbd write makes it RDMA-read.
CEILING_OF = {"read-128k-seq": "write", "write-128k-seq": "read"}
SERVERS = ["ours", "upstream"]
# What the second server is called in the output (--other): upstream, or a
# baseline build of ours (rnbd-bench.sh BASELINE=DIR).
OTHER = "upstream"


def fio_result(path):
    text = open(path).read()
    if "{" not in text:
        return None  # a run that did not finish (or is being written)
    job = json.loads(text[text.index("{"):])["jobs"][0]
    r, w = job["read"], job["write"]
    return {"iops": r["iops"] + w["iops"],
            "mibs": (r["bw"] + w["bw"]) / 1024.0,
            "ios": r["total_ios"] + w["total_ios"]}


def cpu_ticks(path):
    """Busy guest CPU ticks between the two /proc/stat lines: user, nice,
    system, irq and softirq (not idle, iowait or steal)."""
    lines = [l.split() for l in open(path) if l.startswith("cpu ")]
    if len(lines) != 2:
        return None
    busy = lambda f: sum(int(f[i]) for i in (1, 2, 3, 6, 7))
    return busy(lines[1]) - busy(lines[0])


def perftest_mibs(path):
    """perftest's "BW average[MB/sec]" (its MB is 2^20 bytes) of the row of
    128 KiB messages, or None (no such row, or 0)."""
    if not os.path.exists(path):
        return None
    for line in open(path):
        f = line.split()
        if len(f) >= 5 and f[0] == "131072" and all(re.fullmatch(r"[0-9.]+", x) for x in f[:5]):
            bw = float(f[3])
            return bw if bw > 0 else None  # it printed 0.00 once here: no result
    return None


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def collect(raw):
    clk = int(open(os.path.join(raw, "clk_tck")).read()) if os.path.exists(
        os.path.join(raw, "clk_tck")) else 100
    data = {}
    for inv in ("Y", "N"):
        d = os.path.join(raw, f"inv-{inv}")
        if not os.path.isdir(d):
            continue
        rounds = sorted({int(m.group(1)) for n in os.listdir(d)
                         for m in [re.match(r"r(\d+)-", n)] if m})
        per = {"rounds": rounds, "cases": {}, "ceiling": {"write": [], "read": []}}
        for r in rounds:
            for kind in ("write", "read"):
                per["ceiling"][kind].append(perftest_mibs(os.path.join(d, f"r{r}-ceiling-{kind}.txt")))
        for case in CASES:
            rows = []
            for r in rounds:
                row = {}
                for s in SERVERS:
                    base = os.path.join(d, f"r{r}-{s}-{case}")
                    if not os.path.exists(base + ".json"):
                        break
                    res = fio_result(base + ".json")
                    if res is None:
                        break
                    ticks = cpu_ticks(base + ".cpu") if os.path.exists(base + ".cpu") else None
                    res["cpu_us_per_io"] = (ticks * 1e6 / clk / res["ios"]
                                            if ticks is not None and res["ios"] else None)
                    row[s] = res
                if len(row) == len(SERVERS):
                    rows.append(row)
            if rows:
                per["cases"][case] = rows
        data[inv] = per
    return data


def ratio(a, b):
    return a / b if a is not None and b else None


def summarize(data):
    summary = {}
    for inv, per in data.items():
        cs = {}
        for case, rows in per["cases"].items():
            e = {}
            for s in SERVERS:
                e[s] = {k: spread([row[s][k] for row in rows]) for k in ("iops", "mibs", "cpu_us_per_io")}
            e["ratio"] = spread([ratio(row["ours"]["iops"], row["upstream"]["iops"]) for row in rows])
            e["cpu_ratio"] = spread([ratio(row["ours"]["cpu_us_per_io"], row["upstream"]["cpu_us_per_io"])
                                     for row in rows])
            if case in CEILING_OF:
                ceil = per["ceiling"][CEILING_OF[case]]
                for s in SERVERS:
                    e[f"{s}_of_ceiling"] = spread([ratio(row[s]["mibs"], c)
                                                   for row, c in zip(rows, ceil)])
            cs[case] = e
        summary[inv] = {"rounds": len(per["rounds"]), "cases": cs,
                        "ceiling": {k: spread(v) for k, v in per["ceiling"].items()}}
    return summary


def fmt(x, digits=0):
    return "–" if x is None else f"{x:.{digits}f}"


def fmt_spread(s, digits=2):
    if s is None:
        return "–"
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"


def med(s, digits=0):
    return "–" if s is None else fmt(s["median"], digits)


def table(summary, head):
    out = [head, "",
           f"Medians over the rounds; ratios are ours/{OTHER} per round (each round of ours "
           f"is paired with the {OTHER} run of the same round): median (min–max). "
           "CPU µs/IO: busy guest CPU time (user+nice+system+irq+softirq from /proc/stat, "
           "both vCPUs, fio included) over the fio job divided by the I/Os it completed; "
           "a CPU ratio below 1 means ours costs less per I/O.", "",
           f"| case | always_invalidate | ours IOPS | ours MiB/s | {OTHER} IOPS | {OTHER} MiB/s "
           f"| IOPS ours/{OTHER} | ours CPU µs/IO | {OTHER} CPU µs/IO | CPU/IO ours/{OTHER} |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for case in CASES:
        for inv, sm in summary.items():
            e = sm["cases"].get(case)
            if not e:
                continue
            out.append(f"| {case} | {inv} | {med(e['ours']['iops'])} | {med(e['ours']['mibs'], 1)} "
                       f"| {med(e['upstream']['iops'])} | {med(e['upstream']['mibs'], 1)} "
                       f"| {fmt_spread(e['ratio'])} | {med(e['ours']['cpu_us_per_io'])} "
                       f"| {med(e['upstream']['cpu_us_per_io'])} | {fmt_spread(e['cpu_ratio'])} |")
    if any(sm["ceiling"]["write"] or sm["ceiling"]["read"] for sm in summary.values()):
        out += ["", "Raw RDMA, meant as the ceiling: `ib_write_bw` / `ib_read_bw` (perftest, RDMA CM, "
                "128 KiB messages, one QP, a fixed message count) on the same rxe0 as the rnbd "
                "session (10.77.0.1 to itself), once per round, MiB/s median (min–max). An rnbd "
                "read makes the server RDMA-write, so `read-128k-seq` is divided by "
                "`ib_write_bw`, `write-128k-seq` by `ib_read_bw`, each round's fio MiB/s by that "
                "round's perftest result; a ratio above 1 means the rnbd path moved more than "
                "perftest did.", "",
                "| always_invalidate | ib_write_bw MiB/s | ib_read_bw MiB/s "
                f"| read-128k-seq ours/ceiling | {OTHER}/ceiling "
                f"| write-128k-seq ours/ceiling | {OTHER}/ceiling |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        for inv, sm in summary.items():
            cells = []
            for case in ("read-128k-seq", "write-128k-seq"):
                e = sm["cases"].get(case, {})
                cells += [fmt_spread(e.get("ours_of_ceiling")), fmt_spread(e.get("upstream_of_ceiling"))]
            out.append(f"| {inv} | {fmt_spread(sm['ceiling']['write'], 1)} "
                       f"| {fmt_spread(sm['ceiling']['read'], 1)} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def chart(summary, path, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: no matplotlib (apt-get install python3-matplotlib): no chart", file=sys.stderr)
        return False
    labels, series = [], {"ratio": [], "cpu_ratio": []}
    for case in CASES:
        for inv, sm in summary.items():
            e = sm["cases"].get(case)
            if e:
                labels.append(f"{case}\ninv={inv}")
                for k in series:
                    series[k].append(e[k])
    if not labels:
        return False
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(labels) + 1.5), 4.6))
    styles = {"ratio": (f"IOPS ours/{OTHER}", "tab:blue", -0.15),
              "cpu_ratio": (f"CPU per I/O ours/{OTHER}", "tab:orange", 0.15)}
    for k, (name, color, dx) in styles.items():
        xs, ys, lo, hi = [], [], [], []
        for i, s in enumerate(series[k]):
            if s is None:
                continue
            xs.append(i + dx)
            ys.append(s["median"])
            lo.append(s["median"] - s["min"])
            hi.append(s["max"] - s["median"])
        ax.errorbar(xs, ys, yerr=[lo, hi], fmt="o", color=color, capsize=3, label=name)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("ratio (median, whiskers min–max)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kver", default="?")
    ap.add_argument("--rounds", default="?")
    ap.add_argument("--seconds", default="?")
    ap.add_argument("--note", default="")
    ap.add_argument("--other", default="upstream", help="the second server's name in the output")
    ap.add_argument("raw")
    ap.add_argument("out")
    a = ap.parse_args()
    global OTHER
    OTHER = a.other
    data = collect(a.raw)
    if not any(per["cases"] for per in data.values()):
        print(f"report: no results in {a.raw}", file=sys.stderr)
        return 1
    summary = summarize(data)
    rounds = sorted({sm["rounds"] for sm in summary.values()})
    head = (f"rnbd-bench, kernel {a.kver}, {'/'.join(map(str, rounds))} round(s) per server, "
            f"{a.seconds} s per case" + (f"; {a.note}" if a.note else ""))
    md = table(summary, head)
    os.makedirs(a.out, exist_ok=True)
    open(os.path.join(a.out, "table.md"), "w").write(md)
    json.dump({"raw": data, "summary": summary}, open(os.path.join(a.out, "results.json"), "w"),
              indent=1)
    print(md)
    png = os.path.join(a.out, "chart.png")
    if chart(summary, png, f"rnbd over our rtrs-server vs {OTHER}, {a.kver}, "
                           f"{'/'.join(map(str, rounds))} rounds, {a.seconds} s per case"):
        print(f"chart: {png}")
    print(f"table: {os.path.join(a.out, 'table.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
