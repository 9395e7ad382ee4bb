// SPDX-License-Identifier: GPL-2.0
// The RTRS wire format. The golden byte strings below were written by hand
// from the protocol's structure layouts (field order, little-endian fields,
// offsets as asserted in wire.h), never produced by the code under test; the
// errno expectations are the reference implementation's (see wire.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/rtrs_core.h"
#include "core/wire.h"

namespace {

using Buf = std::vector<std::uint8_t>;

// "bd 1b 00 02" -> bytes; whitespace is ignored.
Buf hex(const char* s) {
    Buf out;
    int hi = -1;
    for (; *s; ++s) {
        char c = *s;
        int v;
        if (c >= '0' && c <= '9') v = c - '0';
        else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
        else continue;
        if (hi < 0) {
            hi = v;
        } else {
            out.push_back(static_cast<std::uint8_t>(hi << 4 | v));
            hi = -1;
        }
    }
    EXPECT_EQ(hi, -1) << "odd number of hex digits";
    return out;
}

Buf zeros(std::size_t n) { return Buf(n, 0); }

rt::Bytes bytes(const Buf& b) { return rt::Bytes(b.data(), b.size()); }
rt::MutBytes mut(Buf& b) { return rt::MutBytes(b.data(), b.size()); }
rt::Bytes bytes(const std::string& s) {
    return rt::Bytes(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}
std::string str(rt::Bytes b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }

Buf cat(std::initializer_list<Buf> parts) {
    Buf out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

wire::Uuid uuid_from(std::uint8_t first) {
    wire::Uuid u{};
    for (int i = 0; i < 16; ++i) u.b[i] = static_cast<std::uint8_t>(first + i);
    return u;
}

// --- connection request -------------------------------------------------------

// cid 3 of 8, recon_cnt 0x0102, sess uuid 10..1f, paths uuid 20..2f, first.
const char* const kConnReqGolden =
    "00 00"                                            // cma_version, ip_version
    "bd 1b"                                            // magic 0x1bbd
    "00 02"                                            // version 2.0
    "03 00"                                            // cid
    "08 00"                                            // cid_num
    "02 01"                                            // recon_cnt
    "10 11 12 13 14 15 16 17 18 19 1a 1b 1c 1d 1e 1f"  // sess_uuid (12..27)
    "20 21 22 23 24 25 26 27 28 29 2a 2b 2c 2d 2e 2f"  // paths_uuid (28..43)
    "01"                                               // first_conn (44)
    "00 00 00 00 00 00 00 00 00 00 00";                // reserved (45..55)

wire::ConnReqFields golden_req_fields() {
    wire::ConnReqFields f;
    f.cid = 3;
    f.cid_num = 8;
    f.recon_cnt = 0x0102;
    f.sess_uuid = uuid_from(0x10);
    f.paths_uuid = uuid_from(0x20);
    f.first_conn = true;
    return f;
}

// --- connection response -----------------------------------------------------

// Accept of the reference defaults: depth 512, chunk 128 KiB, header 4096
// (max_io_size 126976 = 0x1f000), server re-registers rkeys.
const char* const kConnRspAcceptGolden =
    "bd 1b"        // magic
    "00 02"        // version
    "00 00"        // errno
    "00 02"        // queue_depth 512
    "00 f0 01 00"  // max_io_size 0x0001f000
    "00 10 00 00"  // max_hdr_size 0x1000
    "02 00 00 00"  // flags: NEW_RKEY
    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00";  // reserved[36]

// Reject with ECONNRESET (104): -104 = 0xff98.
const char* const kConnRspRejectGolden =
    "bd 1b 00 02 98 ff 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00";

}  // namespace

TEST(Wire, LittleEndianFieldsRegardlessOfHost) {
    wire::le16 a{};
    a.set(0x1234);
    EXPECT_EQ(a.b[0], 0x34);
    EXPECT_EQ(a.b[1], 0x12);
    EXPECT_EQ(a.get(), 0x1234);
    wire::le32 b{};
    b.set(0x12345678u);
    EXPECT_EQ(Buf(b.b, b.b + 4), hex("78 56 34 12"));
    EXPECT_EQ(b.get(), 0x12345678u);
    wire::le64 c{};
    c.set(0x0102030405060708ull);
    EXPECT_EQ(Buf(c.b, c.b + 8), hex("08 07 06 05 04 03 02 01"));
    EXPECT_EQ(c.get(), 0x0102030405060708ull);
    c.set(~0ull);
    EXPECT_EQ(c.get(), ~0ull);
    static_assert(wire::le16{{0xbd, 0x1b}}.get() == wire::kMagic);
}

TEST(Wire, ConstantsAreTheProtocols) {
    EXPECT_EQ(wire::kMagic, 0x1bbd);
    EXPECT_EQ(wire::kProtoVersion, 0x0200);
    EXPECT_EQ(wire::kNameMax, 255u);
    EXPECT_EQ(wire::kMaxPathsNum, 128u);
    EXPECT_EQ(wire::kServiceConQueueDepth, 512u);
    EXPECT_EQ(wire::kHbIntervalMs, 5000u);
    EXPECT_EQ(wire::kHbMissedMax, 5u);
    EXPECT_EQ(wire::kMaxCidNum, 4096u);
    EXPECT_EQ(static_cast<int>(wire::MsgType::InfoReq), 0);
    EXPECT_EQ(static_cast<int>(wire::MsgType::InfoRsp), 1);
    EXPECT_EQ(static_cast<int>(wire::MsgType::Write), 2);
    EXPECT_EQ(static_cast<int>(wire::MsgType::Read), 3);
    EXPECT_EQ(static_cast<int>(wire::MsgType::RkeyRsp), 4);
    EXPECT_EQ(wire::kMsgNeedInval, 1);
    EXPECT_EQ(wire::kMsgNewRkey, 2u);
    EXPECT_EQ(static_cast<int>(wire::ImmType::IoReq), 0);
    EXPECT_EQ(static_cast<int>(wire::ImmType::IoRsp), 1);
    EXPECT_EQ(static_cast<int>(wire::ImmType::IoRspWithInv), 2);
    EXPECT_EQ(static_cast<int>(wire::ImmType::HbMsg), 8);
    EXPECT_EQ(static_cast<int>(wire::ImmType::HbAck), 9);
    // The C interface of the core states some of them again.
    EXPECT_EQ(wire::kMinChunkSize, static_cast<unsigned>(RTRS_CORE_MIN_CHUNK_SIZE));
    EXPECT_EQ(wire::kMaxSessQueueDepth, static_cast<unsigned>(RTRS_CORE_MAX_SESS_QUEUE_DEPTH));
    EXPECT_EQ(wire::kImmPayloadBits, static_cast<unsigned>(RTRS_CORE_IMM_PAYLOAD_BITS));
}

TEST(Wire, StructSizes) {
    EXPECT_EQ(sizeof(wire::ConnReq), 56u);
    EXPECT_EQ(sizeof(wire::ConnRsp), 56u);
    EXPECT_EQ(sizeof(wire::InfoReq), 272u);
    EXPECT_EQ(sizeof(wire::InfoRspHdr), 8u);
    EXPECT_EQ(sizeof(wire::SgDesc), 16u);
    EXPECT_EQ(sizeof(wire::RkeyRsp), 8u);
    EXPECT_EQ(sizeof(wire::RdmaReadHdr), 8u);
    EXPECT_EQ(sizeof(wire::RdmaWrite), 4u);
    EXPECT_EQ(sizeof(wire::MsgHdr), 2u);
    EXPECT_EQ(wire::info_rsp_size(3), 8u + 48u);
}

// --- connection request --------------------------------------------------------

TEST(WireConnReq, EncodeMatchesGolden) {
    Buf out(56, 0xee);
    auto r = wire::encode_conn_req(mut(out), golden_req_fields());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), 56u);
    EXPECT_EQ(out, hex(kConnReqGolden));
}

