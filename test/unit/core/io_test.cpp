// SPDX-License-Identifier: GPL-2.0
// The data plane: hostile requests, the ULP failing requests, a second
// request on a busy chunk, a send queue too small for the load, heartbeats.
#include <gtest/gtest.h>

#include <cstring>

#include "fake_env.h"
#include "harness.h"

using fake::k;
using h::count_logs;

namespace {

const char* kPath = "ip:10.77.0.2@ip:10.77.0.1";

std::string all_logs() {
    std::string out;
    for (auto& l : fake_env::state().logs) out += l.second + "\n";
    return out;
}

// The errno of the response immediate last posted on con (0: success).
int answered(fake::Con* con) {
    for (auto it = con->sends.rbegin(); it != con->sends.rend(); ++it) {
        auto t = wire::imm_decode(it->wr.imm);
        if (it->wr.signaled && (t.is(wire::ImmType::IoRsp) || t.is(wire::ImmType::IoRspWithInv)))
            return -static_cast<int>(wire::io_rsp_decode(t.payload).err);
    }
    return 1;  // none
}

bool path_up(h::Fixture& f) { return f.sysfs_path(kPath) != nullptr; }

}  // namespace

TEST(Io, UnreadableRequestsAreAnsweredWithAnError) {
    for (bool inval : {true, false}) {
        SCOPED_TRACE(inval ? "always_invalidate" : "no invalidation");
        h::Opts o;
        o.always_invalidate = inval;
        h::Fixture f(o);
        auto c = h::client(50);
        ASSERT_TRUE(f.up(c, "hostile"));
        std::uint8_t* mem = f.chunk_mem(c, 1);
        const std::size_t before = f.ops_seen();
        // A user header longer than the data before it.
        auto n = wire::encode_rdma_write(rt::MutBytes(mem + 16, 64), 100);
        ASSERT_TRUE(n.ok());
        ASSERT_TRUE(f.io_imm(c, 1, 1, 16));
        if (inval) k().complete_send(c.con(1));
        EXPECT_EQ(answered(c.con(1)), -22);
        k().complete_all_sends(c.con(1));
        // A header that runs past the chunk's end.
        ASSERT_TRUE(f.io_imm(c, 1, 2, 16383));
        if (inval) k().complete_send(c.con(1));
        EXPECT_EQ(answered(c.con(1)), -74);
        k().complete_all_sends(c.con(1));
        // A read longer than a chunk, and one of no bytes.
        for (std::uint32_t len : {16384u + 4096u, 0u}) {
            wire::SgDescFields d{0x1000, 7, len};
            mem = f.chunk_mem(c, 3);
            ASSERT_TRUE(wire::encode_rdma_read(rt::MutBytes(mem, 64), 0, 0,
                                               rt::Span<const wire::SgDescFields>(&d, 1)).ok());
            ASSERT_TRUE(f.io_imm(c, 1, 3, 0));
            if (inval) k().complete_send(c.con(1));
            EXPECT_EQ(answered(c.con(1)), -22) << len;
            EXPECT_NE(f.sendq(c, 1).front(), RTRS_ENV_WR_RDMA_WRITE) << "no data for a failed read";
            k().complete_all_sends(c.con(1));
        }
        EXPECT_EQ(f.ops_seen(), before) << "none of them reached the ULP";
        EXPECT_TRUE(path_up(f));
        EXPECT_EQ(count_logs("failing the request"), 4) << all_logs();
        EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_STATS_RDMA), "0 0 0 0 0\n");
        EXPECT_TRUE(f.finish());
    }
}

TEST(Io, AnUnknownMessageTypeClosesThePath) {
    h::Fixture f;
    auto c = h::client(51);
    ASSERT_TRUE(f.up(c, "unknown"));
    std::uint8_t* mem = f.chunk_mem(c, 0);
    mem[4112] = 9;  // type 9 is no request
    ASSERT_TRUE(f.io_imm(c, 1, 0, 4112));
    k().complete_send(c.con(1));
    k().run();
    EXPECT_EQ(count_logs("chunk 0: unknown message type at offset 4112; closing the path"), 1)
        << all_logs();
    EXPECT_FALSE(path_up(f));
    EXPECT_TRUE(f.finish());
}

