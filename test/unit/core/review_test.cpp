// SPDX-License-Identifier: GPL-2.0
// The defects a review of the core found (issue 21), each provoked here
// first: where the kernel would interleave two threads, the fake runs the
// second one at the chosen moment (Kernel::on_point, Kernel::on_release).
#include <gtest/gtest.h>

#include <cstring>

#include "core/module.h"
#include "core/path.h"
#include "fake_env.h"
#include "harness.h"

using fake::k;
using h::count_logs;

namespace {

const char* kPath = "ip:10.77.0.2@ip:10.77.0.1";

bool has_violation(const std::string& needle) {
    for (auto& v : k().violations)
        if (v.find(needle) != std::string::npos) return true;
    return false;
}

// The owner of the live work items of a kind (a path, for path work).
void* work_owner(unsigned kind) {
    for (auto& w : k().works)
        if (w->live && w->kind == kind) return w->owner;
    return nullptr;
}

// A valid write request (no data, no user header) at offset 0 of the
// first chunk mapped for DMA: chunk 0 of the only session.
void write_request_into_chunk0() {
    for (auto& d : k().dma)
        if (d.second.chunk) {
            auto n = wire::encode_rdma_write(
                rt::MutBytes(static_cast<std::uint8_t*>(d.second.cpu), d.second.len), 0);
            ASSERT_TRUE(n.ok());
            return;
        }
    FAIL() << "no chunk is mapped";
}

}  // namespace

// Item 1: the last session of a closing server goes in its path's teardown,
// with the server lock held; the closer, woken then, frees the server and
// its lock while the teardown still holds it.
TEST(Review, AServerClosingUnderSessionsIsWokenWithNoLockHeld) {
    h::Fixture f;
    auto a = h::client(1);
    auto b = h::client(2, 2, 3);
    ASSERT_TRUE(f.up(a, "one"));
    ASSERT_TRUE(f.up(b, "two"));
    rtrs_core_server_close(f.srv);
    f.srv = nullptr;
    EXPECT_FALSE(has_violation("a waiter woken with a lock held")) << h::problems();
    EXPECT_TRUE(f.finish());
}

// Item 2: a device removal that begins while a path is being set up on
// that device (after the path took the device, before it is on the
// device's list) must close that path too, and return at once.
TEST(Review, ADeviceRemovalDuringAPathsSetupDoesNotWaitForTheClient) {
    h::Fixture f;
    auto c = h::client(3, 2);
    rtrs_env_waiter* removal = nullptr;
    k().on_point = [&](const char* what) {
        if (std::strcmp(what, "mr_alloc") != 0) return;
        k().on_point = nullptr;
        removal = core::module()->begin_device_removal(c.ib_dev);
    };
    const int ret = f.connect(c, 0);
    ASSERT_NE(removal, nullptr) << "the removal began during the setup";
    const std::uint64_t t0 = k().now;
    core::module()->await_device_removal(removal);
    EXPECT_LT(k().now - t0, 3000u) << "the removal waited for the path to stall";
    // Refused, or accepted and closed: either way the client goes.
    if (ret == 0) EXPECT_TRUE(c.con(0)->destroyed);
    else EXPECT_EQ(c.cms[0]->reject_errno, 16);
    EXPECT_TRUE(f.finish());
}

// Item 2, the variant: the removal closes a new path whose first
// connection then fails; the path must not be freed with its close work
// pending.
TEST(Review, ANewPathClosedByARemovalAndFailingItsFirstConnectionIsFreedOnce) {
    h::Fixture f;
    auto c = h::client(4, 2);
    rtrs_env_waiter* removal = nullptr;
    k().on_point = [&](const char* what) {
        if (std::strcmp(what, "con_create") != 0) return;
        k().on_point = nullptr;
        removal = core::module()->begin_device_removal(c.ib_dev);
        k().fail_at = k().failure_points;  // and this QP cannot be made
    };
    EXPECT_NE(f.connect(c, 0), 0);
    ASSERT_NE(removal, nullptr);
    core::module()->await_device_removal(removal);
    EXPECT_FALSE(has_violation("pending work item freed")) << h::problems();
    EXPECT_TRUE(f.finish());
}

