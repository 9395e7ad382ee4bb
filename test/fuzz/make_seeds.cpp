// SPDX-License-Identifier: GPL-2.0
// Writes the seed corpus of every fuzz target into DIR/<target>/ (the
// committed one is test/fuzz/corpus): a handful of well-formed inputs and
// the classic malformed ones, so that fuzzing starts from a session that
// comes up and does I/O rather than from nothing.
//   make_seeds test/fuzz/corpus
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/rtrs_core.h"
#include "core/wire.h"
#include "session_script.h"

using namespace wire;
using Bytes = std::vector<std::uint8_t>;

namespace {

std::string g_dir;

void save(const char* target, const char* name, const Bytes& b) {
    std::string dir = g_dir + "/" + target;
    mkdir(g_dir.c_str(), 0755);
    mkdir(dir.c_str(), 0755);
    std::string path = dir + "/" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(b.data(), 1, b.size(), f) != b.size()) {
        std::perror(path.c_str());
        std::exit(1);
    }
    std::fclose(f);
}

template <class T>
Bytes raw(const T& v) {
    Bytes b(sizeof(T));
    std::memcpy(b.data(), &v, sizeof(T));
    return b;
}

// --- conn_req -------------------------------------------------------------------

ConnReq conn_req(u16 cid, u16 cid_num, bool first) {
    ConnReq m;
    std::memset(&m, 0, sizeof(m));
    m.magic.set(kMagic);
    m.version.set(kProtoVersion);
    m.cid.set(cid);
    m.cid_num.set(cid_num);
    for (int i = 0; i < 16; ++i) {
        m.sess_uuid.b[i] = static_cast<u8>(0x10 + i);
        m.paths_uuid.b[i] = static_cast<u8>(0x80 + i);
    }
    m.first_conn = first ? kFirstConn : 0;
    return m;
}

void conn_req_seeds() {
    save("conn_req", "first", raw(conn_req(0, 2, true)));
    ConnReq again = conn_req(1, 2, false);
    again.recon_cnt.set(3);
    save("conn_req", "reconnect", raw(again));
    Bytes padded = raw(conn_req(0, 1, true));
    padded.resize(92);  // the CM's zero padding on IB
    save("conn_req", "padded", padded);
    ConnReq magic = conn_req(0, 2, true);
    magic.magic.set(0x1bbe);
    save("conn_req", "wrong_magic", raw(magic));
    ConnReq major = conn_req(0, 2, true);
    major.version.set(0x0300);
    save("conn_req", "major_3", raw(major));
    save("conn_req", "cid_num_4097", raw(conn_req(0, 4097, true)));
    Bytes shortened = raw(conn_req(0, 2, true));
    shortened.resize(20);
    save("conn_req", "short", shortened);
    // A response (the client parses these).
    ConnRsp rsp;
    std::memset(&rsp, 0, sizeof(rsp));
    rsp.magic.set(kMagic);
    rsp.version.set(kProtoVersion);
    rsp.neg_errno.set(0xff98);  // -ECONNRESET
    save("conn_req", "reject_rsp", raw(rsp));
}

// --- info_req -------------------------------------------------------------------

Bytes info_req(const std::string& name, u16 type = 0) {
    InfoReq m;
    std::memset(&m, 0, sizeof(m));
    m.type.set(type);
    std::memcpy(m.pathname, name.data(), name.size() < kNameMax ? name.size() : kNameMax);
    return raw(m);
}

