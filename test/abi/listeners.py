#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Checks that our server listens as upstream's does, on every RDMA device:
# an AF_INET6 "any" cm_id on RDMA_PS_TCP and an AF_IB "any" cm_id on
# RDMA_PS_IB whose service id is the IB port space's plus PORT.
# Reads the RDMA CM ids from the kernel's RDMA netlink (what `rdma resource
# show cm_id` reads). That tool cannot show the AF_IB one: it skips every
# cm_id whose address is neither AF_INET nor AF_INET6 (iproute2 6.1).
# Usage: listeners.py PORT [MODULE_NAME]   (MODULE_NAME: rtrs_server)
# Prints one ok:/FAIL: line per device and kind; exits 1 on a FAIL.
import socket
import struct
import sys

NETLINK_RDMA = 20
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
RDMA_NL_NLDEV = 5
CMD_GET, CMD_RES_CM_ID_GET = 1, 11
# enum rdma_nldev_attr (include/uapi/rdma/rdma_netlink.h)
ATTR_DEV_INDEX, ATTR_DEV_NAME = 1, 2
ATTR_RES_STATE, ATTR_RES_KERN_NAME = 27, 29
ATTR_RES_CM_ID, ATTR_RES_CM_ID_ENTRY = 30, 31
ATTR_RES_PS, ATTR_RES_SRC_ADDR = 32, 33
RDMA_PS_TCP, RDMA_PS_IB = 0x0106, 0x013F
RDMA_IB_IP_PS_IB = 0x00000000013F0000
CM_STATE_LISTEN = 8  # enum rdma_cm_state
AF_INET6, AF_IB = 10, 27


def attrs(data):
    """The attributes in data, as {type: [payload, ...]}."""
    out = {}
    while len(data) >= 4:
        length, kind = struct.unpack_from("=HH", data)
        if length < 4:
            break
        out.setdefault(kind & 0x3FFF, []).append(data[4:length])
        data = data[(length + 3) & ~3:]
    return out


def dump(sock, cmd, payload=b""):
    """The attributes of each message of a dump of cmd."""
    kind = (RDMA_NL_NLDEV << 10) + cmd
    sock.send(struct.pack("=IHHII", 16 + len(payload), kind,
                          NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + payload)
    msgs = []
    while True:
        buf = sock.recv(1 << 20)
        while len(buf) >= 16:
            length, mtype = struct.unpack_from("=IH", buf)
            if mtype == NLMSG_DONE:
                return msgs
            if mtype == NLMSG_ERROR:
                err = struct.unpack_from("=i", buf, 16)[0]
                if err:
                    raise OSError(-err, "RDMA netlink dump %d" % cmd)
            else:
                msgs.append(attrs(buf[16:length]))
            buf = buf[(length + 3) & ~3:]


def main():
    port = int(sys.argv[1])
    name = sys.argv[2] if len(sys.argv) > 2 else "rtrs_server"
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_RDMA)
    devs = {}
    for m in dump(sock, CMD_GET):
        idx = struct.unpack("=I", m[ATTR_DEV_INDEX][0])[0]
        devs[idx] = m[ATTR_DEV_NAME][0].rstrip(b"\0").decode()
    if not devs:
        print("FAIL: no RDMA device")
        return 1
    fail = 0
    for idx, dev in sorted(devs.items()):
        req = struct.pack("=HHI", 8, ATTR_DEV_INDEX, idx)
        found = {"TCP": [], "IB": []}
        for m in dump(sock, CMD_RES_CM_ID_GET, req):
            for table in m.get(ATTR_RES_CM_ID, []):
                for entry in attrs(table).get(ATTR_RES_CM_ID_ENTRY, []):
                    e = attrs(entry)
                    owner = e.get(ATTR_RES_KERN_NAME, [b""])[0].rstrip(b"\0").decode()
                    state = e[ATTR_RES_STATE][0][0]
                    ps = struct.unpack("=I", e[ATTR_RES_PS][0])[0]
                    addr = e.get(ATTR_RES_SRC_ADDR, [b"\0" * 128])[0]
                    family = struct.unpack_from("=H", addr)[0]
                    if owner != name or state != CM_STATE_LISTEN:
                        continue
                    if ps == RDMA_PS_TCP and family == AF_INET6:
                        p = struct.unpack_from("!H", addr, 2)[0]
                        any6 = addr[8:24] == b"\0" * 16
                        found["TCP"].append("[::]:%d" % p if any6 else "not any")
                    elif ps == RDMA_PS_IB and family == AF_IB:
                        gid = addr[8:24]
                        sid, mask = struct.unpack_from("!QQ", addr, 24)
                        found["IB"].append("sid 0x%x mask 0x%x%s" % (
                            sid, mask, "" if gid == b"\0" * 16 else " not any"))
                    else:
                        found.setdefault("other", []).append(
                            "ps 0x%x family %d" % (ps, family))
        want = {"TCP": "[::]:%d" % port,
                "IB": "sid 0x%x mask 0x%x" % (RDMA_IB_IP_PS_IB | port, (1 << 64) - 1)}
        for kind in ("TCP", "IB"):
            if found[kind] == [want[kind]]:
                print("ok: %s: %s listens on ps %s, %s" % (dev, name, kind, want[kind]))
            else:
                print("FAIL: %s: %s's ps %s listeners are %s, want [%s]" % (
                    dev, name, kind, found[kind], want[kind]))
                fail = 1
        if found.get("other"):
            print("FAIL: %s: %s has other listeners: %s" % (dev, name, found["other"]))
            fail = 1
    return fail


if __name__ == "__main__":
    sys.exit(main())