// Item 3 (FAILURES.md row 24): the client sends an I/O request while the
// ULP is still being told of the session: it must not reach the ULP
// before the ULP's CONNECTED has returned.
TEST(Review, NoIoReachesTheUlpBeforeItsConnectedEventReturned) {
    h::Fixture f;
    auto c = h::client(5, 2);
    ASSERT_TRUE(f.connect_all(c));
    bool in_connected = false, connected_ran = false, delivered = false;
    int early = 0, later = 0;
    k().ulp.rdma_ev = [&](void*, rtrs_srv_op*, void*, std::uint32_t, const void*, std::uint32_t) {
        if (in_connected) ++early;
        else ++later;
        return 0;
    };
    k().ulp.link_ev = [&](void*, int ev, void*) {
        if (ev != RTRS_CORE_LINK_CONNECTED) return 0;
        in_connected = connected_ran = true;
        write_request_into_chunk0();
        // A zero-length RDMA write with an I/O immediate for chunk 0.
        const std::uint32_t payload = wire::io_req_payload(0, 0, wire::chunk_bits(16));
        delivered = k().deliver_imm(c.con(1), wire::imm_encode(wire::ImmType::IoReq, payload));
        in_connected = false;
        return 0;
    };
    ASSERT_TRUE(f.send_info(c, "early"));
    k().run();
    // The request was there while the ULP was being told: else early == 0
    // would say nothing.
    ASSERT_TRUE(connected_ran) << "the ULP's CONNECTED never came";
    ASSERT_TRUE(delivered) << "the I/O immediate did not reach the server's connection";
    EXPECT_EQ(early, 0) << "the ULP got an I/O while it was being told of the session";
    // Then it was handed to the ULP once CONNECTED had returned, or the
    // path closed for it (ours: an I/O while the path joins is a protocol
    // error).
    const int closed = f.link_events(RTRS_CORE_LINK_DISCONNECTED);
    EXPECT_TRUE(later == 1 || closed == 1) << "the request went nowhere: " << later
                                           << " after CONNECTED, DISCONNECTED " << closed;
    EXPECT_TRUE(f.finish());
}

// Item 3, the other end: a second path joins while the session's only up
// path closes; the ULP hears DISCONNECTED for the first, then CONNECTED for
// the second, and no I/O of the second path in between.
TEST(Review, NoIoOfAJoiningPathReachesTheUlpBetweenDisconnectedAndConnected) {
    h::Fixture f;
    auto a = h::client(6, 2);
    ASSERT_TRUE(f.up(a, "gap"));
    auto b = h::sibling(a, 7, 3);
    ASSERT_TRUE(f.connect_all(b, false));
    // a goes; b keeps the session.
    ASSERT_EQ(f.store(kPath, RTRS_CORE_ATTR_DISCONNECT, "1"), 0);
    k().run();
    ASSERT_EQ(f.link_events(RTRS_CORE_LINK_DISCONNECTED), 1);
    bool connected = false, delivered = false;
    int stale = 0, later = 0;
    k().ulp.rdma_ev = [&](void*, rtrs_srv_op*, void*, std::uint32_t, const void*, std::uint32_t) {
        if (!connected) ++stale;
        else ++later;
        return 0;
    };
    k().ulp.link_ev = [&](void*, int ev, void*) {
        if (ev != RTRS_CORE_LINK_CONNECTED) return 0;
        write_request_into_chunk0();
        const std::uint32_t payload = wire::io_req_payload(0, 0, wire::chunk_bits(16));
        delivered = k().deliver_imm(b.con(1), wire::imm_encode(wire::ImmType::IoReq, payload));
        connected = true;
        return 0;
    };
    ASSERT_TRUE(f.send_info(b, "gap"));
    k().run();
    // b's CONNECTED came, with the request there while it ran.
    ASSERT_TRUE(connected) << "the ULP's CONNECTED for the joining path never came";
    ASSERT_TRUE(delivered) << "the I/O immediate did not reach the server's connection";
    EXPECT_EQ(stale, 0) << "an I/O reached the ULP for a session it had been told is gone";
    // Then it was handed to the ULP once b's CONNECTED had returned, or b
    // closed for it (a second DISCONNECTED).
    const int closed = f.link_events(RTRS_CORE_LINK_DISCONNECTED);
    EXPECT_TRUE(later == 1 || closed == 2) << "the request went nowhere: " << later
                                           << " after CONNECTED, DISCONNECTED " << closed;
    EXPECT_TRUE(f.finish());
}

