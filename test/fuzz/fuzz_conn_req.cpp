// SPDX-License-Identifier: GPL-2.0
// The connection request's private data, as any client (or anyone who can
// reach the CM port) sends it: parse_conn_req never reads past it, refuses
// with ECONNRESET and a reason, and what it accepts is exactly the bytes
// given and survives a round trip through the client's encoder. The
// connection response (what our client tool parses) likewise.
#include <cstdint>
#include <cstring>

#include "core/wire.h"
#include "fuzz_check.h"
#include "rt/errno.h"

using namespace wire;

namespace {

u16 le16_at(const u8* p) { return static_cast<u16>(p[0] | (p[1] << 8)); }

void conn_req(const u8* data, usize size) {
    const char* why = nullptr;
    auto r = parse_conn_req(rt::Bytes(data, size), &why);
    if (!r.ok()) {
        FUZZ_CHECK(r.error() == rt::errc::connreset);
        FUZZ_CHECK(why != nullptr && why[0] != '\0');
        // The refusals, in the reference server's order.
        if (size < sizeof(ConnReq)) return;
        const u16 cid = le16_at(data + 6), cid_num = le16_at(data + 8);
        FUZZ_CHECK(le16_at(data + 2) != kMagic || version_major(le16_at(data + 4)) != kProtoMajor ||
                   cid_num > kMaxCidNum || cid >= cid_num);
        return;
    }
    FUZZ_CHECK(size >= sizeof(ConnReq));
    const ConnReqFields& f = r.value();
    // Exactly the bytes at their offsets.
    FUZZ_CHECK(le16_at(data + 2) == kMagic);
    FUZZ_CHECK(f.version == le16_at(data + 4));
    FUZZ_CHECK(version_major(f.version) == kProtoMajor);
    FUZZ_CHECK(f.cid == le16_at(data + 6));
    FUZZ_CHECK(f.cid_num == le16_at(data + 8));
    FUZZ_CHECK(f.recon_cnt == le16_at(data + 10));
    FUZZ_CHECK(f.cid < f.cid_num && f.cid_num <= kMaxCidNum);
    FUZZ_CHECK(std::memcmp(f.sess_uuid.b, data + 12, 16) == 0);
    FUZZ_CHECK(std::memcmp(f.paths_uuid.b, data + 28, 16) == 0);
    FUZZ_CHECK(f.first_conn == ((data[44] & kFirstConn) != 0));

    // The client's encoding: the same fields; CM bytes and reserved zero.
    u8 buf[sizeof(ConnReq) + 8];
    std::memset(buf, 0xa5, sizeof(buf));
    auto n = encode_conn_req(rt::MutBytes(buf, sizeof(buf)), f);
    FUZZ_CHECK(n.ok() && n.value() == sizeof(ConnReq));
    FUZZ_CHECK(buf[sizeof(ConnReq)] == 0xa5);  // nothing past it
    FUZZ_CHECK(buf[0] == 0 && buf[1] == 0);
    FUZZ_CHECK(std::memcmp(buf + 2, data + 2, 42) == 0);
    FUZZ_CHECK(buf[44] == (data[44] & kFirstConn));
    for (usize i = 45; i < sizeof(ConnReq); ++i) FUZZ_CHECK(buf[i] == 0);
    auto again = parse_conn_req(rt::Bytes(buf, sizeof(ConnReq)));
    FUZZ_CHECK(again.ok());
    const ConnReqFields& g = again.value();
    FUZZ_CHECK(g.version == f.version && g.cid == f.cid && g.cid_num == f.cid_num &&
               g.recon_cnt == f.recon_cnt && g.sess_uuid == f.sess_uuid &&
               g.paths_uuid == f.paths_uuid && g.first_conn == f.first_conn);
    // Too little room: refused, nothing written.
    u8 small[sizeof(ConnReq) - 1];
    std::memset(small, 0xa5, sizeof(small));
    auto none = encode_conn_req(rt::MutBytes(small, sizeof(small)), f);
    FUZZ_CHECK(!none.ok() && none.error() == rt::errc::nobufs);
    for (u8 b : small) FUZZ_CHECK(b == 0xa5);
}

void conn_rsp(const u8* data, usize size) {
    auto r = parse_conn_rsp(rt::Bytes(data, size));
    if (!r.ok()) {
        FUZZ_CHECK(r.error() == rt::errc::connreset);
        return;
    }
    FUZZ_CHECK(size >= sizeof(ConnRsp));
    const ConnRspFields& f = r.value();
    FUZZ_CHECK(f.err >= -32767 && f.err <= 32768);
    u8 buf[sizeof(ConnRsp)];
    auto n = encode_conn_rsp(rt::MutBytes(buf, sizeof(buf)), f);
    if (f.err < 0) {
        // A positive errno field cannot be encoded by the server.
        FUZZ_CHECK(!n.ok() && n.error() == rt::errc::inval);
        return;
    }
    FUZZ_CHECK(n.ok() && n.value() == sizeof(ConnRsp));
    // The fields the client reads, as given; reserved bytes zero.
    FUZZ_CHECK(std::memcmp(buf, data, 20) == 0);
    for (usize i = 20; i < sizeof(ConnRsp); ++i) FUZZ_CHECK(buf[i] == 0);
    auto again = parse_conn_rsp(rt::Bytes(buf, sizeof(buf)));
    FUZZ_CHECK(again.ok() && again.value().err == f.err &&
               again.value().queue_depth == f.queue_depth &&
               again.value().chunk_size() == f.chunk_size() && again.value().flags == f.flags);
}

// The server's own answers, from fuzzed parameters: what the client reads
// back is what the server meant.
void server_answers(const u8* data, usize size) {
    if (size < 12) return;
    const u16 qd = le16_at(data);
    u32 chunk = 0, hdr = 0;
    std::memcpy(&chunk, data + 2, 4);
    std::memcpy(&hdr, data + 6, 4);
    const int err = le16_at(data + 10);  // 0..65535: past 32768 refused
    u8 buf[sizeof(ConnRsp)];
    auto a = encode_conn_rsp(rt::MutBytes(buf, sizeof(buf)), conn_rsp_accept(qd, chunk, hdr, data[0] & 1));
    FUZZ_CHECK(a.ok());
    auto pa = parse_conn_rsp(rt::Bytes(buf, sizeof(buf)));
    FUZZ_CHECK(pa.ok() && pa.value().err == 0 && pa.value().queue_depth == qd &&
               static_cast<u32>(pa.value().chunk_size()) == chunk &&
               pa.value().max_hdr_size == hdr &&
               pa.value().flags == ((data[0] & 1) ? kMsgNewRkey : 0u));
    auto j = encode_conn_rsp(rt::MutBytes(buf, sizeof(buf)), conn_rsp_reject(err));
    if (err > 32768) {
        FUZZ_CHECK(!j.ok() && j.error() == rt::errc::inval);
        return;
    }
    FUZZ_CHECK(j.ok());
    auto pj = parse_conn_rsp(rt::Bytes(buf, sizeof(buf)));
    FUZZ_CHECK(pj.ok() && pj.value().err == err);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    conn_req(data, size);
    conn_rsp(data, size);
    server_answers(data, size);
    return 0;
}