TEST(Io, AnImmediateNamingNoChunkClosesThePath) {
    h::Opts o;
    o.queue_depth = 12;  // 4 bits of chunk id: 12..15 name no chunk
    h::Fixture f(o);
    auto c = h::client(52);
    ASSERT_TRUE(f.up(c, "range"));
    ASSERT_TRUE(f.io_imm(c, 1, 13, 4));
    k().run();
    EXPECT_EQ(count_logs("names no chunk of the session; closing the path"), 1) << all_logs();
    EXPECT_FALSE(path_up(f));
    EXPECT_TRUE(f.finish());
}

TEST(Io, UnknownImmediateTypesCloseThePathHeartbeatsDoNot) {
    h::Fixture f;
    auto c = h::client(53);
    ASSERT_TRUE(f.up(c, "imm"));
    // A heartbeat: acked on the connection it came on.
    ASSERT_TRUE(k().deliver_imm(c.con(1), wire::imm_encode(wire::ImmType::HbMsg, 0)));
    ASSERT_EQ(f.sendq(c, 1).size(), 1u);
    EXPECT_EQ(wire::imm_decode(c.con(1)->sends.back().wr.imm).type,
              static_cast<std::uint32_t>(wire::ImmType::HbAck));
    ASSERT_TRUE(k().deliver_imm(c.con(1), wire::imm_encode(wire::ImmType::HbAck, 0)));
    EXPECT_TRUE(path_up(f));
    ASSERT_TRUE(k().deliver_imm(c.con(0), (5u << 28) | 1));
    k().run();
    EXPECT_EQ(count_logs("unknown immediate type 5"), 1);
    EXPECT_FALSE(path_up(f));
    EXPECT_TRUE(f.finish());
}

// Past the handshake only immediates come: a message (a send) on a path
// that is up would use up a receive for good, so it closes the path.
TEST(Io, AMessageOnAPathThatIsUpClosesIt) {
    h::Fixture f;
    auto c = h::client(61);
    ASSERT_TRUE(f.up(c, "message"));
    // (deliver_recv() makes any message into a buffer-less receive a length
    // error; a zero-length one completes as a receive: delivered by hand.)
    rtrs_core_wc wc{};
    wc.ok = 1;
    wc.status = "success";
    wc.opcode = RTRS_CORE_WC_RECV;
    fake::PostedRecv r = c.con(0)->recvs.front();
    c.con(0)->recvs.pop_front();
    rtrs_core_on_wc(c.con(0)->core, r.cqe, &wc);
    k().run();
    EXPECT_EQ(count_logs("of a path that is up; closing the path"), 1) << all_logs();
    EXPECT_FALSE(path_up(f));
    EXPECT_TRUE(f.finish());
}

TEST(Io, TheUlpFailingARequestAnswersWithItsError) {
    h::Fixture f;
    auto c = h::client(54);
    ASSERT_TRUE(f.up(c, "ulpfail"));
    k().ulp.rdma_ev = [](void*, rtrs_srv_op*, void*, std::uint32_t, const void*, std::uint32_t) {
        return -5;
    };
    EXPECT_NE(f.write(c, 1, 0, std::vector<std::uint8_t>(64, 1), {}), nullptr);
    EXPECT_EQ(answered(c.con(1)), -5);
    EXPECT_EQ(count_logs("the upper layer failed request 0: -5"), 1);
    k().complete_all_sends(c.con(1));
    EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_STATS_RDMA), "0 0 1 64 0\n");
    EXPECT_TRUE(f.finish());
}

// 5.10's upper-layer API also hands the ULP the session and the direction of
// each request (src/kernel/main.c passes them on there): the session is the
// one its link events named, READ for a client's read, WRITE for its write.
TEST(Io, TheUlpIsToldTheSessionAndTheDirectionOfEachRequest) {
    h::Fixture f;
    auto c = h::client(57);
    ASSERT_TRUE(f.up(c, "dir"));
    void* sess = nullptr;
    for (const auto& e : k().events)
        if (e.kind == fake::Event::LinkEv && e.ev == RTRS_CORE_LINK_CONNECTED) sess = e.sess;
    ASSERT_NE(sess, nullptr);
    rtrs_srv_op* w = f.write(c, 1, 1, std::vector<std::uint8_t>(64, 1), {});
    ASSERT_NE(w, nullptr);
    rtrs_srv_op* r = f.read(c, 1, 2, 512, {});
    ASSERT_NE(r, nullptr);
    int writes = 0, reads = 0;
    for (const auto& e : k().events) {
        if (e.kind != fake::Event::RdmaEv) continue;
        EXPECT_EQ(e.sess, sess);
        if (e.op == w) {
            EXPECT_EQ(e.dir, RTRS_CORE_DIR_WRITE);
            writes++;
        } else if (e.op == r) {
            EXPECT_EQ(e.dir, RTRS_CORE_DIR_READ);
            reads++;
        }
    }
    EXPECT_EQ(writes, 1);
    EXPECT_EQ(reads, 1);
    rtrs_core_answer(w, 0);
    rtrs_core_answer(r, 0);
    k().complete_all_sends(c.con(1));
    EXPECT_TRUE(f.finish());
}