// Item 5: the info request arrives as the path starts closing; the close
// work's first step (which cancels the info work) runs the moment the
// completion lets go of the io lock. No info work may be queued after it.
TEST(Review, TheInfoWorkIsNotQueuedAfterTheTeardownCancelledIt) {
    h::Fixture f;
    auto c = h::client(8, 2);
    ASSERT_TRUE(f.connect_all(c));
    k().disconnect_answer_ms = -1;  // the teardown then stops at its wait
    void* path = nullptr;
    k().on_release = [&](fake::Lock* l) {
        if (l->kind != RTRS_ENV_LOCK_PATH_IO) return;
        k().on_release = nullptr;
        path = work_owner(core::kWorkClose);
        k().cm_event(c.con(1), RTRS_CORE_CM_DISCONNECTED);
        k().run();
    };
    ASSERT_TRUE(f.send_info(c, "late"));
    ASSERT_NE(path, nullptr);
    EXPECT_EQ(k().pending_work(path, core::kWorkInfo), nullptr)
        << "the info work was queued after the teardown had cancelled it";
    k().advance(3000);
    EXPECT_TRUE(f.finish());
}

// Item 4: queue sizes are the core's, the drain's reserve included: a
// device whose max_qp_wr caps the send queue still gets a QP it can make,
// and the core never fills the reserve (the fake checks both).
TEST(Review, CappedQueuesLeaveTheDrainsReserve) {
    h::Opts o;
    o.queue_depth = 512;
    h::Fixture f(o);
    k().dev_attrs.max_qp_wr = 600;
    k().dev_attrs.max_cqe = 1100;
    auto c = h::client(9);
    ASSERT_TRUE(f.up(c, "capped"));
    EXPECT_LE(c.con(1)->sizes.max_send_wr, 600u);
    EXPECT_LE(c.con(1)->sizes.cq_size, 1100u);
    for (std::uint32_t id = 0; id < 512; ++id) {
        std::uint8_t* mem = f.chunk_mem(c, id);
        ASSERT_TRUE(wire::encode_rdma_write(rt::MutBytes(mem + 8, 8), 0).ok());
        ASSERT_TRUE(f.io_imm(c, 1, id, 8));
    }
    for (int guard = 0; guard < 10000 && f.ops_seen() < 512; ++guard)
        if (!k().complete_send(c.con(1))) break;
    for (auto& e : k().events)
        if (e.kind == fake::Event::RdmaEv) rtrs_core_answer(e.op, 0);
    while (k().complete_send(c.con(1))) {
    }
    EXPECT_EQ(h::problems(), "");
    EXPECT_TRUE(f.finish());
}

// Item 6 (row 27): a handshake kept going by one new connection every 20 s
// is closed by a deadline counted from its first connection.
TEST(Review, AHandshakeTrickleIsClosedByItsDeadline) {
    h::Fixture f;
    auto c = h::client(10, 8);
    const std::uint64_t t0 = k().now;
    ASSERT_EQ(f.connect(c, 0), 0);
    std::uint16_t cid = 1;
    while (!c.con(0)->destroyed && k().now - t0 < 120000) {
        k().advance(20000);
        if (c.con(0)->destroyed || cid >= 8) break;
        f.connect(c, cid++);
    }
    EXPECT_TRUE(c.con(0)->destroyed) << "the trickle kept the path for 2 minutes";
    EXPECT_LE(k().now - t0, 40000u);
    EXPECT_EQ(count_logs("handshake did not finish"), 1);
    EXPECT_TRUE(f.finish());
}