TEST(WireConnReq, ParseGolden) {
    auto r = wire::parse_conn_req(bytes(hex(kConnReqGolden)));
    ASSERT_TRUE(r.ok()) << r.error();
    const auto& f = r.value();
    EXPECT_EQ(f.version, 0x0200);
    EXPECT_EQ(f.cid, 3);
    EXPECT_EQ(f.cid_num, 8);
    EXPECT_EQ(f.recon_cnt, 0x0102);
    EXPECT_TRUE(f.sess_uuid == uuid_from(0x10));
    EXPECT_TRUE(f.paths_uuid == uuid_from(0x20));
    EXPECT_TRUE(f.first_conn);
}

TEST(WireConnReq, RoundTrip) {
    wire::ConnReqFields in;
    in.cid = 0;
    in.cid_num = 1;
    in.recon_cnt = 0xffff;
    in.sess_uuid = uuid_from(0xf0);
    in.paths_uuid = uuid_from(0x80);
    in.first_conn = false;
    Buf out(56);
    ASSERT_TRUE(wire::encode_conn_req(mut(out), in).ok());
    auto r = wire::parse_conn_req(bytes(out));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value().cid, 0);
    EXPECT_EQ(r.value().cid_num, 1);
    EXPECT_EQ(r.value().recon_cnt, 0xffff);
    EXPECT_TRUE(r.value().sess_uuid == in.sess_uuid);
    EXPECT_TRUE(r.value().paths_uuid == in.paths_uuid);
    EXPECT_FALSE(r.value().first_conn);
}

TEST(WireConnReq, EncodeNeedsRoom) {
    Buf out(55, 0xee);
    auto r = wire::encode_conn_req(mut(out), golden_req_fields());
    EXPECT_EQ(r.error(), ENOBUFS);
    EXPECT_EQ(out, Buf(55, 0xee)) << "nothing written";
}

TEST(WireConnReq, LongerPrivateDataIsAccepted) {
    // The CM pads the private data of IB/RoCE messages; accept the tail.
    for (std::size_t pad : {1u, 100u, 140u}) {
        Buf b = cat({hex(kConnReqGolden), Buf(pad, 0xab)});
        auto r = wire::parse_conn_req(bytes(b));
        ASSERT_TRUE(r.ok()) << pad;
        EXPECT_EQ(r.value().cid, 3);
    }
}

TEST(WireConnReq, ShortPrivateDataIsRefused) {
    Buf b = hex(kConnReqGolden);
    for (std::size_t len : {0u, 1u, 12u, 44u, 45u, 55u}) {
        auto r = wire::parse_conn_req(rt::Bytes(b.data(), len));
        EXPECT_EQ(r.error(), ECONNRESET) << len;
    }
    EXPECT_EQ(wire::parse_conn_req(rt::Bytes()).error(), ECONNRESET);
}

TEST(WireConnReq, MagicAndVersion) {
    Buf b = hex(kConnReqGolden);
    b[2] = 0xbc;  // magic 0x1bbc
    EXPECT_EQ(wire::parse_conn_req(bytes(b)).error(), ECONNRESET);
    b = hex(kConnReqGolden);
    b[2] = 0x1b;  // magic byte-swapped: 0xbd1b
    b[3] = 0xbd;
    EXPECT_EQ(wire::parse_conn_req(bytes(b)).error(), ECONNRESET);

    for (std::uint8_t major : {0, 1, 3, 0x82, 0xff}) {
        b = hex(kConnReqGolden);
        b[5] = major;
        EXPECT_EQ(wire::parse_conn_req(bytes(b)).error(), ECONNRESET) << int(major);
    }
    for (std::uint8_t minor : {1, 7, 0xff}) {
        b = hex(kConnReqGolden);
        b[4] = minor;  // another minor of major 2 is fine
        auto r = wire::parse_conn_req(bytes(b));
        ASSERT_TRUE(r.ok()) << int(minor);
        EXPECT_EQ(r.value().version, 0x0200 | minor);
        EXPECT_EQ(wire::version_major(r.value().version), 2);
        EXPECT_EQ(wire::version_minor(r.value().version), minor);
    }
}

