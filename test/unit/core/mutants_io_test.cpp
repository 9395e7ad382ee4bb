// SPDX-License-Identifier: GPL-2.0
// Rules of the data plane that no test checked until the mutation campaign
// (tools/mutants, doc/testing.md "Mutation testing") changed them and
// every test still passed. Each test states the rule, not the mutant.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "fake_env.h"
#include "harness.h"

using fake::k;
using h::count_logs;
using h::downs;

namespace {

// Fails the next work request post (the fake kernel's next "post_send"
// failure point), once.
void fail_next_post() {
    static bool armed;
    armed = true;
    k().on_point = [](const char* what) {
        if (armed && std::strcmp(what, "post_send") == 0) {
            armed = false;
            k().fail_at = k().failure_points;
        }
    };
}

// Fills connection 1 of c (a path of queue depth 512 on a device whose
// send queue holds 600 work requests) with 512 write requests, and answers
// each: the first responses are posted, the rest wait for room. Returns
// the ULP's requests, in the order they reached it.
std::vector<rtrs_srv_op*> answer_past_the_send_queue(h::Fixture& f, h::Client& c) {
    std::vector<rtrs_srv_op*> ops;
    for (std::uint32_t id = 0; id < 512; ++id) {
        std::uint8_t* mem = f.chunk_mem(c, id);
        EXPECT_TRUE(wire::encode_rdma_write(rt::MutBytes(mem + 8, 8), 0).ok());
        if (!f.io_imm(c, 1, id, 8)) return ops;
    }
    for (int guard = 0; guard < 10000 && f.ops_seen() < 512; ++guard)
        if (!k().complete_send(c.con(1))) break;
    for (auto& e : k().events)
        if (e.kind == fake::Event::RdmaEv) ops.push_back(e.op);
    if (ops.size() != 512) return ops;
    for (auto* op : ops) rtrs_core_answer(op, 0);
    return ops;
}

}  // namespace

// A client sends nothing on a path before the server answered its info
// request: an I/O immediate before then is a protocol breach, and the
// server closes the path (FAILURES.md row 24) instead of waiting for
// an info request that would bring the path up under it.
TEST(MutantsIo, AnImmediateBeforeTheInfoResponseClosesThePath) {
    h::Fixture f;
    auto c = h::client(140);
    ASSERT_TRUE(f.connect_all(c));
    // Before the info response only connection 0 has a receive posted (for
    // the info request): an RDMA write with immediate takes it.
    const std::uint32_t payload = wire::io_req_payload(0, 0, wire::chunk_bits(16));
    ASSERT_TRUE(k().deliver_imm(c.con(0), wire::imm_encode(wire::ImmType::IoReq, payload)));
    k().run();
    EXPECT_EQ(count_logs("an immediate before the path is up; closing the path"), 1);
    EXPECT_EQ(downs("protocol error"), 1);
    EXPECT_TRUE(c.con(0)->disconnected);
    EXPECT_TRUE(c.con(1)->disconnected);
    // The info request that follows (if the receive were there for it)
    // brings nothing up.
    f.send_info(c, "early");
    k().run();
    k().advance(3000);
    EXPECT_TRUE(k().traces_named("path_up").empty());
    EXPECT_EQ(f.link_events(RTRS_CORE_LINK_CONNECTED), 0);
    EXPECT_EQ(f.ops_seen(), 0u);
    EXPECT_TRUE(f.finish());
}

// With always_invalidate a request's chunk is invalidated before the ULP
// gets it. If the invalidation fails, the request never reaches the ULP,
// the failure is logged with the completion's status, the path closes as
// a transport error, and the chunk is free again by the teardown's end
// (a request left in flight there is reported).
TEST(MutantsIo, AFailedLocalInvalidationClosesThePathAndFreesItsChunk) {
    h::Fixture f;  // always_invalidate
    auto c = h::client(141);
    ASSERT_TRUE(f.up(c, "inval"));
    ASSERT_TRUE(f.io_imm(c, 1, 0, 0));
    ASSERT_FALSE(c.con(1)->sends.empty());
    ASSERT_EQ(c.con(1)->sends.back().wr.op, RTRS_ENV_WR_LOCAL_INV);
    ASSERT_TRUE(k().complete_send(c.con(1), false));
    k().run();
    EXPECT_EQ(count_logs("local invalidation failed: remote access error"), 1);
    EXPECT_EQ(downs("transport error"), 1);
    EXPECT_EQ(f.ops_seen(), 0u);
    EXPECT_EQ(f.sysfs_path("ip:10.77.0.2@ip:10.77.0.1"), nullptr);
    EXPECT_TRUE(f.finish());
}