void info_req_seeds() {
    save("info_req", "blk0", info_req("blk0"));
    save("info_req", "slash", info_req("a/b"));
    save("info_req", "dot", info_req("a.b"));
    save("info_req", "empty", info_req(""));
    save("info_req", "unterminated", info_req(std::string(255, 'x')));
    save("info_req", "longest", info_req(std::string(254, 'y')));
    save("info_req", "wrong_type", info_req("blk0", 3));
    Bytes shortened = info_req("blk0");
    shortened.resize(100);
    save("info_req", "short", shortened);
    // The server's answers, as our client parses them: 2 regions of 8
    // chunks of 16 KiB (the first bytes also give check_info_rsp a queue
    // depth of 16 and a chunk of 16 KiB), and a new-rkey message.
    Bytes rsp(info_rsp_size(2));
    InfoRspHdr h;
    std::memset(&h, 0, sizeof(h));
    h.type.set(static_cast<u16>(MsgType::InfoRsp));
    h.sg_cnt.set(2);
    std::memcpy(rsp.data(), &h, sizeof(h));
    for (int i = 0; i < 2; ++i) {
        SgDesc d;
        d.addr.set(0x100000000ull + i * 0x20000ull);
        d.key.set(0x1234 + i);
        d.len.set(8 * 16384);
        std::memcpy(rsp.data() + sizeof(h) + i * sizeof(d), &d, sizeof(d));
    }
    rsp[8] = 16;
    rsp[9] = 0;
    rsp[10] = 4;  // 4 << 12 = 16 KiB
    save("info_req", "info_rsp", rsp);
    RkeyRsp rk;
    rk.type.set(static_cast<u16>(MsgType::RkeyRsp));
    rk.buf_id.set(5);
    rk.rkey.set(0x2201);
    save("info_req", "rkey_rsp", raw(rk));
}

// --- io_req -----------------------------------------------------------------------

struct IoSeed {
    u32 qd = 16, chunk_size = 16384, imm = 0, off = 0;
    u8 max_desc = 0;  // index: kMaxReadDesc, 0, 3, 0xffff
    Bytes chunk;

    Bytes bytes() const {
        Bytes b;
        for (u32 v : {qd, chunk_size, imm, off})
            for (int i = 0; i < 4; ++i) b.push_back(static_cast<u8>(v >> (8 * i)));
        b.push_back(max_desc);
        b.insert(b.end(), chunk.begin(), chunk.end());
        return b;
    }
};

template <class T>
void place(Bytes& chunk, u32 off, const T& v) {
    if (chunk.size() < off + sizeof(T)) chunk.resize(off + sizeof(T));
    std::memcpy(chunk.data() + off, &v, sizeof(T));
}

void io_req_seeds() {
    {
        IoSeed s;
        s.off = 24;
        s.imm = imm_encode(ImmType::IoReq, io_req_payload(3, 24, chunk_bits(16)));
        s.chunk.assign(24, 0x33);
        RdmaWrite w;
        w.type.set(static_cast<u16>(MsgType::Write));
        w.usr_len.set(8);
        place(s.chunk, 24, w);
        save("io_req", "write", s.bytes());
        w.usr_len.set(30);  // longer than what lies before it
        place(s.chunk, 24, w);
        save("io_req", "write_usr_too_long", s.bytes());
    }
    for (int variant = 0; variant < 3; ++variant) {
        IoSeed s;
        s.off = variant == 0 ? 0 : 16;
        s.max_desc = variant == 2 ? 2 : 0;
        s.imm = imm_encode(ImmType::IoReq, io_req_payload(15, s.off, chunk_bits(16)));
        s.chunk.assign(s.off, 0x44);
        const u16 n = variant == 2 ? 2 : 1;
        RdmaReadHdr r;
        r.type.set(static_cast<u16>(MsgType::Read));
        r.usr_len.set(static_cast<u16>(s.off));
        r.flags.set(variant == 1 ? kMsgNeedInval : 0);
        r.sg_cnt.set(n);
        place(s.chunk, s.off, r);
        for (u16 i = 0; i < n; ++i) {
            SgDesc d;
            d.addr.set(0xC0FFEE000ull + i * 0x1000);
            d.key.set(0x4242);
            d.len.set(4096);
            place(s.chunk, static_cast<u32>(s.off + sizeof(r) + i * sizeof(d)), d);
        }
        const char* names[] = {"read", "read_inval", "read_two_descs"};
        save("io_req", names[variant], s.bytes());
    }
    {
        IoSeed s;
        s.qd = 512;
        s.chunk_size = 131072;
        s.imm = imm_encode(ImmType::HbMsg, 0);
        s.off = 1;
        s.chunk = {9, 0, 0, 0};
        save("io_req", "heartbeat_bad_type", s.bytes());
    }
}

// --- core_session -----------------------------------------------------------------

using script::Writer;

// The header: always_invalidate, queue depth and chunk size indexes
// (session_script.h), the device profile, the budget, the failure point.
Writer header(bool inval, unsigned qd_idx, unsigned cs_idx, unsigned profile, unsigned fail = 0) {
    Writer w;
    w.u8((inval ? 1 : 0) | (qd_idx << 1) | (cs_idx << 4) | (profile << 6));
    w.u8(15);  // 16 MiB of chunks
    w.u16(fail);
    return w;
}