TEST(WireConnReq, CidChecks) {
    auto with = [](std::uint16_t cid, std::uint16_t cid_num) {
        Buf b = hex(kConnReqGolden);
        b[6] = static_cast<std::uint8_t>(cid);
        b[7] = static_cast<std::uint8_t>(cid >> 8);
        b[8] = static_cast<std::uint8_t>(cid_num);
        b[9] = static_cast<std::uint8_t>(cid_num >> 8);
        return wire::parse_conn_req(bytes(b)).error();
    };
    EXPECT_EQ(with(0, 1), 0);
    EXPECT_EQ(with(7, 8), 0);
    EXPECT_EQ(with(4095, 4096), 0);
    EXPECT_EQ(with(0, 0), ECONNRESET) << "cid_num 0 leaves no valid cid";
    EXPECT_EQ(with(8, 8), ECONNRESET);
    EXPECT_EQ(with(9, 8), ECONNRESET);
    EXPECT_EQ(with(0, 4097), ECONNRESET);
    EXPECT_EQ(with(0, 0xffff), ECONNRESET);
    EXPECT_EQ(with(0xffff, 0xffff), ECONNRESET);
}

TEST(WireConnReq, IgnoredBits) {
    Buf b = hex(kConnReqGolden);
    b[0] = 0x41;  // the CM's bytes are not ours to judge
    b[1] = 0x60;
    b[44] = 0xfe;  // reserved bits set, first_conn clear
    for (int i = 45; i < 56; ++i) b[i] = 0x5a;
    auto r = wire::parse_conn_req(bytes(b));
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r.value().first_conn);
    b[44] = 0xff;
    EXPECT_TRUE(wire::parse_conn_req(bytes(b)).value().first_conn);
}

// --- connection response ----------------------------------------------------------

TEST(WireConnRsp, AcceptMatchesGolden) {
    Buf out(60, 0xee);
    auto f = wire::conn_rsp_accept(512, 128 * 1024, 4096, true);
    auto r = wire::encode_conn_rsp(mut(out), f);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), 56u);
    EXPECT_EQ(Buf(out.begin(), out.begin() + 56), hex(kConnRspAcceptGolden));
    EXPECT_EQ(Buf(out.begin() + 56, out.end()), Buf(4, 0xee)) << "nothing past 56 bytes";
}

TEST(WireConnRsp, RejectMatchesGolden) {
    Buf out(56, 0xee);
    ASSERT_TRUE(wire::encode_conn_rsp(mut(out), wire::conn_rsp_reject(ECONNRESET)).ok());
    EXPECT_EQ(out, hex(kConnRspRejectGolden));
    ASSERT_TRUE(wire::encode_conn_rsp(mut(out), wire::conn_rsp_reject(EBUSY)).ok());
    EXPECT_EQ(out[4], 0xf0);  // -16 = 0xfff0
    EXPECT_EQ(out[5], 0xff);
}

TEST(WireConnRsp, ParseAccept) {
    auto r = wire::parse_conn_rsp(bytes(hex(kConnRspAcceptGolden)));
    ASSERT_TRUE(r.ok());
    const auto& f = r.value();
    EXPECT_EQ(f.err, 0);
    EXPECT_EQ(f.queue_depth, 512);
    EXPECT_EQ(f.max_io_size, 126976u);
    EXPECT_EQ(f.max_hdr_size, 4096u);
    EXPECT_EQ(f.flags, wire::kMsgNewRkey);
    EXPECT_EQ(f.chunk_size(), 131072u);
}

TEST(WireConnRsp, ParseReject) {
    auto r = wire::parse_conn_rsp(bytes(hex(kConnRspRejectGolden)));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value().err, ECONNRESET);
    // A peer that sends a positive value: the sign comes back inverted.
    Buf b = hex(kConnRspRejectGolden);
    b[4] = 5;
    b[5] = 0;
    EXPECT_EQ(wire::parse_conn_rsp(bytes(b)).value().err, -5);
}

TEST(WireConnRsp, ErrnoRange) {
    Buf out(56);
    EXPECT_EQ(wire::encode_conn_rsp(mut(out), wire::conn_rsp_reject(-1)).error(), EINVAL);
    EXPECT_EQ(wire::encode_conn_rsp(mut(out), wire::conn_rsp_reject(32769)).error(), EINVAL);
    ASSERT_TRUE(wire::encode_conn_rsp(mut(out), wire::conn_rsp_reject(32768)).ok());
    EXPECT_EQ(out[4], 0x00);
    EXPECT_EQ(out[5], 0x80);
    EXPECT_EQ(wire::parse_conn_rsp(bytes(out)).value().err, 32768);
    ASSERT_TRUE(wire::encode_conn_rsp(mut(out), wire::conn_rsp_reject(4095)).ok());
    EXPECT_EQ(wire::parse_conn_rsp(bytes(out)).value().err, 4095);
}

TEST(WireConnRsp, Malformed) {
    Buf b = hex(kConnRspAcceptGolden);
    EXPECT_EQ(wire::parse_conn_rsp(rt::Bytes(b.data(), 55)).error(), ECONNRESET);
    EXPECT_EQ(wire::parse_conn_rsp(rt::Bytes()).error(), ECONNRESET);
    b[0] = 0;
    EXPECT_EQ(wire::parse_conn_rsp(bytes(b)).error(), ECONNRESET);
    b = hex(kConnRspAcceptGolden);
    b[3] = 3;
    EXPECT_EQ(wire::parse_conn_rsp(bytes(b)).error(), ECONNRESET);
    b[3] = 2;
    b[2] = 9;  // minor 9
    EXPECT_TRUE(wire::parse_conn_rsp(bytes(b)).ok());
    Buf longer = cat({hex(kConnRspAcceptGolden), Buf(140, 0)});  // 196 bytes
    EXPECT_TRUE(wire::parse_conn_rsp(bytes(longer)).ok());
    Buf small(55, 0xee);
    EXPECT_EQ(wire::encode_conn_rsp(mut(small), wire::ConnRspFields{}).error(), ENOBUFS);
    EXPECT_EQ(small, Buf(55, 0xee));
}

// --- info request ---------------------------------------------------------------------

namespace {

Buf info_req_bytes(const std::string& name_field, std::uint16_t type = 0) {
    Buf b = zeros(272);
    b[0] = static_cast<std::uint8_t>(type);
    b[1] = static_cast<std::uint8_t>(type >> 8);
    std::memcpy(b.data() + 2, name_field.data(), std::min<std::size_t>(name_field.size(), 270));
    return b;
}

}  // namespace

