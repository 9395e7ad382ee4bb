// SPDX-License-Identifier: GPL-2.0
// The C interface the glue calls (core/rtrs_core.h). Expected bytes and
// strings are written out by hand from the protocol and the sysfs ABI.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "core/rtrs_core.h"

namespace {

// A connection request as the upstream client lays it out: cma and ip
// version bytes, magic 0x1BBD, version 2.0, cid, cid_num, recon_cnt, two
// uuids, the first_conn bit, 11 reserved bytes: 56 bytes, little-endian.
std::vector<unsigned char> conn_req(unsigned cid, unsigned cid_num, bool first) {
    std::vector<unsigned char> b(56, 0);
    b[2] = 0xBD; b[3] = 0x1B;  // magic
    b[4] = 0x00; b[5] = 0x02;  // version 2.0
    b[6] = cid & 0xff; b[7] = cid >> 8;
    b[8] = cid_num & 0xff; b[9] = cid_num >> 8;
    b[10] = 3; b[11] = 0;  // recon_cnt
    for (int i = 0; i < 16; ++i) b[12 + i] = static_cast<unsigned char>(0xA0 + i);
    for (int i = 0; i < 16; ++i) b[28 + i] = static_cast<unsigned char>(0xB0 + i);
    b[44] = first ? 1 : 0;
    return b;
}

std::vector<unsigned char> info_req(const std::string& name) {
    std::vector<unsigned char> b(272, 0);  // le16 type 0, name[255], reserved[15]
    std::memcpy(&b[2], name.data(), std::min<size_t>(name.size(), 255));
    return b;
}

}  // namespace

TEST(ProtoConnReq, DecodesEveryField) {
    auto b = conn_req(1, 3, true);
    rtrs_core_conn_req req{};
    char why[128] = "";
    ASSERT_EQ(rtrs_core_parse_conn_req(b.data(), b.size(), &req, why, sizeof(why)), 0) << why;
    EXPECT_EQ(req.version, 0x0200);
    EXPECT_EQ(req.cid, 1);
    EXPECT_EQ(req.cid_num, 3);
    EXPECT_EQ(req.recon_cnt, 3);
    EXPECT_EQ(req.sess_uuid[0], 0xA0);
    EXPECT_EQ(req.sess_uuid[15], 0xAF);
    EXPECT_EQ(req.paths_uuid[0], 0xB0);
    EXPECT_EQ(req.first_conn, 1);
}

TEST(ProtoConnReq, EachRefusalIsEconnresetWithAReason) {
    struct Case {
        const char* name;
        std::vector<unsigned char> bytes;
        const char* reason;
    };
    auto bad_magic = conn_req(0, 1, true);
    bad_magic[2] = 0;
    auto bad_major = conn_req(0, 1, true);
    bad_major[5] = 3;
    auto short_pd = conn_req(0, 1, true);
    short_pd.resize(55);
    std::vector<Case> cases = {
        {"short", short_pd, "too short"},
        {"magic", bad_magic, "magic"},
        {"major", bad_major, "major"},
        {"cid>=cid_num", conn_req(2, 2, true), "cid"},
        {"cid_num 0", conn_req(0, 0, true), "cid"},
        {"cid_num 4097", conn_req(0, 4097, true), "too many"},
    };
    for (auto& c : cases) {
        rtrs_core_conn_req req{};
        char why[128] = "";
        EXPECT_EQ(rtrs_core_parse_conn_req(c.bytes.data(), c.bytes.size(), &req, why, sizeof(why)),
                  -ECONNRESET)
            << c.name;
        EXPECT_NE(std::string(why).find(c.reason), std::string::npos) << c.name << ": " << why;
    }
}

TEST(ProtoConnReq, OtherMinorAndLongerPrivateDataAreAccepted) {
    auto b = conn_req(0, 1, false);
    b[4] = 7;  // version 2.7
    b.resize(196, 0);
    rtrs_core_conn_req req{};
    char why[128];
    EXPECT_EQ(rtrs_core_parse_conn_req(b.data(), b.size(), &req, why, sizeof(why)), 0) << why;
    EXPECT_EQ(req.version, 0x0207);
    EXPECT_EQ(req.first_conn, 0);
}

TEST(ProtoConnRsp, AcceptAndRejectBytes) {
    unsigned char b[56];
    ASSERT_EQ(rtrs_core_conn_rsp_size(), 56u);
    std::memset(b, 0xEE, sizeof(b));
    rtrs_core_build_conn_rsp(b, 0, 512, 126976, 4096, RTRS_CORE_CONN_RSP_NEW_RKEY);
    const unsigned char accept[20] = {0xBD, 0x1B, 0x00, 0x02, 0, 0, 0x00, 0x02,
                                      0x00, 0xF0, 0x01, 0x00, 0x00, 0x10, 0, 0,
                                      0x02, 0, 0, 0};
    EXPECT_EQ(std::memcmp(b, accept, sizeof(accept)), 0);
    for (int i = 20; i < 56; ++i) EXPECT_EQ(b[i], 0) << i;

    rtrs_core_build_conn_rsp(b, -ENXIO, 0, 0, 0, 0);
    EXPECT_EQ(b[4], 0xFA);  // -6 as a little-endian 16-bit value
    EXPECT_EQ(b[5], 0xFF);
    EXPECT_EQ(b[6], 0);
}

