#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# wire.py: the wires of tools/vm/two-hosts. Each wire joins a NIC of the
# server's QEMU and one of the client's, both QEMU socket back ends that
# connect over TCP to this relay on 127.0.0.1 (QEMU sends each Ethernet
# frame with a 4-byte big-endian length before it). The relay forwards
# whole frames to the other end, or drops them while the wire is cut: a
# partition in the middle, the NICs keep their carrier (QEMU's set_link
# takes the carrier away instead, which the guest's soft-RoCE sees). TCP
# loses nothing while the wire is up (a UDP relay lost frames under load:
# soft-RoCE retransmitted, and failed its QP on the MR registration it
# re-executed, "rxe_reg_fast_mr: mr->lkey ... not free").
#
# usage: wire.py CONTROL_DIR SECONDS WIRES
#   listens on 2 x WIRES ports the kernel picks, writes CONTROL_DIR/ports
#   ("server-port client-port" a line, one per wire), accepts one server
#   and one client connection a wire (and a new one after an end went: a
#   guest booted again), relays for at most SECONDS. Wire N is
#   cut while CONTROL_DIR/cutN exists. CONTROL_DIR/counts: frames relayed
#   and dropped, a wire and direction a line, written every second.
import os, socket, struct, sys, threading, time

ctl, limit, n = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
end = time.monotonic() + limit

lsocks = []
for _ in range(2 * n):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    lsocks.append(s)
with open(os.path.join(ctl, ".ports"), "w") as f:
    for i in range(n):
        f.write("%d %d\n" % (lsocks[2 * i].getsockname()[1], lsocks[2 * i + 1].getsockname()[1]))
os.rename(os.path.join(ctl, ".ports"), os.path.join(ctl, "ports"))

counts = {}


def recv_exact(c, k):
    b = b""
    while len(b) < k:
        d = c.recv(k - len(b))
        if not d:
            raise EOFError
        b += d
    return b


def end_of(i, k):
    """End k (0 the server's, 1 the client's) of wire i: accepts that
    QEMU's connection, and again after it went (the guest was stopped and
    booted again); relays its frames to the other end while both are
    there and the wire is not cut, drops them otherwise (counted)."""
    ls = lsocks[2 * i + k]
    cut = os.path.join(ctl, "cut%d" % i)
    key = "wire%d %s" % (i, ("server>client", "client>server")[k])
    while time.monotonic() < end:
        ls.settimeout(max(1.0, end - time.monotonic()))
        try:
            c, _ = ls.accept()
        except OSError:
            return
        c.settimeout(None)
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        ends[i][k] = c
        try:
            while True:
                hdr = recv_exact(c, 4)
                frame = recv_exact(c, struct.unpack(">I", hdr)[0])
                dst = ends[i][1 - k]
                if dst is None or os.path.exists(cut):
                    counts[key][1] += 1
                    continue
                try:
                    dst.sendall(hdr + frame)
                    counts[key][0] += 1
                except OSError:
                    counts[key][1] += 1  # the other end is going
        except (EOFError, OSError):
            pass  # this end went (its guest ended or was stopped)
        ends[i][k] = None
        c.close()


ends = [[None, None] for _ in range(n)]
for i in range(n):
    for k in (0, 1):
        counts["wire%d %s" % (i, ("server>client", "client>server")[k])] = [0, 0]
        threading.Thread(target=end_of, args=(i, k), daemon=True).start()
while time.monotonic() < end:
    time.sleep(1)
    with open(os.path.join(ctl, ".counts"), "w") as f:
        for k in sorted(counts):
            f.write("%s relayed %d dropped %d\n" % (k, counts[k][0], counts[k][1]))
    os.rename(os.path.join(ctl, ".counts"), os.path.join(ctl, "counts"))