TEST(WireInfoReq, EncodeMatchesGolden) {
    Buf out(272, 0xee);
    auto r = wire::encode_info_req(mut(out), bytes(std::string("ab")));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), 272u);
    Buf want = cat({hex("00 00 61 62"), zeros(268)});
    EXPECT_EQ(out, want);
}

TEST(WireInfoReq, ParseAndRoundTrip) {
    const Buf msg = info_req_bytes("client-7@host");  // the name is a view into it
    auto r = wire::parse_info_req(bytes(msg));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(str(r.value().name), "client-7@host");

    std::string longest(254, 'x');
    Buf out(300);
    ASSERT_TRUE(wire::encode_info_req(mut(out), bytes(longest)).ok());
    EXPECT_EQ(out[2 + 253], 'x');
    EXPECT_EQ(out[2 + 254], 0) << "the NUL is the field's last byte";
    auto back = wire::parse_info_req(bytes(out));  // longer buffer is fine
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(str(back.value().name), longest);
    EXPECT_EQ(back.value().name.data(), out.data() + 2) << "a view into the message";
}

TEST(WireInfoReq, Malformed) {
    Buf b = info_req_bytes("abc");
    EXPECT_EQ(wire::parse_info_req(rt::Bytes(b.data(), 271)).error(), EBADMSG);
    EXPECT_EQ(wire::parse_info_req(rt::Bytes()).error(), EBADMSG);
    EXPECT_EQ(wire::parse_info_req(bytes(info_req_bytes("abc", 1))).error(), EPROTO);
    EXPECT_EQ(wire::parse_info_req(bytes(info_req_bytes("abc", 0x100))).error(), EPROTO);
    EXPECT_EQ(wire::parse_info_req(bytes(info_req_bytes(""))).error(), EINVAL);
    // 255 name bytes and no NUL: the reserved bytes after it do not count.
    Buf unterminated = info_req_bytes(std::string(255, 'n'));
    EXPECT_EQ(wire::parse_info_req(bytes(unterminated)).error(), ENAMETOOLONG);
    // Reserved bytes are ignored.
    Buf noisy = info_req_bytes("ok");
    for (int i = 257; i < 272; ++i) noisy[i] = 0x77;
    EXPECT_EQ(str(wire::parse_info_req(bytes(noisy)).value().name), "ok");
}

TEST(WireInfoReq, EncodeRefusals) {
    Buf out(272, 0xee);
    EXPECT_EQ(wire::encode_info_req(mut(out), rt::Bytes()).error(), EINVAL);
    EXPECT_EQ(wire::encode_info_req(mut(out), bytes(std::string(255, 'a'))).error(), ENAMETOOLONG);
    EXPECT_EQ(wire::encode_info_req(mut(out), bytes(std::string("a\0b", 3))).error(), EINVAL);
    Buf small(271, 0xee);
    EXPECT_EQ(wire::encode_info_req(mut(small), bytes(std::string("a"))).error(), ENOBUFS);
    EXPECT_EQ(small, Buf(271, 0xee));
}

TEST(WireInfoReq, SessionNames) {
    for (const char* ok : {"a", "sess-1_x", "client@10:0:0:1", "UPPER", "\xc3\xa9t\xc3\xa9"})
        EXPECT_TRUE(wire::valid_session_name(bytes(std::string(ok)))) << ok;
    for (const char* bad : {"", "/", ".", "..", "a/b", "a.b", "trailing.", "/lead", "x.y/z"}) {
        EXPECT_FALSE(wire::valid_session_name(bytes(std::string(bad)))) << bad;
        EXPECT_EQ(wire::check_session_name(bytes(std::string(bad))).error(), EINVAL) << bad;
    }
    EXPECT_TRUE(wire::check_session_name(bytes(std::string("fine"))).ok());
    // parse_info_req leaves the characters to valid_session_name.
    const Buf msg = info_req_bytes("a.b");
    auto r = wire::parse_info_req(bytes(msg));
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(wire::valid_session_name(r.value().name));
}

// --- info response ---------------------------------------------------------------------

namespace {

const char* const kInfoRspGolden =
    "01 00"                     // type INFO_RSP
    "02 00"                     // sg_cnt 2
    "00 00 00 00"               // reserved
    "88 77 66 55 44 33 22 11"   // [0].addr 0x1122334455667788
    "dd cc bb aa"               // [0].key 0xaabbccdd
    "00 00 02 00"               // [0].len 0x20000
    "00 00 00 00 00 00 00 80"   // [1].addr 0x8000000000000000
    "01 00 00 00"               // [1].key 1
    "00 00 04 00";              // [1].len 0x40000

const wire::SgDescFields kInfoDescs[2] = {
    {0x1122334455667788ull, 0xaabbccddu, 0x20000u},
    {0x8000000000000000ull, 1u, 0x40000u},
};

}  // namespace

TEST(WireInfoRsp, EncodeMatchesGolden) {
    Buf out(40, 0xee);
    auto r = wire::encode_info_rsp(mut(out), rt::Span<const wire::SgDescFields>(kInfoDescs));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), 40u);
    EXPECT_EQ(out, hex(kInfoRspGolden));
}

TEST(WireInfoRsp, EncodeOverflowIsRefused) {
    Buf out(39, 0xee);
    auto r = wire::encode_info_rsp(mut(out), rt::Span<const wire::SgDescFields>(kInfoDescs));
    EXPECT_EQ(r.error(), ENOBUFS);
    EXPECT_EQ(out, Buf(39, 0xee)) << "nothing written";
    Buf hdr_only(7);
    EXPECT_EQ(wire::encode_info_rsp(mut(hdr_only), rt::Span<const wire::SgDescFields>()).error(),
              ENOBUFS);
    std::vector<wire::SgDescFields> many(65536);
    Buf big(wire::info_rsp_size(many.size()));
    EXPECT_EQ(wire::encode_info_rsp(mut(big), rt::Span<const wire::SgDescFields>(
                                                  many.data(), many.size()))
                  .error(),
              EINVAL);
}