TEST(ProtoInfoReq, NameRules) {
    char name[256];
    char why[128];
    auto ok = info_req("sess-1_A");
    ASSERT_EQ(rtrs_core_parse_info_req(ok.data(), ok.size(), name, sizeof(name), why, sizeof(why)), 0)
        << why;
    EXPECT_STREQ(name, "sess-1_A");

    struct Case {
        std::vector<unsigned char> bytes;
        int err;
    };
    auto wrong_type = info_req("s");
    wrong_type[0] = 2;
    auto unterminated = info_req(std::string(255, 'x'));
    auto short_msg = info_req("s");
    short_msg.resize(271);
    std::vector<Case> cases = {
        {info_req(""), -EINVAL},        {info_req("a/b"), -EINVAL},
        {info_req("a.b"), -EINVAL},     {info_req(".."), -EINVAL},
        {wrong_type, -EPROTO},          {unterminated, -ENAMETOOLONG},
        {short_msg, -EBADMSG},
    };
    for (auto& c : cases) {
        std::strcpy(name, "untouched");
        EXPECT_EQ(rtrs_core_parse_info_req(c.bytes.data(), c.bytes.size(), name, sizeof(name), why,
                                           sizeof(why)),
                  c.err);
        EXPECT_GT(std::strlen(why), 0u);
    }
    // A name that fits the message but not the caller's buffer.
    auto longish = info_req(std::string(40, 'n'));
    EXPECT_EQ(rtrs_core_parse_info_req(longish.data(), longish.size(), name, 16, why, sizeof(why)),
              -ENAMETOOLONG);
}

TEST(ProtoInfoRsp, HeaderAndDescriptors) {
    ASSERT_EQ(rtrs_core_info_rsp_size(2), 8u + 2 * 16u);
    std::vector<unsigned char> b(rtrs_core_info_rsp_size(2), 0xEE);
    rtrs_core_build_info_rsp(b.data(), 2);
    rtrs_core_info_rsp_set_desc(b.data(), 0, 0x1122334455667788ull, 0xAABBCCDD, 0x20000);
    rtrs_core_info_rsp_set_desc(b.data(), 1, 1, 2, 3);
    const unsigned char want[] = {
        0x01, 0x00, 0x02, 0x00, 0, 0, 0, 0,                      // type 1, sg_cnt 2
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,          // addr
        0xDD, 0xCC, 0xBB, 0xAA, 0x00, 0x00, 0x02, 0x00,          // key, len
        1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0,
    };
    ASSERT_EQ(b.size(), sizeof(want));
    EXPECT_EQ(std::memcmp(b.data(), want, sizeof(want)), 0);
}

TEST(ProtoImm, TypeAndPayload) {
    EXPECT_EQ(rtrs_core_imm(RTRS_CORE_IMM_HB_MSG, 0), 0x80000000u);
    EXPECT_EQ(rtrs_core_imm(RTRS_CORE_IMM_HB_ACK, 0), 0x90000000u);
    EXPECT_EQ(rtrs_core_imm_type(0x9000000Fu), 9u);
    EXPECT_EQ(rtrs_core_imm_payload(0x9000000Fu), 15u);
    EXPECT_EQ(rtrs_core_chunk_bits(512), 9u);
    EXPECT_EQ(rtrs_core_chunk_bits(1), 0u);
}

TEST(ProtoHeartbeat, SendsThenWaitsThenGivesUp) {
    unsigned missed = 0;
    // A heartbeat goes out when the last period saw traffic...
    EXPECT_EQ(rtrs_core_hb_tick(&missed), RTRS_CORE_HB_SEND);
    EXPECT_EQ(missed, 1u);
    // ...then silent periods are only counted, until more than 5 passed.
    std::vector<rtrs_core_hb_action> seen;
    for (int i = 0; i < 6; ++i) seen.push_back(rtrs_core_hb_tick(&missed));
    const std::vector<rtrs_core_hb_action> want = {RTRS_CORE_HB_WAIT, RTRS_CORE_HB_WAIT,
                                                   RTRS_CORE_HB_WAIT, RTRS_CORE_HB_WAIT,
                                                   RTRS_CORE_HB_WAIT, RTRS_CORE_HB_DEAD};
    EXPECT_EQ(seen, want);
    // Traffic resets the count (the glue zeroes it on every receive).
    missed = 0;
    EXPECT_EQ(rtrs_core_hb_tick(&missed), RTRS_CORE_HB_SEND);
}

TEST(ProtoSysfs, OnlyOneIsAccepted) {
    EXPECT_EQ(rtrs_core_parse_one("1", 1), 0);
    EXPECT_EQ(rtrs_core_parse_one("1\n", 2), 0);
    for (const char* bad : {"0", "0\n", "", "\n", "11", "1\n\n", " 1", "1 ", "2", "yes"})
        EXPECT_EQ(rtrs_core_parse_one(bad, std::strlen(bad)), -EINVAL) << "'" << bad << "'";
}