// Item 6: what a peer makes the server allocate besides chunks (queue
// pairs, completion queues, registrations) is charged to the memory
// budget: 4096 connections are not all made.
TEST(Review, ConnectionsAreChargedToTheMemoryBudget) {
    h::Opts o;
    o.chunk_mem_mb = 32;  // the session's chunks: 16 x 16 KiB
    h::Fixture f(o);
    auto c = h::client(11, 4096);
    int accepted = 0, refused = 0, last_err = 0;
    for (std::uint16_t cid = 0; cid < 4096; ++cid) {
        if (f.connect(c, cid) == 0) {
            ++accepted;
        } else {
            ++refused;
            last_err = c.cms[cid]->reject_errno;
            break;
        }
    }
    EXPECT_GT(accepted, 0);
    EXPECT_EQ(refused, 1) << "4096 connections of 16 requests fit in 32 MiB? charge more";
    EXPECT_EQ(last_err, 12);
    EXPECT_GE(count_logs("memory budget"), 1);
    EXPECT_GT(core::module()->chunk_mem_used(), 0u);
    k().advance(30000);  // the stalled handshake goes
    EXPECT_EQ(core::module()->chunk_mem_used(), 0u) << "what was charged is given back";
    EXPECT_TRUE(f.finish());
}

// Item 8: rtrs_srv_get_path_name() answers only while a path is up (in
// the CONNECTED event too), -ENOTCONN otherwise, as upstream's.
TEST(Review, ThePathNameIsThereOnlyWhileAPathIsUp) {
    h::Fixture f;
    auto c = h::client(12, 2);
    int at_connected = 1, at_disconnected = 0;
    k().ulp.link_ev = [&](void* sess, int ev, void*) {
        char name[64];
        int r = rtrs_core_get_path_name(static_cast<rtrs_srv_sess*>(sess), name, sizeof(name));
        if (ev == RTRS_CORE_LINK_CONNECTED) at_connected = r;
        else at_disconnected = r;
        return 0;
    };
    ASSERT_TRUE(f.up(c, "named"));
    ASSERT_EQ(f.store(kPath, RTRS_CORE_ATTR_DISCONNECT, "1"), 0);
    k().run();
    EXPECT_EQ(at_connected, 0);
    EXPECT_EQ(at_disconnected, -107);
    EXPECT_TRUE(f.finish());
}

// Item 8, the busy-chunk guard across paths: not a defect. A client that
// fails a closing path's requests over sends them again on another path,
// on chunks the closing path's ULP may still hold (upstream's rnbd-client
// does: fault.rnbd row 12 under dm-delay, 2026-12-02, when a session-wide
// guard closed the surviving path and failed the write). So a chunk held
// on a closing path takes a request on another one; on one path the guard
// stays (io_test).
TEST(Review, AChunkHeldByAClosingPathTakesTheFailedOverRequestOnAnother) {
    h::Fixture f;
    auto a = h::client(13, 2);
    ASSERT_TRUE(f.up(a, "busy"));
    auto b = h::sibling(a, 14, 3);
    ASSERT_TRUE(f.up(b, "busy"));
    rtrs_srv_op* held = f.write(a, 1, 3, std::vector<std::uint8_t>(64, 1), {});
    ASSERT_NE(held, nullptr);
    ASSERT_EQ(f.store(kPath, RTRS_CORE_ATTR_DISCONNECT, "1"), 0);
    k().run();  // a waits for its ULP's answer
    rtrs_srv_op* again = f.write(b, 1, 3, std::vector<std::uint8_t>(64, 1), {});
    EXPECT_NE(again, nullptr) << "the failed-over request was refused";
    rtrs_core_answer(held, 0);
    rtrs_core_answer(again, 0);
    k().run();
    EXPECT_TRUE(f.finish());
}

// Item 8 (row 25): a client that makes every request fail gets a bounded
// number of log lines, and the next line that goes says how many did not.
TEST(Review, APathsFailedRequestsDoNotFloodTheLog) {
    h::Fixture f;
    auto c = h::client(15, 2);
    ASSERT_TRUE(f.up(c, "flood"));
    const int before = count_logs("failing the request");
    for (int i = 0; i < 200; ++i) {
        // A read of 0 bytes: answered with an error, one line each.
        rtrs_srv_op* op = f.read(c, 1, static_cast<std::uint32_t>(i % 16), 0, {});
        EXPECT_EQ(op, nullptr);
        k().complete_all_sends(c.con(1));
    }
    const int logged = count_logs("failing the request") - before;
    EXPECT_GE(logged, 1);
    EXPECT_LE(logged, 10) << "200 failed requests in no time";
    k().advance(6000);
    f.read(c, 1, 0, 0, {});
    EXPECT_EQ(count_logs("failing the request") - before, logged + 1);
    EXPECT_EQ(count_logs("lines before it from the same source were not logged"), 1);
    EXPECT_TRUE(f.finish());
}