// A second request on a chunk whose first is still with the ULP would have
// its data overwritten under it: the path closes instead.
TEST(Io, ASecondRequestOnABusyChunkClosesThePath) {
    for (bool inval : {true, false}) {
        h::Opts o;
        o.always_invalidate = inval;
        h::Fixture f(o);
        auto c = h::client(55);
        ASSERT_TRUE(f.up(c, "busy"));
        rtrs_srv_op* op = f.write(c, 1, 6, std::vector<std::uint8_t>(10, 1), {});
        ASSERT_NE(op, nullptr);
        ASSERT_TRUE(f.io_imm(c, 0, 6, 10));
        k().run();
        EXPECT_EQ(count_logs("chunk 6: a new request while the previous one is in flight"), 1)
            << all_logs();
        EXPECT_EQ(f.ops_seen(), 1u);
        rtrs_core_answer(op, 0);
        k().run();
        EXPECT_FALSE(path_up(f));
        EXPECT_TRUE(f.finish());
    }
}

// The client may reuse a chunk as soon as it has its response, before the
// server's send completion comes: that is no second request.
TEST(Io, AChunkReusedBeforeTheResponseCompletedIsFine) {
    h::Fixture f;
    auto c = h::client(56);
    ASSERT_TRUE(f.up(c, "reuse"));
    rtrs_srv_op* op = f.write(c, 1, 2, std::vector<std::uint8_t>(10, 1), {});
    ASSERT_NE(op, nullptr);
    rtrs_core_answer(op, 0);
    // No completion of the response yet; the next request on chunk 2.
    std::size_t before = f.ops_seen();
    ASSERT_TRUE(f.io_imm(c, 1, 2, 10));
    // Completes the response chain, then the local invalidation.
    k().complete_send(c.con(1));
    k().complete_send(c.con(1));
    EXPECT_EQ(f.ops_seen(), before + 1);
    rtrs_core_answer(f.last_op(), 0);
    k().complete_all_sends(c.con(1));
    EXPECT_TRUE(path_up(f));
    EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_STATS_RDMA), "0 0 2 20 0\n");
    EXPECT_TRUE(f.finish());
}

// A device whose queues hold less than a full load: what does not fit
// waits for room, in order, and every request is served.
TEST(Io, ASendQueueTooSmallForTheLoadMakesRequestsWait) {
    h::Opts o;
    o.queue_depth = 512;
    h::Fixture f(o);
    k().dev_attrs.max_qp_wr = 600;  // 513 receives fit; 600 sends, not 512 x 5
    auto c = h::client(57);
    ASSERT_TRUE(f.up(c, "small"));
    EXPECT_EQ(c.con(1)->sizes.max_send_wr, 600u);
    // 512 requests on one connection at once: 512 invalidations, then 512
    // responses of 2 work requests each.
    for (std::uint32_t id = 0; id < 512; ++id) {
        std::uint8_t* mem = f.chunk_mem(c, id);
        ASSERT_TRUE(wire::encode_rdma_write(rt::MutBytes(mem + 8, 8), 0).ok());
        ASSERT_TRUE(f.io_imm(c, 1, id, 8));
    }
    EXPECT_EQ(c.con(1)->sends.size(), 512u);
    for (int guard = 0; guard < 10000 && f.ops_seen() < 512; ++guard)
        if (!k().complete_send(c.con(1))) break;
    EXPECT_EQ(f.ops_seen(), 512u) << "every request reached the ULP";
    for (auto& e : k().events)
        if (e.kind == fake::Event::RdmaEv) rtrs_core_answer(e.op, 0);
    // 599 of the 600 are ours (one is the drain's), and responses take 2.
    EXPECT_EQ(c.con(1)->sends.size(), 598u) << "the queue full, the rest of the responses waiting";
    int rounds = 0;
    while (k().complete_send(c.con(1))) ++rounds;
    EXPECT_EQ(rounds, 512);
    EXPECT_TRUE(c.con(1)->sends.empty());
    EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_STATS_RDMA), "0 0 512 4096 0\n");
    EXPECT_TRUE(f.finish());
}