TEST(WireInfoRsp, Parse) {
    Buf b = hex(kInfoRspGolden);
    auto r = wire::parse_info_rsp(bytes(b));
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r.value().count(), 2);
    EXPECT_TRUE(r.value().at(0) == kInfoDescs[0]);
    EXPECT_TRUE(r.value().at(1) == kInfoDescs[1]);
    EXPECT_TRUE(r.value().at(2) == wire::SgDescFields{}) << "out of range";
    Buf longer = cat({b, Buf(16, 0xaa)});
    EXPECT_EQ(wire::parse_info_rsp(bytes(longer)).value().count(), 2);
}

TEST(WireInfoRsp, ParseMalformed) {
    Buf b = hex(kInfoRspGolden);
    EXPECT_EQ(wire::parse_info_rsp(rt::Bytes(b.data(), 7)).error(), EBADMSG);
    EXPECT_EQ(wire::parse_info_rsp(rt::Bytes(b.data(), 39)).error(), EBADMSG);
    EXPECT_EQ(wire::parse_info_rsp(rt::Bytes(b.data(), 8)).error(), EBADMSG);
    b[0] = 0;
    EXPECT_EQ(wire::parse_info_rsp(bytes(b)).error(), EPROTO);
    b = hex(kInfoRspGolden);
    b[2] = 0;  // sg_cnt 0
    EXPECT_EQ(wire::parse_info_rsp(bytes(b)).error(), EINVAL);
    b[2] = 3;  // three announced, two present
    EXPECT_EQ(wire::parse_info_rsp(bytes(b)).error(), EBADMSG);
    b[2] = 0xff;
    b[3] = 0xff;
    EXPECT_EQ(wire::parse_info_rsp(bytes(b)).error(), EBADMSG);
}

TEST(WireInfoRsp, ClientChecks) {
    auto check = [](std::vector<wire::SgDescFields> d, std::uint32_t depth, std::uint32_t chunk) {
        Buf b(wire::info_rsp_size(d.size()));
        EXPECT_TRUE(wire::encode_info_rsp(mut(b), rt::Span<const wire::SgDescFields>(
                                                      d.data(), d.size()))
                        .ok());
        auto list = wire::parse_info_rsp(bytes(b));
        if (!list.ok()) return list.error();
        return wire::check_info_rsp(list.value(), depth, chunk).error();
    };
    EXPECT_EQ(check({{0, 1, 4 * 8192}}, 4, 8192), 0);
    EXPECT_EQ(check({{0, 1, 2 * 8192}, {1 << 20, 2, 2 * 8192}}, 4, 8192), 0);
    EXPECT_EQ(check({{0, 1, 8192}, {0, 1, 8192}, {0, 1, 2 * 8192}}, 4, 8192), EINVAL)
        << "4 is not a multiple of 3";
    EXPECT_EQ(check({{0, 1, 0}, {0, 1, 4 * 8192}}, 4, 8192), EINVAL) << "zero len";
    EXPECT_EQ(check({{0, 1, 3 * 8192 + 1}}, 3, 8192), EINVAL) << "not whole chunks";
    EXPECT_EQ(check({{0, 1, 2 * 8192}, {0, 1, 8192}}, 4, 8192), EINVAL) << "3 chunks of 4";
    EXPECT_EQ(check({{0, 1, 3 * 8192}, {0, 1, 3 * 8192}}, 4, 8192), EINVAL) << "6 chunks of 4";
    EXPECT_EQ(check({{0, 1, 8192}}, 2, 8192), EINVAL) << "1 chunk of 2";
    // One region id and 28 offset bits fit; two ids need 1 + 28.
    EXPECT_EQ(check({{0, 1, 1u << 28}}, 1, 1u << 28), 0);
    EXPECT_EQ(check({{0, 1, 1u << 28}, {0, 1, 1u << 28}}, 2, 1u << 28), EINVAL);
    EXPECT_EQ(check({{0, 1, 1u << 27}, {0, 1, 1u << 27}}, 2, 1u << 27), 0);
}

// --- rkey response ---------------------------------------------------------------------

TEST(WireRkeyRsp, GoldenAndMalformed) {
    Buf out(8, 0xee);
    auto r = wire::encode_rkey_rsp(mut(out), {0x0102, 0x11223344u});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), 8u);
    EXPECT_EQ(out, hex("04 00 02 01 44 33 22 11"));
    auto p = wire::parse_rkey_rsp(bytes(out));
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p.value().buf_id, 0x0102);
    EXPECT_EQ(p.value().rkey, 0x11223344u);
    EXPECT_EQ(wire::parse_rkey_rsp(rt::Bytes(out.data(), 7)).error(), EBADMSG);
    out[0] = 3;
    EXPECT_EQ(wire::parse_rkey_rsp(bytes(out)).error(), EPROTO);
    Buf small(7, 0xee);
    EXPECT_EQ(wire::encode_rkey_rsp(mut(small), {}).error(), ENOBUFS);
    EXPECT_EQ(small, Buf(7, 0xee));
}

TEST(WireMsgType, Peek) {
    EXPECT_EQ(wire::parse_msg_type(bytes(hex("04 00"))).value(), 4);
    EXPECT_EQ(wire::parse_msg_type(bytes(hex("34 12 00"))).value(), 0x1234);
    EXPECT_EQ(wire::parse_msg_type(bytes(hex("04"))).error(), EBADMSG);
}

// --- immediates ------------------------------------------------------------------------