// Row 21: upstream mapped the chunks as one scatter list, and an IOMMU
// that merged its entries failed every session. Ours maps each chunk on
// its own (one mapping per chunk, nothing to merge) and registers their
// addresses as they came: with always_invalidate N, regions over several
// chunks list exactly the chunks' own mappings, in chunk order, and each
// chunk's data reaches the ULP from that chunk.
TEST(Review, EachChunkIsMappedAloneAndRegisteredInOrder) {
    h::Opts o;
    o.always_invalidate = false;
    h::Fixture f(o);
    k().dev_attrs.max_fast_reg_page_list_len = 4;  // 4 regions of 4 chunks
    auto c = h::client(16, 2);
    ASSERT_TRUE(f.up(c, "dma"));
    ASSERT_EQ(c.descs.size(), 4u);
    std::vector<std::uint64_t> listed;  // every region's list, in order
    for (auto& m : k().mrs)
        if (m->live) listed.insert(listed.end(), m->dma.begin(), m->dma.end());
    ASSERT_EQ(listed.size(), 16u) << "one address per chunk";
    void* data = nullptr;
    k().ulp.rdma_ev = [&](void*, rtrs_srv_op*, void* d, std::uint32_t, const void*, std::uint32_t) {
        data = d;
        return 0;
    };
    for (std::uint32_t id = 0; id < 16; ++id) {
        rtrs_srv_op* op = f.write(c, 1, id, std::vector<std::uint8_t>(32, static_cast<std::uint8_t>(id + 1)), {});
        ASSERT_NE(op, nullptr) << id;
        // The ULP got chunk id's memory, with the client's bytes, and the
        // id-th registered address is that chunk's own mapping.
        EXPECT_EQ(static_cast<const std::uint8_t*>(data)[0], id + 1) << id;
        auto it = k().dma.find(listed[id]);
        ASSERT_NE(it, k().dma.end()) << id;
        EXPECT_TRUE(it->second.chunk);
        EXPECT_EQ(it->second.cpu, data) << "registered address " << id << " is another chunk's";
        rtrs_core_answer(op, 0);
        k().complete_all_sends(c.con(1));
    }
    EXPECT_TRUE(f.finish());
}

// Row 23: CM events for a connection keep coming after its establishment
// failed and while the close work runs (the cm_id outlived the QP
// upstream): they are taken, and nothing is used after it is freed.
TEST(Review, CmEventsDuringTheCloseAfterAnEstablishmentErrorAreHarmless) {
    h::Fixture f;
    auto c = h::client(17, 3);
    ASSERT_EQ(f.connect(c, 0), 0);
    ASSERT_EQ(f.connect(c, 1), 0);
    ASSERT_EQ(f.connect(c, 2), 0);
    k().cm_event(c.con(0), RTRS_CORE_CM_ESTABLISHED);
    k().cm_event(c.con(1), RTRS_CORE_CM_ERROR, -110);  // establishment failed
    int late = 0;
    const rtrs_core_cm_event events[] = {RTRS_CORE_CM_ESTABLISHED, RTRS_CORE_CM_DISCONNECTED,
                                         RTRS_CORE_CM_ERROR, RTRS_CORE_CM_DEVICE_REMOVAL};
    k().on_release = [&](fake::Lock* l) {
        // (As another thread would: only where the close work holds nothing.)
        if (l->kind != RTRS_ENV_LOCK_PATH_IO || late >= 8 || !k().held.empty()) return;
        fake::Con* con = c.con(static_cast<std::uint16_t>(1 + late % 2));
        const int i = late++;
        if (!con->destroyed) k().cm_event(con, events[i % 4], -104);
    };
    k().advance(3000);
    k().on_release = nullptr;
    EXPECT_GT(late, 0);
    for (std::uint16_t i = 0; i < 3; ++i) EXPECT_TRUE(c.con(i)->destroyed) << i;
    EXPECT_TRUE(f.finish());
}