// With always_invalidate every chunk has a registration, and the info
// response registers them all on connection 0: a queue depth far past what
// its send queue holds goes in batches.
TEST(Io, ALargeQueueDepthRegistersInBatches) {
    h::Opts o;
    o.queue_depth = 4096;
    o.chunk_size = 8192;
    h::Fixture f(o);
    k().dev_attrs.max_qp_wr = 4200;
    auto c = h::client(58);
    ASSERT_TRUE(f.up(c, "deep"));
    EXPECT_EQ(c.descs.size(), 4096u);
    EXPECT_EQ(c.con(0)->sizes.max_send_wr, 4200u);
    rtrs_srv_op* op = f.write(c, 1, 4095, std::vector<std::uint8_t>(8, 1), {});
    ASSERT_NE(op, nullptr);
    rtrs_core_answer(op, 0);
    EXPECT_TRUE(k().complete_send(c.con(1)));
    EXPECT_TRUE(f.finish());
}

TEST(Heartbeat, ASilentClientIsDroppedAfterFiveMissedPeriods) {
    h::Fixture f;
    auto c = h::client(59);
    ASSERT_TRUE(f.up(c, "silent"));
    k().advance(5000);
    ASSERT_EQ(f.sendq(c, 0).size(), 1u) << "a heartbeat after a period with traffic";
    EXPECT_EQ(wire::imm_decode(c.con(0)->sends.back().wr.imm).type,
              static_cast<std::uint32_t>(wire::ImmType::HbMsg));
    k().complete_all_sends(c.con(0));
    k().advance(5000 * 5);
    EXPECT_TRUE(path_up(f));
    k().advance(5000);
    k().run();
    EXPECT_EQ(count_logs("no heartbeat from the client; closing the path"), 1) << all_logs();
    EXPECT_FALSE(path_up(f));
    EXPECT_TRUE(f.finish());
}

TEST(Heartbeat, AnyTrafficKeepsThePathUp) {
    h::Fixture f;
    auto c = h::client(60);
    ASSERT_TRUE(f.up(c, "chatty"));
    for (int i = 0; i < 20; ++i) {
        k().advance(5000);
        k().complete_all_sends(c.con(0));
        ASSERT_TRUE(k().deliver_imm(c.con(i % 2), wire::imm_encode(wire::ImmType::HbAck, 0)));
    }
    EXPECT_TRUE(path_up(f));
    EXPECT_EQ(count_logs("no heartbeat"), 0);
    EXPECT_TRUE(f.finish());
}

// --- Signaling: which responses ask for a completion -------------------------

namespace {

// Whether the response immediate last posted on con is signaled.
bool last_response_signaled(fake::Con* con) {
    for (auto it = con->sends.rbegin(); it != con->sends.rend(); ++it) {
        auto t = wire::imm_decode(it->wr.imm);
        if (it->wr.op != RTRS_ENV_WR_LOCAL_INV &&
            (t.is(wire::ImmType::IoRsp) || t.is(wire::ImmType::IoRspWithInv)))
            return it->wr.signaled != 0;
    }
    ADD_FAILURE() << "no response in the send queue";
    return false;
}

// Unsignaled work requests after the newest signaled one on con.
std::size_t unsignaled_tail(fake::Con* con) {
    std::size_t n = 0;
    for (auto it = con->sends.rbegin(); it != con->sends.rend() && !it->wr.signaled; ++it) ++n;
    return n;
}

}  // namespace

class Signal : public ::testing::TestWithParam<bool> {};

TEST_P(Signal, OneResponseInTheIntervalAsksForACompletion) {
    h::Opts o;
    o.always_invalidate = GetParam();
    o.signal_interval = 4;
    h::Fixture f(o);
    auto c = h::client(61);
    ASSERT_TRUE(f.up(c, "sampled"));
    for (std::uint32_t i = 0; i < 12; ++i) {
        rtrs_srv_op* op = f.write(c, 1, i, std::vector<std::uint8_t>(64, 3), {});
        ASSERT_NE(op, nullptr) << i;
        rtrs_core_answer(op, 0);
        // Local invalidations are signaled always and do not count.
        EXPECT_EQ(last_response_signaled(c.con(1)), i % 4 == 3) << "response " << i;
    }
    k().complete_all_sends(c.con(1));
    EXPECT_EQ(unsignaled_tail(c.con(1)), c.con(1)->sends.size());
    EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_STATS_RDMA), "0 0 12 768 0\n");
    EXPECT_TRUE(f.finish());
    EXPECT_EQ(count_logs("failed"), 0) << all_logs();
}

