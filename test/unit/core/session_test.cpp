// SPDX-License-Identifier: GPL-2.0
// Sessions and paths over the fake kernel: a path comes up and goes, with
// everything it made freed; what the client is told and what sysfs shows.
#include <gtest/gtest.h>

#include "harness.h"

using fake::k;

namespace {

const char* kPath = "ip:10.77.0.2@ip:10.77.0.1";

class Both : public ::testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(AlwaysInvalidate, Both, ::testing::Values(true, false),
                         [](const auto& i) { return i.param ? "Y" : "N"; });

h::Opts opts(bool inval) {
    h::Opts o;
    o.always_invalidate = inval;
    return o;
}

}  // namespace

TEST_P(Both, PathComesUpAndGoesWithEverything) {
    h::Fixture f(opts(GetParam()));
    ASSERT_EQ(f.init_err, 0);
    auto c = h::client(1);
    ASSERT_TRUE(f.up(c, "sess1"));
    // What the client was told: the queue depth, the chunk size (max_io_size
    // + the page of headers), whether new keys come with responses.
    EXPECT_EQ(c.queue_depth, 16u);
    EXPECT_EQ(c.chunk_size, 16384u);
    EXPECT_EQ(c.new_rkey, GetParam());
    // The descriptors cover every chunk once, in order.
    std::uint64_t total = 0;
    for (auto& d : c.descs) total += d.len;
    EXPECT_EQ(total, 16u * 16384u);
    EXPECT_EQ(c.descs.size(), GetParam() ? 16u : 1u);
    // sysfs and the ULP.
    EXPECT_NE(f.sysfs_sess("sess1"), nullptr);
    EXPECT_NE(f.sysfs_path(kPath), nullptr);
    EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_HCA_NAME), "fake0\n");
    EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_HCA_PORT), "1\n");
    EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_SRC_ADDR), "ip:10.77.0.2\n");
    EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_DST_ADDR), "ip:10.77.0.1\n");
    EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_DISCONNECT), "Usage: echo 1 > disconnect\n");
    EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_STATS_RDMA), "0 0 0 0 0\n");
    EXPECT_EQ(f.link_events(RTRS_CORE_LINK_CONNECTED), 1);
    EXPECT_EQ(h::problems(), "");

    // The client leaves.
    k().cm_event(c.con(1), RTRS_CORE_CM_DISCONNECTED);
    k().run();
    EXPECT_EQ(f.sysfs_path(kPath), nullptr);
    EXPECT_EQ(f.sysfs_sess("sess1"), nullptr);
    EXPECT_EQ(f.link_events(RTRS_CORE_LINK_DISCONNECTED), 1);
    for (auto& con : k().cons) EXPECT_TRUE(con->destroyed);
    EXPECT_TRUE(k().chunks.empty()) << "the session's chunks go with its last path";
    EXPECT_TRUE(f.finish());
}

TEST_P(Both, WriteThenReadAreHandedToTheUlpAndAnswered) {
    h::Fixture f(opts(GetParam()));
    auto c = h::client(2);
    ASSERT_TRUE(f.up(c, "io"));
    std::vector<std::uint8_t> data(4096), usr(16);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7);
    for (std::size_t i = 0; i < usr.size(); ++i) usr[i] = static_cast<std::uint8_t>(0xA0 + i);

    rtrs_srv_op* op = f.write(c, 1, 3, data, usr);
    ASSERT_NE(op, nullptr);
    const fake::Event& e = k().events.back();
    EXPECT_EQ(e.datalen, 4096u);
    EXPECT_EQ(e.usr, usr);
    EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_STATS_RDMA), "0 0 1 4112 1\n");
    rtrs_core_answer(op, 0);
    // The response: with always_invalidate a new registration, then a send
    // with the new key and the immediate; else an RDMA write with immediate.
    if (GetParam())
        EXPECT_EQ(f.sendq(c, 1), (std::vector<rtrs_env_wr_op>{RTRS_ENV_WR_REG_MR, RTRS_ENV_WR_SEND_IMM}));
    else
        EXPECT_EQ(f.sendq(c, 1), (std::vector<rtrs_env_wr_op>{RTRS_ENV_WR_RDMA_WRITE_IMM}));
    const rtrs_env_wr& imm = c.con(1)->sends.back().wr;
    auto rsp = wire::io_rsp_decode(wire::imm_decode(imm.imm).payload);
    EXPECT_EQ(rsp.msg_id, 3u);
    EXPECT_EQ(rsp.err, 0u);
    EXPECT_TRUE(k().complete_send(c.con(1)));
    EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_STATS_RDMA), "0 0 1 4112 0\n");

    // A read with invalidation of the client's key: the data, the new key,
    // the remote invalidation, the immediate.
    op = f.read(c, 0, 5, 8192, usr, true);
    ASSERT_NE(op, nullptr);
    rtrs_core_answer(op, 0);
    if (GetParam())
        EXPECT_EQ(f.sendq(c, 0), (std::vector<rtrs_env_wr_op>{RTRS_ENV_WR_RDMA_WRITE, RTRS_ENV_WR_REG_MR,
                                                             RTRS_ENV_WR_SEND_INV, RTRS_ENV_WR_SEND_IMM}));
    else
        EXPECT_EQ(f.sendq(c, 0), (std::vector<rtrs_env_wr_op>{RTRS_ENV_WR_RDMA_WRITE, RTRS_ENV_WR_SEND_INV,
                                                             RTRS_ENV_WR_RDMA_WRITE_IMM}));
    const rtrs_env_wr& data_wr = c.con(0)->sends.front().wr;
    EXPECT_EQ(data_wr.remote_addr, 0xC0FFEE000ull);
    EXPECT_EQ(data_wr.rkey, 0x4242u);
    EXPECT_EQ(data_wr.len, 8192u);
    EXPECT_EQ(wire::imm_decode(c.con(0)->sends.back().wr.imm).type,
              static_cast<std::uint32_t>(wire::ImmType::IoRspWithInv));
    EXPECT_TRUE(k().complete_send(c.con(0)));
    EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_STATS_RDMA), "1 16 1 4112 0\n");
    EXPECT_EQ(f.store(kPath, RTRS_CORE_ATTR_STATS_RDMA, "1\n"), 0);
    EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_STATS_RDMA), "0 0 0 0 0\n");
    EXPECT_TRUE(f.finish());
}