// Connections are picked among the live ones in the order they were made:
// slot 0's come first in these scripts.
void session_seeds() {
    using namespace script;
    {
        // One path up; a write and a read, held and answered; a heartbeat;
        // the stats read and reset.
        Writer w = header(true, 0, 0, 0);
        w.op(Up).u8(0).u8(0);
        w.op(Io).u8(0).u8(1).u16(1).u16(100).u8(0).u16(8);  // write, 8-byte user header
        w.op(Complete).u8(1);                              // the local invalidation
        w.op(Answer).u8(0).u8(0);
        w.op(CompleteAll).u8(1);
        w.op(Io).u8(0).u8(1).u16(2).u16(0).u8(1).u16(0).u16(1).u8(1).u32(0x42).u32(4096);
        w.op(Complete).u8(1);
        w.op(AnswerAll).u8(0).u8(0);
        w.op(CompleteAll).u8(1);
        w.op(Advance).u16(5000 / 8);
        w.op(CompleteAll).u8(0);
        w.op(Immediate).u8(0).u32(imm_encode(ImmType::HbAck, 0));
        w.op(Immediate).u8(1).u32(imm_encode(ImmType::HbMsg, 0));
        w.op(Sysfs).u8(0).u8(RTRS_CORE_ATTR_STATS_RDMA).u8(0x80);
        w.op(Sysfs).u8(0).u8(RTRS_CORE_ATTR_STATS_RDMA).u8(1);
        w.op(Sysfs).u8(0).u8(RTRS_CORE_ATTR_SRC_ADDR).u8(0x80);
        w.op(SessApi).u8(0).u8(8).u8(1);
        save("core_session", "up_write_read", w.out);
    }
    {
        // Two paths of one session; a burst of writes answered with an
        // error, newest first; one path's client leaves, the other's is
        // disconnected through sysfs.
        Writer w = header(true, 0, 0, 0);
        w.op(Up).u8(0).u8(0);
        w.op(NewClient).u8(1).u8(7).u8(2).u8(3).u8(0).u8(1);  // a sibling of slot 0
        w.op(Up).u8(1).u8(0);
        w.op(Burst).u8(0).u8(1).u16(0).u8(8).u8(0);
        w.op(CompleteAll).u8(1);
        w.op(AnswerAll).u8(1).u8(1);
        w.op(CompleteAll).u8(1);
        w.op(CmEvent).u8(2).u8(RTRS_CORE_CM_DISCONNECTED).u32(0);
        w.op(Run);
        w.op(Sysfs).u8(0).u8(RTRS_CORE_ATTR_DISCONNECT).u8(0);
        w.op(Run);
        save("core_session", "two_paths", w.out);
    }
    {
        // No invalidation; the ULP answers inside its callback; the device
        // goes away while a request is held.
        Writer w = header(false, 4, 1, 0);
        w.op(UlpMode).u8(1);
        w.op(Up).u8(0).u8(1);
        w.op(Io).u8(0).u8(1).u16(3).u16(64).u8(0).u16(16);
        w.op(CompleteAll).u8(1);
        w.op(UlpMode).u8(0);
        w.op(Io).u8(0).u8(0).u16(4).u16(8).u8(0).u16(0);
        w.op(DeviceRemove).u8(0);
        save("core_session", "inline_answers_device_removal", w.out);
    }
    {
        // A handshake that stalls half-way; another whose info never comes.
        Writer w = header(true, 0, 0, 0);
        w.op(Connect).u8(0).u8(0).u8(1);
        w.op(Establish).u8(0);
        w.op(ConnectAll).u8(1);
        w.op(Advance).u16(30000 / 8);
        w.op(Run);
        save("core_session", "stalled", w.out);
    }
    {
        // Malformed requests and messages: raw private data, a request
        // with cid_num changed, a garbage info request, an unknown
        // immediate.
        Writer w = header(true, 0, 0, 0);
        w.op(ConnectRaw).u8(0).u8(0x80 | 20);
        for (int i = 0; i < 20; ++i) w.u8(i * 13);
        w.op(ConnectRaw).u8(0).u8(1).u8(0).u8(1).u8(8).u8(9).u8(0);
        w.op(ConnectAll).u8(2);
        w.op(RecvRaw).u8(0).u16(272).u16(8).u32(0x41410000).u32(0x00004141);
        w.op(Run);
        w.op(Up).u8(3).u8(2);
        w.op(Immediate).u8(1).u32(0x70000000);
        w.op(Run);
        save("core_session", "malformed", w.out);
    }
    {
        // A deep session on small queues (connection 1 sends 393 work
        // requests at a time): reads with invalidation wait for room.
        Writer w = header(true, 7, 1, 1);
        w.op(Up).u8(0).u8(0);
        w.op(Burst).u8(0).u8(1).u16(0).u8(120).u8(1);
        for (int i = 0; i < 4; ++i) w.op(CompleteAll).u8(1);
        w.op(AnswerAll).u8(0).u8(0);
        for (int i = 0; i < 4; ++i) w.op(CompleteAll).u8(1);
        save("core_session", "deep_small_queues", w.out);
    }
    {
        // The info response in batches on the smallest send queue; the ULP
        // refuses the second session.
        Writer w = header(true, 6, 0, 1);
        w.op(Up).u8(0).u8(0);
        w.op(UlpMode).u8(4);
        w.op(Up).u8(1).u8(1);
        w.op(Run);
        save("core_session", "batches_ulp_refuses", w.out);
    }
    {
        // Clients on IPv6 and on a GID; a zero-length message where only
        // immediates are expected.
        Writer w = header(true, 0, 0, 0);
        w.op(NewClient).u8(0).u8(40).u8(2).u8(2).u8(0).u8(8).u8(1);
        for (int i = 0; i < 16; ++i) w.u8(i == 0 ? 0xfd : i == 15 ? 2 : 0);  // fd00::2
        w.op(Up).u8(0).u8(0);
        w.op(NewClient).u8(1).u8(41).u8(1).u8(3).u8(0).u8(8).u8(2);
        for (int i = 0; i < 16; ++i) w.u8(i < 2 ? 0xfe : i == 15 ? 7 : 0);
        w.op(Up).u8(1).u8(1);
        w.op(Sysfs).u8(1).u8(RTRS_CORE_ATTR_SRC_ADDR).u8(0x80);
        w.op(ZeroSend).u8(1);
        w.op(Run);
        save("core_session", "ipv6_gid_zero_send", w.out);
    }
    {
        // Request headers that run past the chunk's end: failed, not read.
        Writer w = header(true, 0, 0, 0);
        w.op(Up).u8(0).u8(0);
        w.op(Io).u8(0).u8(1).u16(5).u16(2).u8(0x80).u16(0);  // a write 2 bytes before the end
        w.op(CompleteAll).u8(1);
        w.op(Io).u8(0).u8(1).u16(6).u16(12).u8(0x81).u16(0).u16(0).u8(1).u32(7).u32(512);
        w.op(CompleteAll).u8(1);
        save("core_session", "header_past_end", w.out);
    }
    {
        // Two more paths of a session from clients of an address family
        // the glue does not know: it reports them without address bytes,
        // so the second has the first's addresses and is refused (with
        // bytes, both would have the same sysfs name: found by fuzzing).
        Writer w = header(true, 0, 0, 0);
        w.op(Up).u8(0).u8(0);
        for (int n = 1; n <= 2; ++n) {
            w.op(NewClient).u8(n).u8(50 + n).u8(2).u8(2 + n).u8(0).u8(1 | 8);  // sibling of slot 0
            w.u8(3).u16(0xffff);
            for (int i = 0; i < 16; ++i) w.u8(n * 16 + i);
            w.op(Up).u8(n).u8(0);
        }
        save("core_session", "unknown_family", w.out);
    }
    {
        // A failure of the fake kernel half-way through a session's life.
        Writer w = header(true, 2, 1, 0, 60);
        w.op(Up).u8(0).u8(0);
        w.op(Burst).u8(0).u8(1).u16(0).u8(2).u8(0);
        w.op(CompleteFail).u8(1);
        w.op(Run);
        save("core_session", "failure_point", w.out);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_seeds DIR\n");
        return 2;
    }
    g_dir = argv[1];
    conn_req_seeds();
    info_req_seeds();
    io_req_seeds();
    session_seeds();
    return 0;
}