TEST(WireImm, EncodeDecodeBoundaries) {
    using wire::ImmType;
    EXPECT_EQ(wire::imm_encode(ImmType::IoReq, 0), 0x00000000u);
    EXPECT_EQ(wire::imm_encode(ImmType::IoReq, 0x0fffffff), 0x0fffffffu);
    EXPECT_EQ(wire::imm_encode(ImmType::IoRsp, 0x0fffffff), 0x1fffffffu);
    EXPECT_EQ(wire::imm_encode(ImmType::IoRsp, 0x10000000), 0x10000000u) << "payload is 28 bits";
    EXPECT_EQ(wire::imm_encode(ImmType::IoRspWithInv, 1), 0x20000001u);
    EXPECT_EQ(wire::imm_encode(ImmType::HbMsg, 0), 0x80000000u);
    EXPECT_EQ(wire::imm_encode(ImmType::HbAck, 0), 0x90000000u);

    auto d = wire::imm_decode(0xffffffffu);
    EXPECT_EQ(d.type, 15u);
    EXPECT_EQ(d.payload, 0x0fffffffu);
    d = wire::imm_decode(0x90000000u);
    EXPECT_TRUE(d.is(ImmType::HbAck));
    EXPECT_EQ(d.payload, 0u);
    d = wire::imm_decode(0x0fffffffu);
    EXPECT_TRUE(d.is(ImmType::IoReq));
    EXPECT_EQ(d.payload, 0x0fffffffu);
    d = wire::imm_decode(0x10000000u);
    EXPECT_TRUE(d.is(ImmType::IoRsp));
    EXPECT_EQ(d.payload, 0u);
}

namespace {

// The reference's formula, ilog2(depth - 1) + 1, written out with the
// kernel's ilog2(0) == -1.
int reference_chunk_bits(std::uint32_t depth) {
    std::uint32_t n = depth - 1;
    int ilog2 = -1;
    while (n) {
        ++ilog2;
        n >>= 1;
    }
    return ilog2 + 1;
}

}  // namespace

TEST(WireImm, ChunkBits) {
    EXPECT_EQ(wire::chunk_bits(1), 0u);
    EXPECT_EQ(wire::chunk_bits(2), 1u);
    EXPECT_EQ(wire::chunk_bits(3), 2u);
    EXPECT_EQ(wire::chunk_bits(4), 2u);
    EXPECT_EQ(wire::chunk_bits(5), 3u);
    EXPECT_EQ(wire::chunk_bits(512), 9u);
    EXPECT_EQ(wire::chunk_bits(513), 10u);
    EXPECT_EQ(wire::chunk_bits(65535), 16u);
    for (std::uint32_t depth = 1; depth <= 65535; ++depth)
        ASSERT_EQ(static_cast<int>(wire::chunk_bits(depth)), reference_chunk_bits(depth)) << depth;
}

TEST(WireImm, IoReqPayload) {
    // depth 512: 9 id bits, 19 offset bits.
    EXPECT_EQ(wire::io_req_payload(5, 0x1234, 9), 0x00281234u);
    EXPECT_EQ(wire::io_req_payload(511, 0x7ffff, 9), 0x0fffffffu);
    auto a = wire::io_req_decode(0x00281234u, 9);
    EXPECT_EQ(a.chunk_id, 5u);
    EXPECT_EQ(a.offset, 0x1234u);
    // depth 1: every bit is offset.
    EXPECT_EQ(wire::io_req_payload(0, 0x0fffffff, 0), 0x0fffffffu);
    a = wire::io_req_decode(0x0fffffffu, 0);
    EXPECT_EQ(a.chunk_id, 0u);
    EXPECT_EQ(a.offset, 0x0fffffffu);
    // depth 2: 1 id bit.
    EXPECT_EQ(wire::io_req_payload(1, 0, 1), 0x08000000u);
    a = wire::io_req_decode(0x08000001u, 1);
    EXPECT_EQ(a.chunk_id, 1u);
    EXPECT_EQ(a.offset, 1u);
    // depth 65535: 16 id bits, 12 offset bits.
    EXPECT_EQ(wire::io_req_payload(65534, 0xfff, 16), 0x0fffefffu);
    a = wire::io_req_decode(0x0fffefffu, 16);
    EXPECT_EQ(a.chunk_id, 65534u);
    EXPECT_EQ(a.offset, 0xfffu);
    // Only the 28 payload bits of an immediate are looked at.
    a = wire::io_req_decode(0xf0281234u, 9);
    EXPECT_EQ(a.chunk_id, 5u);
    EXPECT_EQ(a.offset, 0x1234u);
    // Full immediate: type IO_REQ is 0.
    EXPECT_EQ(wire::imm_encode(wire::ImmType::IoReq, wire::io_req_payload(3, 8, 2)),
              (3u << 26) | 8u);
}

TEST(WireImm, IoReqLocate) {
    // 512 x 128 KiB: 19 offset bits, but offsets stop at the chunk size.
    auto a = wire::io_req_locate(wire::io_req_payload(511, 131071, 9), 512, 131072);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a.value().chunk_id, 511u);
    EXPECT_EQ(a.value().offset, 131071u);
    EXPECT_EQ(wire::io_req_locate(wire::io_req_payload(0, 131072, 9), 512, 131072).error(), ERANGE);
    // depth 3 has 2 id bits: id 3 is representable and out of range.
    EXPECT_EQ(wire::io_req_locate(wire::io_req_payload(3, 0, 2), 3, 8192).error(), ERANGE);
    EXPECT_TRUE(wire::io_req_locate(wire::io_req_payload(2, 8191, 2), 3, 8192).ok());
    // depth 1.
    EXPECT_TRUE(wire::io_req_locate(8191, 1, 8192).ok());
    EXPECT_EQ(wire::io_req_locate(8192, 1, 8192).error(), ERANGE);
}

TEST(WireImm, IoRspPayload) {
    EXPECT_EQ(wire::io_rsp_payload(0, 0), 0u);
    EXPECT_EQ(wire::io_rsp_payload(0x7ffff, 511), 0x0fffffffu);
    EXPECT_EQ(wire::io_rsp_payload(7, -104), (104u << 19) | 7u);
    EXPECT_EQ(wire::io_rsp_payload(7, 104), (104u << 19) | 7u) << "either sign";
    EXPECT_EQ(wire::io_rsp_payload(7, 512), 7u) << "9 bits of errno";
    EXPECT_EQ(wire::io_rsp_payload(0x80000, 0), 0u) << "19 bits of msg id";
    EXPECT_EQ(wire::io_rsp_imm(7, -5, true), 0x20280007u);
    EXPECT_EQ(wire::io_rsp_imm(7, 0, false), 0x10000007u);
    auto r = wire::io_rsp_decode(0x0fffffffu);
    EXPECT_EQ(r.msg_id, 0x7ffffu);
    EXPECT_EQ(r.err, 511u);
    r = wire::io_rsp_decode(wire::imm_decode(0x20280007u).payload);
    EXPECT_EQ(r.msg_id, 7u);
    EXPECT_EQ(r.err, 5u);
    r = wire::io_rsp_decode(0x00080000u);
    EXPECT_EQ(r.msg_id, 0u);
    EXPECT_EQ(r.err, 1u);
    r = wire::io_rsp_decode(0x0007ffffu);
    EXPECT_EQ(r.msg_id, 0x7ffffu);
    EXPECT_EQ(r.err, 0u);
}

