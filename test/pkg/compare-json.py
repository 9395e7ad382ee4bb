#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
# Runs `rtrs-srv list -j` (and `-j -p`, and `-j show SESSION`) and compares
# what it says, field by field, with the sysfs files read directly, and with
# what the test set up: the session's paths, each "NAME=HCA" (e.g.
# "ip:10.77.0.2@ip:10.77.0.1=rxe0"), port 1, no I/O yet (counters 0).
# Prints one "ok: ..." or "FAIL: ..." line a check; exit status 1 if any
# check failed.
# Usage: compare-json.py CLASS_DIR SESSION NAME=HCA...
import json
import os
import subprocess
import sys

klass, session = sys.argv[1], sys.argv[2]
expected = dict(a.split("=", 1) for a in sys.argv[3:])
failures = 0

PATH_KEYS = ["path", "hca_name", "hca_port", "src_addr", "dst_addr",
             "read_cnt", "read_bytes", "write_cnt", "write_bytes", "inflight"]
COUNTERS = ["read_cnt", "read_bytes", "write_cnt", "write_bytes", "inflight"]


def check(ok, what):
    global failures
    if ok:
        print(f"ok: {what}")
    else:
        failures += 1
        print(f"FAIL: {what}")
    return ok


def equal(got, want, what):
    return check(got == want and type(got) is type(want),
                 f"{what}: {got!r}" if got == want else f"{what}: got {got!r}, want {want!r}")


def rtrs_srv(*args):
    r = subprocess.run(["rtrs-srv", *args], capture_output=True, text=True)
    check(r.returncode == 0 and r.stderr == "",
          f"rtrs-srv {' '.join(args)}: exit {r.returncode}, stderr {r.stderr!r}")
    try:
        return r.stdout, json.loads(r.stdout)
    except ValueError as e:
        check(False, f"rtrs-srv {' '.join(args)}: not JSON ({e}): {r.stdout!r}")
        return r.stdout, None


def sysfs_line(path):
    """A one-line attribute: its text without the newline it must end in."""
    with open(path) as f:
        text = f.read()
    check(text.endswith("\n") and text.count("\n") == 1,
          f"{path} is one line ending in a newline: {text!r}")
    return text.rstrip("\n")


def sysfs_path(session_dir, name):
    d = os.path.join(session_dir, "paths", name)
    words = sysfs_line(os.path.join(d, "stats", "rdma")).split(" ")
    check(len(words) == 5 and all(w.lstrip("-").isdigit() for w in words),
          f"{d}/stats/rdma has five numbers: {words}")
    v = {
        "path": name,
        "hca_name": sysfs_line(os.path.join(d, "hca_name")),
        "hca_port": int(sysfs_line(os.path.join(d, "hca_port"))),
        "src_addr": sysfs_line(os.path.join(d, "src_addr")),
        "dst_addr": sysfs_line(os.path.join(d, "dst_addr")),
    }
    for key, word in zip(COUNTERS, words):
        v[key] = int(word)
    return v


text, listed = rtrs_srv("list", "-j")
if listed is None:
    sys.exit(1)
check(text.count("\n") == 1 and text.endswith("\n"), "list -j is one line")
_, pretty = rtrs_srv("list", "-j", "-p")
check(pretty == listed, "list -j -p says the same as list -j")
check(isinstance(listed, list), "list -j is an array")

# The sessions: the same as in sysfs.
sessions = sorted(os.listdir(klass))
equal(sorted(s.get("session") for s in listed), sessions, "the sessions, as in sysfs")
mine = [s for s in listed if s.get("session") == session]
if not check(len(mine) == 1, f"session {session!r} listed once"):
    sys.exit(1)
mine = mine[0]
equal(sorted(mine), ["paths", "session"], "the session object's keys")

# Its paths: the same as in sysfs, and the ones the client opened.
sdir = os.path.join(klass, session)
in_sysfs = sorted(n for n in os.listdir(os.path.join(sdir, "paths"))
                  if os.path.isdir(os.path.join(sdir, "paths", n)))
equal(sorted(p.get("path") for p in mine["paths"]), in_sysfs, "the paths, as in sysfs")
equal(in_sysfs, sorted(expected), "the paths the client opened")

for p in mine["paths"]:
    name = p.get("path")
    if name not in in_sysfs:
        continue
    equal(list(p), PATH_KEYS, f"{name}: the keys, in order")
    fs = sysfs_path(sdir, name)
    for key in PATH_KEYS:
        equal(p.get(key), fs[key], f"{name}: {key} as in sysfs")
    # ... and what the sysfs files say is what was set up.
    src, dst = name.split("@")
    equal(fs["src_addr"], src, f"{name}: src_addr is the client's address")
    equal(fs["dst_addr"], dst, f"{name}: dst_addr is the server's address")
    if name in expected:
        equal(fs["hca_name"], expected[name], f"{name}: hca_name")
    equal(fs["hca_port"], 1, f"{name}: hca_port")
    for key in COUNTERS:
        equal(fs[key], 0, f"{name}: {key} (no I/O)")

# show -j: the same paths, with no errors.
_, shown = rtrs_srv("-j", "show", session)
if shown is not None and check(isinstance(shown, list) and len(shown) == 1,
                               "show -j: an array of one session"):
    s = shown[0]
    equal(s.get("session"), session, "show -j: the session")
    equal(s.get("error"), None, "show -j: no session error")
    paths = s.get("paths", [])
    equal([{k: v for k, v in p.items() if k != "errors"} for p in paths], mine["paths"],
          "show -j: the paths as list -j has them")
    for p in paths:
        equal(p.get("errors"), {}, f"show -j: {p.get('path')}: no attribute errors")

sys.exit(1 if failures else 0)
