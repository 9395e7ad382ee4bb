#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The module's stack: every function's frame and the deepest call chains.

Reads what gcc wrote beside each object of a module build made with
KCFLAGS="-fstack-usage -fcallgraph-info=su" (tools/checks/module-lint.sh
w1): X.su (each function's frame, in bytes, return address included) and
X.ci (each function's calls). Prints every function of the module by frame,
largest first, and the deepest chains of calls inside the module from the
places the kernel calls it: the completion handler (a CQ's, polled in a
work item: IB_POLL_WORKQUEUE) through the core to the upper layer's
callback, the CM handler, the work items, and the deepest of all. Fails when

  - a frame exceeds --frame-limit (CONFIG_FRAME_WARN is 2048 on Debian),
  - a frame is of unbounded size (alloca or a variable length array),
  - a chain inside the module exceeds --chain-limit,
  - the module calls itself recursively (no chain has a bound then),
  - an object of the build has no .su or .ci beside it (nothing measured).

The chains count the module's own frames only: what the kernel spends
below the entry (interrupt, softirq, the CQ's poll loop) and above each
call out of the module (ib_post_send into the driver, the upper layer's
rdma_ev) comes on top.

Usage: stack.py [--frame-limit B] [--chain-limit B] [--summary FILE]
                [--frames FILE] BUILD_DIR
"""
import argparse
import os
import re
import sys

# Where the kernel enters the module, by the name of the function (static
# functions are named by file too in the call graph: matched on the end).
ENTRIES = [
    ("completion (the CQ's work item)", "rtrs_glue_done"),
    ("CM event handler", "rtrs_glue_cm_handler"),
    ("work item", "rtrs_env_work_fn"),
]
# The upper layer's I/O callback is called through ulp->ops.rdma_ev here.
ULP_CALL = "rtrs_env_ulp_rdma_ev"

NODE_RE = re.compile(r'^node: \{ title: "([^"]*)" label: "([^"]*)"')
EDGE_RE = re.compile(r'^edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)"')
SIZE_RE = re.compile(r'\\n(\d+) bytes \(([a-z,]+)\)$')


def short(title, labels):
    """A readable name: the label's first line (demangled by gcc) without
    its return type and parameters: core::Path::on_wc."""
    label = labels.get(title, title).split("\\n", 1)[0]
    depth, cut = 0, len(label)
    for i, ch in enumerate(label):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0:
            cut = i
            break
    head, depth, start = label[:cut], 0, 0
    for i, ch in enumerate(head):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == " " and depth == 0:
            start = i + 1
    return head[start:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frame-limit", type=int, default=1024)
    ap.add_argument("--chain-limit", type=int, default=4096)
    ap.add_argument("--summary", help="write the summary lines here too")
    ap.add_argument("--frames", help="write the table of frames here too")
    ap.add_argument("build")
    a = ap.parse_args()

    src = os.path.join(a.build, "src")
    objs, sus, cis = [], [], []
    for d, _, files in os.walk(src):
        for f in files:
            p = os.path.join(d, f)
            if f.endswith(".o"):
                objs.append(p)
            elif f.endswith(".su"):
                sus.append(p)
            elif f.endswith(".ci"):
                cis.append(p)
    fail = []
    if not objs:
        fail.append(f"no objects under {src}: build it first (tools/checks/module-lint.sh w1)")
    for o in objs:
        base = o[:-2]
        for ext in (".su", ".ci"):
            if not os.path.exists(base + ext):
                fail.append(f"{base + ext} missing: built without -fstack-usage -fcallgraph-info=su?")

    # Frames.
    frames = []  # (bytes, qualifiers, where, name)
    for p in sus:
        with open(p) as f:
            for line in f:
                loc, size, qual = line.rstrip("\n").split("\t")
                m = re.match(r"^(.*?):(\d+):(\d+):(.*)$", loc)
                # (absolute up to 6.12; 7.x's Kbuild names them from the build folder)
                path = m.group(1)
                if os.path.isabs(path):
                    path = os.path.relpath(path, a.build)
                where = f"{path}:{m.group(2)}"
                frames.append((int(size), qual, where, m.group(4)))
    frames.sort(key=lambda x: (-x[0], x[2]))
    print(f"== stack frames of the module's {len(frames)} functions, largest first "
          f"(limit {a.frame_limit} bytes; CONFIG_FRAME_WARN is 2048 on Debian)")
    table = [f"{size:6d}  {qual:16s} {where}  {name}" for size, qual, where, name in frames]
    print("\n".join(table))
    if a.frames:
        with open(a.frames, "w") as f:
            f.write("\n".join(table) + "\n")
    for size, qual, where, name in frames:
        if size > a.frame_limit:
            fail.append(f"{name} ({where}): a frame of {size} bytes, above the limit of {a.frame_limit}")
        if "dynamic" in qual and "bounded" not in qual:
            fail.append(f"{name} ({where}): a frame of unbounded size ({qual})")

    # The call graph.
    size_of, labels, calls = {}, {}, {}
    for p in cis:
        with open(p) as f:
            for line in f:
                m = NODE_RE.match(line)
                if m:
                    title, label = m.group(1), m.group(2)
                    labels.setdefault(title, label)
                    s = SIZE_RE.search(label)
                    if s:
                        size_of[title] = int(s.group(1))
                    continue
                m = EDGE_RE.match(line)
                if m:
                    calls.setdefault(m.group(1), set()).add(m.group(2))

    # deepest[t]: (bytes, chain) of the costliest chain from t within the
    # module (t's frame included); callees outside the module count 0.
    deepest, state, cycles = {}, {}, []

    def walk(t, stack):
        if t not in size_of:
            return (0, [])
        if state.get(t) == "done":
            return deepest[t]
        if state.get(t) == "open":
            cycles.append(stack[stack.index(t):] + [t])
            return (0, [])
        state[t] = "open"
        best = (0, [])
        for c in sorted(calls.get(t, ())):
            r = walk(c, stack + [t])
            if r[0] > best[0]:
                best = r
        state[t] = "done"
        deepest[t] = (size_of[t] + best[0], [t] + best[1])
        return deepest[t]

    sys.setrecursionlimit(10000)
    for t in sorted(size_of):
        walk(t, [])
    for c in cycles:
        fail.append("recursion: " + " -> ".join(short(t, labels) for t in c))

    def find(name):
        return [t for t in size_of if t == name or t.endswith(":" + name)]

    def fmt(chain):
        return " -> ".join(f"{short(t, labels)} ({size_of[t]})" for t in chain)

    summary = []
    # The completion's chain to the upper layer's callback: the costliest
    # chain from the handler that passes through ULP_CALL.
    to_ulp = {}

    def walk_to(t, goal):
        if t in to_ulp:
            return to_ulp[t]
        to_ulp[t] = None  # (no cycles: checked above)
        if t == goal:
            r = (size_of[t], [t])
        else:
            r = None
            for c in sorted(calls.get(t, ())):
                if c not in size_of:
                    continue
                sub = walk_to(c, goal)
                if sub and (r is None or sub[0] > r[0]):
                    r = sub
            if r:
                r = (size_of[t] + r[0], [t] + r[1])
        to_ulp[t] = r
        return r

    ulp = find(ULP_CALL)
    for what, name in ENTRIES:
        ts = find(name)
        if not ts:
            fail.append(f"no function {name} ({what}) in the call graph: ENTRIES in {sys.argv[0]} is stale")
            continue
        for t in ts:
            b, chain = deepest[t]
            summary.append(f"deepest chain from the {what}: {b} bytes: {fmt(chain)}")
            if what.startswith("completion") and ulp and not cycles:
                to_ulp.clear()
                r = walk_to(t, ulp[0])
                if r:
                    summary.append(f"completion to the upper layer's rdma_ev: {r[0]} bytes "
                                   f"before the ULP's own frames: {fmt(r[1])}")
                else:
                    fail.append(f"no chain from {name} to {ULP_CALL}: the completion chain is not measured")
    if deepest:
        top = max(deepest, key=lambda t: (deepest[t][0], t))
        b, chain = deepest[top]
        summary.append(f"deepest chain in the module: {b} bytes (limit {a.chain_limit}): {fmt(chain)}")
        if b > a.chain_limit:
            fail.append(f"the chain from {short(top, labels)} takes {b} bytes, above the limit of {a.chain_limit}")
    if frames:
        summary.insert(0, "largest frames: " + ", ".join(
            f"{s} {w}" for s, _, w, _ in frames[:3]) + f" (limit {a.frame_limit})")
    print()
    print("== chains inside the module (its own frames; the kernel's below and above come on top)")
    for s in summary:
        print(s)
    if a.summary:
        with open(a.summary, "w") as f:
            f.write("\n".join(summary) + "\n")
    if fail:
        print()
        for f in fail:
            print("FAIL: " + f, file=sys.stderr)
        return 1
    print(f"ok: {len(frames)} frames within {a.frame_limit} bytes, chains within {a.chain_limit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