TEST(ProtoSysfs, RdmaStatsLine) {
    char buf[128];
    int n = rtrs_core_format_rdma_stats(buf, sizeof(buf), 5, 41040, 7, 57344, 2);
    EXPECT_STREQ(buf, "5 41040 7 57344 2\n");
    EXPECT_EQ(n, static_cast<int>(std::strlen(buf)));
    n = rtrs_core_format_rdma_stats(buf, sizeof(buf), 18446744073709551615ull, 0, 0, 0, 0);
    EXPECT_STREQ(buf, "18446744073709551615 0 0 0 0\n");
}

TEST(ProtoIo, LocateChecksChunkAndOffset) {
    unsigned id = 99, off = 99;
    // depth 512: 9 bits of chunk id, 19 bits of offset
    ASSERT_EQ(rtrs_core_locate_io((5u << 19) | 4112u, 512, 131072, &id, &off), 0);
    EXPECT_EQ(id, 5u);
    EXPECT_EQ(off, 4112u);
    EXPECT_EQ(rtrs_core_locate_io((500u << 19) | 0u, 400, 131072, &id, &off), -ERANGE);
    EXPECT_EQ(rtrs_core_locate_io((5u << 19) | 131072u, 512, 131072, &id, &off), -ERANGE);
}

TEST(ProtoIo, WriteAndReadRequests) {
    std::vector<unsigned char> chunk(8192, 0);
    // A write of 4096 data bytes and a 16-byte user header: the header at 4112.
    chunk[4112] = 2;  // type WRITE, le16
    chunk[4114] = 16;  // usr_len
    rtrs_core_io_req req{};
    char why[96];
    ASSERT_EQ(rtrs_core_parse_io_req(chunk.data(), chunk.size(), 4112, &req, why, sizeof(why)), 0)
        << why;
    EXPECT_EQ(req.type, RTRS_CORE_IO_WRITE);
    EXPECT_EQ(req.data_len, 4096u);
    EXPECT_EQ(req.usr_len, 16u);
    EXPECT_EQ(req.bytes, 4112u);

    // A read: type 3, usr_len 16, flags NEED_INVAL, sg_cnt 1, one descriptor.
    std::vector<unsigned char> r(8192, 0);
    const unsigned char hdr[] = {3, 0, 16, 0, 1, 0, 1, 0,
                                 0x00, 0x10, 0, 0, 0, 0, 0, 0,  // addr 0x1000
                                 0x44, 0x33, 0x22, 0x11,        // key
                                 0x00, 0x10, 0, 0};             // len 4096
    std::memcpy(&r[4112], hdr, sizeof(hdr));
    ASSERT_EQ(rtrs_core_parse_io_req(r.data(), r.size(), 4112, &req, why, sizeof(why)), 0) << why;
    EXPECT_EQ(req.type, RTRS_CORE_IO_READ);
    EXPECT_EQ(req.need_inval, 1);
    EXPECT_EQ(req.sg_cnt, 1);
    EXPECT_EQ(req.addr, 0x1000u);
    EXPECT_EQ(req.key, 0x11223344u);
    EXPECT_EQ(req.len, 4096u);
    EXPECT_EQ(req.bytes, 4112u);
}

TEST(ProtoIo, BadRequests) {
    std::vector<unsigned char> chunk(8192, 0);
    rtrs_core_io_req req{};
    char why[96];
    chunk[100] = 7;  // unknown type: the path must close
    EXPECT_EQ(rtrs_core_parse_io_req(chunk.data(), chunk.size(), 100, &req, why, sizeof(why)),
              -EPROTO);
    chunk[100] = 2;
    chunk[102] = 200;  // usr_len 200 > offset 100
    EXPECT_EQ(rtrs_core_parse_io_req(chunk.data(), chunk.size(), 100, &req, why, sizeof(why)),
              -EINVAL);
    // a write header (4 bytes) that would run past the chunk
    chunk[8190] = 2;
    EXPECT_EQ(rtrs_core_parse_io_req(chunk.data(), chunk.size(), 8190, &req, why, sizeof(why)),
              -EBADMSG);
}

TEST(ProtoIo, ResponseImmediateAndRkeyMessage) {
    // type 1 (2 with invalidation), errno magnitude in bits 19..27, id in 0..18
    EXPECT_EQ(rtrs_core_io_rsp_imm(5, 0, 0), 0x10000005u);
    EXPECT_EQ(rtrs_core_io_rsp_imm(5, -EIO, 1), 0x20000000u | (5u << 19) | 5u);
    ASSERT_EQ(rtrs_core_rkey_rsp_size(), 8u);
    unsigned char b[8];
    rtrs_core_build_rkey_rsp(b, 0x0102, 0xA1B2C3D4);
    const unsigned char want[8] = {4, 0, 0x02, 0x01, 0xD4, 0xC3, 0xB2, 0xA1};
    EXPECT_EQ(std::memcmp(b, want, 8), 0);
}
