// SPDX-License-Identifier: GPL-2.0
// A path's setup and timer: rules no test checked until the mutation
// campaign (tools/mutants, doc/testing.md "Mutation testing") changed them
// and every test still passed.
#include <gtest/gtest.h>

#include <cstring>

#include "core/addr.h"

#include "fake_env.h"
#include "harness.h"

using fake::k;
using h::count_logs;
using h::downs;

// The handshake's deadline (30 s from the first connection) is for the
// client: a ULP that takes longer over its CONNECTED event does not get
// the path closed under it, and the timer waits meanwhile rather than
// spin (the fake runs due work until none is due: a timer re-armed at 0
// would never let advance() return).
TEST(MutantsPath, AUlpSlowOverConnectedDoesNotGetThePathClosed) {
    h::Fixture f;
    auto c = h::client(170);
    ASSERT_TRUE(f.connect_all(c));
    bool slow = false;
    k().ulp.link_ev = [&](void*, int ev, void*) {
        if (ev == RTRS_CORE_LINK_CONNECTED && !slow) {
            slow = true;
            // The ULP takes 40 s; the path's timer runs meanwhile on
            // another CPU, which holds none of this thread's locks.
            auto mine = k().held;
            k().held.clear();
            k().advance(40000);
            k().held = mine;
        }
        return 0;
    };
    ASSERT_TRUE(f.send_info(c, "slow-ulp"));
    ASSERT_TRUE(f.finish_join(c));
    EXPECT_TRUE(slow);
    EXPECT_EQ(downs("stalled handshake"), 0);
    EXPECT_NE(f.sysfs_path("ip:10.77.0.2@ip:10.77.0.1"), nullptr);
    EXPECT_EQ(k().traces_named("path_up").size(), 1u);
    EXPECT_TRUE(f.finish());
}

// A path whose session cannot get its sysfs folder does not come up: the
// ULP hears nothing of it, and it closes as "setup failed".
TEST(MutantsPath, NoSessionFolderNoPath) {
    h::Fixture f;
    auto c = h::client(171);
    ASSERT_TRUE(f.connect_all(c));
    k().on_point = [](const char* what) {
        if (std::strcmp(what, "sysfs_sess_add") == 0) k().fail_at = k().failure_points;
    };
    ASSERT_TRUE(f.send_info(c, "no-folder"));
    k().run();
    k().on_point = nullptr;
    EXPECT_TRUE(k().failed);
    EXPECT_EQ(count_logs("no-folder: cannot add the session to sysfs"), 1);
    EXPECT_EQ(downs("setup failed"), 1);
    EXPECT_EQ(f.link_events(RTRS_CORE_LINK_CONNECTED), 0);
    EXPECT_TRUE(k().traces_named("path_up").empty());
    EXPECT_EQ(f.sysfs_path("ip:10.77.0.2@ip:10.77.0.1"), nullptr);
    EXPECT_TRUE(f.finish());
}

// A path's handshake is closed 25 s (kStallMs) after its first connection, not
// before, and the line says so.
TEST(MutantsPath, TheHandshakeDeadlineIsCountedFromTheFirstConnection) {
    h::Fixture f;
    auto c = h::client(172);
    ASSERT_TRUE(f.connect_all(c));
    k().advance(24999);
    EXPECT_EQ(downs("stalled handshake"), 0) << "closed before 25 s";
    k().advance(1);
    EXPECT_EQ(downs("stalled handshake"), 1);
    EXPECT_EQ(count_logs("the handshake did not finish within 25 s of its first connection"), 1);
    EXPECT_TRUE(f.finish());
}

// A device whose queues hold exactly what a connection needs (the
// receives of every chunk, the drain's work request, the smallest send
// queue that works) is used; one work request less, and it is refused.
TEST(MutantsPath, ADeviceWithExactlyTheQueuesNeededIsUsed) {
    h::Opts o;
    o.queue_depth = 1024;  // connection 1's queues are the larger
    o.chunk_size = 8192;
    for (std::uint32_t less : {0u, 1u}) {
        SCOPED_TRACE(less);
        h::Fixture f(o);
        // Connection 1: 1024 receives, one more (as upstream), the drain's.
        k().dev_attrs.max_qp_wr = 1024 + 1 + 1 - less;
        auto c = h::client(173, 2);
        ASSERT_EQ(f.connect(c, 0), 0);
        const int ret = f.connect(c, 1);
        if (less) EXPECT_NE(ret, 0);
        else EXPECT_EQ(ret, 0);
        k().run();
        EXPECT_TRUE(f.finish());
    }
}

// Only ::ffff:a.b.c.d is an IPv4-mapped address: a nonzero fifth group
// makes it plain IPv6, printed in groups.
TEST(MutantsPath, AnAddressIsIpv4MappedOnlyWithFiveZeroGroups) {
    rtrs_core_addr a{};
    a.family = RTRS_CORE_AF_INET6;
    const unsigned char b[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 10, 77, 0, 2};
    for (int i = 0; i < 16; ++i) a.bytes[i] = b[i];
    char buf[64];
    core::format_addr(a, buf, sizeof(buf));
    EXPECT_STREQ(buf, "ip:::1:ffff:a4d:2");
    a.bytes[9] = 0;
    core::format_addr(a, buf, sizeof(buf));
    EXPECT_STREQ(buf, "ip:::ffff:10.77.0.2");
}

// The info response of a path with more registrations than connection 0's
// send queue holds goes out in parts: each part's completion posts the
// next, until the response itself is sent.
TEST(MutantsPath, AnInfoResponseLargerThanTheSendQueueGoesOutAsRoomComes) {
    h::Opts o;
    o.queue_depth = 4096;  // always_invalidate: a registration per chunk
    o.chunk_size = 8192;
    h::Fixture f(o);
    // Connection 0 (513 receives and the drain's) gets a send queue of 300.
    k().dev_attrs.max_cqe = 514 + 300;
    auto c = h::client(174, 1);  // the service connection alone
    ASSERT_TRUE(f.connect_all(c));
    EXPECT_EQ(c.con(0)->sizes.max_send_wr, 300u);
    ASSERT_TRUE(f.send_info(c, "parts"));
    ASSERT_TRUE(f.finish_join(c)) << "the response went out";
    EXPECT_EQ(c.descs.size(), 4096u);
    EXPECT_GE(c.con(0)->total_sends, 4097u);
    EXPECT_TRUE(f.finish());
}

// The smallest send queue a connection works with holds one chain of
// registrations (RTRS_ENV_MAX_CHAIN) and one more, and the drain's work
// request: a device whose CQs leave exactly that is used, one less not.
TEST(MutantsPath, TheSmallestSendQueueThatWorksIsAccepted) {
    for (std::uint32_t less : {0u, 1u}) {
        SCOPED_TRACE(less);
        h::Fixture f;
        // Connection 0: 513 receives and the drain's; the rest of the CQ
        // is the send queue.
        k().dev_attrs.max_cqe = 514 + RTRS_ENV_MAX_CHAIN + 1 + 1 - less;
        auto c = h::client(175, 1);
        const int ret = f.connect(c, 0);
        if (less) {
            EXPECT_NE(ret, 0);
            EXPECT_EQ(count_logs("the device's queues are too small for a connection"), 1);
        } else {
            EXPECT_EQ(ret, 0);
        }
        k().run();
        EXPECT_TRUE(f.finish());
    }
}