// A heartbeat's acknowledgement that cannot be posted is a broken queue
// pair: the path closes as a transport error.
TEST(MutantsIo, AHeartbeatAckThatCannotBePostedClosesThePath) {
    h::Fixture f;
    auto c = h::client(142);
    ASSERT_TRUE(f.up(c, "hbfail"));
    fail_next_post();
    ASSERT_TRUE(k().deliver_imm(c.con(1), wire::imm_encode(wire::ImmType::HbMsg, 0)));
    k().run();
    EXPECT_TRUE(k().failed) << "the ack was posted";
    EXPECT_EQ(downs("transport error"), 1);
    EXPECT_EQ(f.sysfs_path("ip:10.77.0.2@ip:10.77.0.1"), nullptr);
    EXPECT_TRUE(f.finish());
}

// Responses that waited for room in the send queue go out as completions
// make room; one whose post fails closes the path, and its chunk is free
// by the teardown's end like every other (a request left in flight there
// is reported).
TEST(MutantsIo, AWaitingResponseWhosePostFailsClosesThePathCleanly) {
    h::Opts o;
    o.queue_depth = 512;
    h::Fixture f(o);
    k().dev_attrs.max_qp_wr = 600;  // 512 responses of 2 work requests do not fit
    auto c = h::client(143);
    ASSERT_TRUE(f.up(c, "waiting"));
    ASSERT_EQ(answer_past_the_send_queue(f, c).size(), 512u);
    ASSERT_EQ(f.ops_seen(), 512u);
    ASSERT_EQ(c.con(1)->sends.size(), 598u) << "the rest of the responses wait";
    fail_next_post();
    ASSERT_TRUE(k().complete_send(c.con(1)));  // room: the first waiting one is posted, and fails
    k().run();
    EXPECT_TRUE(k().failed);
    EXPECT_EQ(count_logs("cannot send the response of request"), 1);
    EXPECT_EQ(downs("transport error"), 1);
    EXPECT_TRUE(f.finish());
}

// A response that waits for room in the send queue is no longer the ULP's:
// a second answer for it is refused with a warning, as one for a response
// already sent is, and the response goes out once.
TEST(MutantsIo, ASecondAnswerForAWaitingResponseIsRefused) {
    h::Opts o;
    o.queue_depth = 512;
    h::Fixture f(o);
    k().dev_attrs.max_qp_wr = 600;  // 512 responses of 2 work requests do not fit
    auto c = h::client(144);
    ASSERT_TRUE(f.up(c, "again"));
    const std::vector<rtrs_srv_op*> ops = answer_past_the_send_queue(f, c);
    ASSERT_EQ(ops.size(), 512u);
    ASSERT_EQ(f.ops_seen(), 512u);
    const std::size_t posted = c.con(1)->total_sends;
    ASSERT_EQ(c.con(1)->sends.size(), 598u) << "the rest of the responses wait";
    ASSERT_TRUE(fake_env::state().warnings.empty());
    rtrs_core_answer(ops.back(), 0);  // its response waits
    ASSERT_EQ(fake_env::state().warnings.size(), 1u);
    EXPECT_NE(fake_env::state().warnings[0].find("does not hold"), std::string::npos);
    fake_env::state().warnings.clear();
    // Room for everything: each response once, the waiting ones in order.
    for (int guard = 0; guard < 100000; ++guard)
        if (!k().complete_send(c.con(1))) break;
    k().run();
    EXPECT_EQ(c.con(1)->total_sends - posted, 2u * 512u - 598u) << "each waiting response posted once";
    EXPECT_FALSE(k().failed);
    EXPECT_TRUE(f.finish());
}

// The client's read request carries at most 65535 descriptors (a 16-bit
// count); the encoder refuses more rather than wrap the count.
TEST(MutantsIo, AReadRequestOfMoreThan65535DescriptorsIsRefused) {
    std::vector<wire::SgDescFields> d(65536, wire::SgDescFields{0x1000, 7, 512});
    std::vector<std::uint8_t> out(sizeof(wire::RdmaReadHdr) + d.size() * sizeof(wire::SgDesc));
    auto n = wire::encode_rdma_read(rt::MutBytes(out.data(), out.size()), 0, 0,
                                    rt::Span<const wire::SgDescFields>(d.data(), d.size()));
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.error(), rt::errc::inval);
    auto m = wire::encode_rdma_read(rt::MutBytes(out.data(), out.size()), 0, 0,
                                    rt::Span<const wire::SgDescFields>(d.data(), 65535));
    EXPECT_TRUE(m.ok());
}