// --- I/O requests in a chunk -------------------------------------------------------------

namespace {

constexpr std::size_t kChunk = 8192;

// A chunk with `hdr` placed at `off`; everything else 0xcc.
Buf chunk_with(std::size_t off, const Buf& hdr) {
    Buf c(kChunk, 0xcc);
    EXPECT_LE(off + hdr.size(), c.size());
    std::copy(hdr.begin(), hdr.end(), c.begin() + static_cast<std::ptrdiff_t>(off));
    return c;
}

}  // namespace

TEST(WireIo, WriteGolden) {
    // 4096 data bytes, 16 user header bytes, header at 4112.
    Buf c = chunk_with(4112, hex("02 00 10 00"));
    auto r = wire::parse_rdma_write(bytes(c), 4112);
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r.value().type, wire::MsgType::Write);
    EXPECT_EQ(r.value().data_len, 4096u);
    EXPECT_EQ(r.value().usr_off, 4096u);
    EXPECT_EQ(r.value().usr_len, 16u);
    EXPECT_EQ(r.value().hdr_off, 4112u);
    EXPECT_EQ(r.value().flags, 0);
    EXPECT_EQ(r.value().desc.count(), 0);
    auto any = wire::parse_io_req(bytes(c), 4112, wire::kMaxReadDesc);
    ASSERT_TRUE(any.ok());
    EXPECT_EQ(any.value().type, wire::MsgType::Write);
    EXPECT_EQ(any.value().data_len, 4096u);

    Buf out(4, 0xee);
    ASSERT_EQ(wire::encode_rdma_write(mut(out), 16).value(), 4u);
    EXPECT_EQ(out, hex("02 00 10 00"));
}

TEST(WireIo, WriteBounds) {
    // Everything is user header: data_len 0.
    Buf c = chunk_with(16, hex("02 00 10 00"));
    auto r = wire::parse_rdma_write(bytes(c), 16);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value().data_len, 0u);
    EXPECT_EQ(r.value().usr_off, 0u);
    // usr_len past the start of the chunk.
    c = chunk_with(16, hex("02 00 11 00"));
    EXPECT_EQ(wire::parse_rdma_write(bytes(c), 16).error(), EINVAL);
    c = chunk_with(0, hex("02 00 01 00"));
    EXPECT_EQ(wire::parse_rdma_write(bytes(c), 0).error(), EINVAL);
    // The header right at the end of the chunk, and one byte past.
    c = chunk_with(kChunk - 4, hex("02 00 00 00"));
    auto at_end = wire::parse_rdma_write(bytes(c), kChunk - 4);
    ASSERT_TRUE(at_end.ok());
    EXPECT_EQ(at_end.value().data_len, kChunk - 4);
    EXPECT_EQ(wire::parse_rdma_write(bytes(c), kChunk - 3).error(), EBADMSG);
    EXPECT_EQ(wire::parse_rdma_write(bytes(c), kChunk).error(), EBADMSG);
    EXPECT_EQ(wire::parse_rdma_write(bytes(c), 0xffffffffu).error(), EBADMSG);
    EXPECT_EQ(wire::parse_io_req(bytes(c), kChunk - 1, 1).error(), EBADMSG);
    // Wrong type.
    c = chunk_with(100, hex("03 00 00 00"));
    EXPECT_EQ(wire::parse_rdma_write(bytes(c), 100).error(), EPROTO);
}

TEST(WireIo, ReadGolden) {
    // Read of 4096 bytes with a 16-byte user header and one descriptor.
    const char* const hdr =
        "03 00"                    // type READ
        "10 00"                    // usr_len 16
        "01 00"                    // flags NEED_INVAL
        "01 00"                    // sg_cnt 1
        "00 10 00 00 01 00 00 00"  // addr 0x100001000
        "78 56 34 12"              // key 0x12345678
        "00 10 00 00";             // len 4096
    Buf c = chunk_with(4112, hex(hdr));
    auto r = wire::parse_rdma_read(bytes(c), 4112, wire::kMaxReadDesc);
    ASSERT_TRUE(r.ok()) << r.error();
    const auto& v = r.value();
    EXPECT_EQ(v.type, wire::MsgType::Read);
    EXPECT_EQ(v.data_len, 4096u);
    EXPECT_EQ(v.usr_off, 4096u);
    EXPECT_EQ(v.usr_len, 16u);
    EXPECT_EQ(v.hdr_off, 4112u);
    EXPECT_TRUE(v.need_inval());
    ASSERT_EQ(v.desc.count(), 1);
    EXPECT_TRUE(v.desc.at(0) == (wire::SgDescFields{0x100001000ull, 0x12345678u, 4096u}));
    EXPECT_EQ(v.desc.bytes().data(), c.data() + 4120);

    Buf out(24, 0xee);
    const wire::SgDescFields d[1] = {{0x100001000ull, 0x12345678u, 4096u}};
    auto e = wire::encode_rdma_read(mut(out), 16, wire::kMsgNeedInval,
                                    rt::Span<const wire::SgDescFields>(d));
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e.value(), 24u);
    EXPECT_EQ(out, hex(hdr));
    Buf small(23, 0xee);
    EXPECT_EQ(wire::encode_rdma_read(mut(small), 16, 0, rt::Span<const wire::SgDescFields>(d))
                  .error(),
              ENOBUFS);
    EXPECT_EQ(small, Buf(23, 0xee));

    auto any = wire::parse_io_req(bytes(c), 4112, wire::kMaxReadDesc);
    ASSERT_TRUE(any.ok());
    EXPECT_EQ(any.value().type, wire::MsgType::Read);
}