TEST_P(Signal, TheModuleDefaultIsOneIn512) {
    h::Opts o;
    o.always_invalidate = GetParam();
    o.signal_interval = 0;  // as the module parameter's default
    o.queue_depth = 512;    // a send queue whose half holds 511 responses
    h::Fixture f(o);
    auto c = h::client(62);
    ASSERT_TRUE(f.up(c, "default"));
    int signaled = 0;
    for (std::uint32_t i = 0; i < 1024; ++i) {
        rtrs_srv_op* op = f.write(c, 1, i % 16, std::vector<std::uint8_t>(8, 1), {});
        ASSERT_NE(op, nullptr) << i;
        rtrs_core_answer(op, 0);
        if (last_response_signaled(c.con(1))) {
            ++signaled;
            EXPECT_EQ(i % 512, 511u) << i;
        }
        k().complete_all_sends(c.con(1));
    }
    EXPECT_EQ(signaled, 2);
    EXPECT_TRUE(f.finish());
}

// The request is done when its response is posted: the client may send
// the next one on that chunk before the server sees any completion.
TEST_P(Signal, AChunkIsFreeOnceItsResponseIsPosted) {
    h::Opts o;
    o.always_invalidate = GetParam();
    o.signal_interval = 32;
    h::Fixture f(o);
    auto c = h::client(63);
    ASSERT_TRUE(f.up(c, "reuse"));
    for (int i = 0; i < 5; ++i) {
        rtrs_srv_op* op = i % 2 ? f.read(c, 1, 0, 4096, {}) : f.write(c, 1, 0, {1, 2, 3}, {});
        ASSERT_NE(op, nullptr) << i;
        rtrs_core_answer(op, 0);
        EXPECT_FALSE(last_response_signaled(c.con(1)));
    }
    EXPECT_TRUE(path_up(f));
    EXPECT_EQ(count_logs("in flight"), 0) << all_logs();
    // Closed with unsignaled responses in the queue: they flush, quietly.
    EXPECT_TRUE(f.finish());
    EXPECT_EQ(count_logs("failed"), 0) << all_logs();
}

// Without a completion asked for (interval far past the queue), a signaled
// post still comes before the unsignaled tail reaches half the queue: so a
// response that finds no room always has a completion coming that posts it.
TEST_P(Signal, TheUnsignaledTailStaysUnderHalfTheQueue) {
    h::Opts o;
    o.always_invalidate = GetParam();
    o.queue_depth = 512;
    o.signal_interval = 1000000;
    h::Fixture f(o);
    k().dev_attrs.max_qp_wr = 600;  // 513 receives fit; 600 sends, not 512 x 5
    auto c = h::client(64);
    ASSERT_TRUE(f.up(c, "tail"));
    fake::Con* con = c.con(1);
    ASSERT_EQ(con->sizes.max_send_wr, 600u);
    for (int round = 0; round < 3; ++round) {
        SCOPED_TRACE(round);
        // 512 reads at once (2 or 3 work requests each): more than fits.
        std::vector<rtrs_srv_op*> ops;
        for (std::uint32_t id = 0; id < 512; ++id) {
            rtrs_srv_op* op = f.read(c, 1, id, 4096, {});
            ASSERT_NE(op, nullptr) << id;
            ops.push_back(op);
        }
        for (rtrs_srv_op* op : ops) {
            rtrs_core_answer(op, 0);
            ASSERT_LT(unsignaled_tail(con), 300u);
            ASSERT_LE(con->sends.size(), 599u);  // (one is the drain's)
        }
        while (k().complete_send(con)) ASSERT_LT(unsignaled_tail(con), 300u);
        EXPECT_LT(con->sends.size(), 300u) << "only the unsignaled tail is left";
    }
    // Nothing is still waiting to be sent: every chunk takes a new request.
    for (std::uint32_t id = 0; id < 512; ++id) {
        rtrs_srv_op* op = f.write(c, 1, id, {5}, {});
        ASSERT_NE(op, nullptr) << id;
        rtrs_core_answer(op, 0);
    }
    EXPECT_TRUE(path_up(f));
    EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_STATS_RDMA), "1536 0 512 512 0\n");
    EXPECT_TRUE(f.finish());
}

INSTANTIATE_TEST_SUITE_P(Both, Signal, ::testing::Bool(),
                         [](const auto& i) { return i.param ? "Y" : "N"; });