TEST(WireIo, ReadWithoutDescriptors) {
    // sg_cnt 0 is allowed (nothing to send back but the response).
    Buf c = chunk_with(32, hex("03 00 20 00 00 00 00 00"));
    auto r = wire::parse_rdma_read(bytes(c), 32, 1);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value().data_len, 0u);
    EXPECT_EQ(r.value().usr_len, 32u);
    EXPECT_EQ(r.value().desc.count(), 0);
    EXPECT_FALSE(r.value().need_inval());
    // The header alone at the very end of the chunk.
    c = chunk_with(kChunk - 8, hex("03 00 00 00 ff ff 00 00"));
    auto at_end = wire::parse_rdma_read(bytes(c), kChunk - 8, 1);
    ASSERT_TRUE(at_end.ok());
    EXPECT_EQ(at_end.value().flags, 0xffff) << "unknown flag bits are kept, not refused";
}

TEST(WireIo, ReadMalformed) {
    const Buf desc = hex("00 00 00 00 00 00 00 00 01 00 00 00 00 10 00 00");  // len 4096
    // Two descriptors against the server's limit of one.
    Buf c = chunk_with(64, cat({hex("03 00 00 00 00 00 02 00"), desc, desc}));
    EXPECT_EQ(wire::parse_rdma_read(bytes(c), 64, wire::kMaxReadDesc).error(), EINVAL);
    auto two = wire::parse_rdma_read(bytes(c), 64, 2);
    ASSERT_TRUE(two.ok());
    EXPECT_EQ(two.value().desc.count(), 2);
    c = chunk_with(64, hex("03 00 00 00 00 00 ff ff"));
    EXPECT_EQ(wire::parse_rdma_read(bytes(c), 64, 1).error(), EINVAL);
    // sg_cnt is judged before usr_len, as the reference does.
    c = chunk_with(8, hex("03 00 ff 00 00 00 02 00"));
    EXPECT_EQ(wire::parse_rdma_read(bytes(c), 8, 1).error(), EINVAL);
    // usr_len past the start of the chunk.
    c = chunk_with(8, cat({hex("03 00 09 00 00 00 01 00"), desc}));
    EXPECT_EQ(wire::parse_rdma_read(bytes(c), 8, 1).error(), EINVAL);
    // The descriptor runs past the end of the chunk.
    c = chunk_with(kChunk - 16, cat({hex("03 00 00 00 00 00 01 00"), Buf(8, 0)}));
    EXPECT_EQ(wire::parse_rdma_read(bytes(c), kChunk - 16, 1).error(), EBADMSG);
    c = chunk_with(kChunk - 24, cat({hex("03 00 00 00 00 00 01 00"), desc}));
    EXPECT_TRUE(wire::parse_rdma_read(bytes(c), kChunk - 24, 1).ok());
    // The header itself past the end.
    EXPECT_EQ(wire::parse_rdma_read(bytes(c), kChunk - 7, 1).error(), EBADMSG);
    // Descriptor lengths: 0 and more than a chunk are refused.
    Buf zero_len = hex("00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00");
    c = chunk_with(64, cat({hex("03 00 00 00 00 00 01 00"), zero_len}));
    EXPECT_EQ(wire::parse_rdma_read(bytes(c), 64, 1).error(), EINVAL);
    Buf too_long = hex("00 00 00 00 00 00 00 00 01 00 00 00 01 20 00 00");  // 8193
    c = chunk_with(64, cat({hex("03 00 00 00 00 00 01 00"), too_long}));
    EXPECT_EQ(wire::parse_rdma_read(bytes(c), 64, 1).error(), EINVAL);
    Buf whole = hex("00 00 00 00 00 00 00 00 01 00 00 00 00 20 00 00");  // 8192
    c = chunk_with(64, cat({hex("03 00 00 00 00 00 01 00"), whole}));
    EXPECT_TRUE(wire::parse_rdma_read(bytes(c), 64, 1).ok());
    // Wrong type.
    c = chunk_with(64, hex("02 00 00 00 00 00 00 00"));
    EXPECT_EQ(wire::parse_rdma_read(bytes(c), 64, 1).error(), EPROTO);
}

TEST(WireIo, UnknownTypes) {
    for (std::uint8_t t : {0, 1, 4, 5, 0xff}) {
        Buf c = chunk_with(64, Buf{t, 0, 0, 0, 0, 0, 0, 0});
        EXPECT_EQ(wire::parse_io_req(bytes(c), 64, 1).error(), EPROTO) << int(t);
    }
    Buf c = chunk_with(64, hex("02 01 00 00"));  // 0x0102: the high byte counts
    EXPECT_EQ(wire::parse_io_req(bytes(c), 64, 1).error(), EPROTO);
}

TEST(WireIo, ClientLayoutRoundTrip) {
    // What a client builds: data, user header, then the header, at the offset
    // the immediate carries; the server finds all three back.
    const std::uint32_t depth = 512, bits = wire::chunk_bits(depth);
    Buf c(kChunk, 0);
    const std::uint32_t data_len = 1000, usr_len = 24, off = data_len + usr_len;
    for (std::uint32_t i = 0; i < usr_len; ++i) c[data_len + i] = static_cast<std::uint8_t>(i);
    ASSERT_TRUE(wire::encode_rdma_write(rt::MutBytes(c.data() + off, 4), usr_len).ok());
    const std::uint32_t imm =
        wire::imm_encode(wire::ImmType::IoReq, wire::io_req_payload(77, off, bits));
    auto im = wire::imm_decode(imm);
    ASSERT_TRUE(im.is(wire::ImmType::IoReq));
    auto where = wire::io_req_locate(im.payload, depth, kChunk);
    ASSERT_TRUE(where.ok());
    EXPECT_EQ(where.value().chunk_id, 77u);
    auto r = wire::parse_io_req(bytes(c), where.value().offset, wire::kMaxReadDesc);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value().data_len, data_len);
    EXPECT_EQ(r.value().usr_len, usr_len);
    EXPECT_EQ(c[r.value().usr_off + 5], 5);
}
