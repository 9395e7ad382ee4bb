// SPDX-License-Identifier: GPL-2.0
// Teardowns in every order: closes of all kinds at every step of a path's
// life, answers from the ULP after the path closed, closes racing each
// other, devices going away, the server closing under live sessions.
#include <gtest/gtest.h>

#include <functional>

#include "fake_env.h"
#include "harness.h"

using fake::k;
using h::count_logs;

namespace {

const char* kPath = "ip:10.77.0.2@ip:10.77.0.1";

enum class Close { ClientCm, Sysfs, DeviceRemoval, ServerClose, CmError, SendError };

const char* close_name(Close c) {
    switch (c) {
    case Close::ClientCm: return "ClientCm";
    case Close::Sysfs: return "Sysfs";
    case Close::DeviceRemoval: return "DeviceRemoval";
    case Close::ServerClose: return "ServerClose";
    case Close::CmError: return "CmError";
    case Close::SendError: return "SendError";
    }
    return "?";
}

// Closes c's path the given way (as far as it exists).
void do_close(h::Fixture& f, h::Client& c, Close how) {
    fake::Con* any = nullptr;
    for (std::uint16_t i = 0; i < c.cid_num; ++i)
        if (c.con(i)) any = c.con(i);
    switch (how) {
    case Close::ClientCm:
        if (any) k().cm_event(any, RTRS_CORE_CM_DISCONNECTED);
        break;
    case Close::CmError:
        if (any) k().cm_event(any, RTRS_CORE_CM_ERROR, -110);
        break;
    case Close::Sysfs:
        if (f.sysfs_path(kPath)) EXPECT_EQ(f.store(kPath, RTRS_CORE_ATTR_DISCONNECT, "1"), 0);
        else if (any) k().cm_event(any, RTRS_CORE_CM_DISCONNECTED);
        break;
    case Close::DeviceRemoval:
        rtrs_core_on_device_remove(c.ib_dev);
        break;
    case Close::ServerClose:
        rtrs_core_server_close(f.srv);
        f.srv = nullptr;
        break;
    case Close::SendError:
        if (any && !any->sends.empty()) k().complete_send(any, false);
        else if (any) k().cm_event(any, RTRS_CORE_CM_DISCONNECTED);
        break;
    }
    k().run();
}

// The steps of a path's life, one after the other; returns false once a
// step cannot be taken (the path is gone).
struct Script {
    h::Fixture& f;
    h::Client& c;
    rtrs_srv_op* op = nullptr;
    bool step(int i) {
        switch (i) {
        case 0: return f.connect(c, 0) == 0;
        case 1: k().cm_event(c.con(0), RTRS_CORE_CM_ESTABLISHED); return true;
        case 2: return f.connect(c, 1) == 0;
        case 3: k().cm_event(c.con(1), RTRS_CORE_CM_ESTABLISHED); return true;
        case 4: return f.send_info(c, "script");
        case 5: k().run(); return true;  // the info work: sysfs, ULP, registrations
        case 6: return f.finish_join(c);
        case 7: op = f.write(c, 1, 2, std::vector<std::uint8_t>(512, 1), {1, 2}); return op != nullptr;
        case 8: rtrs_core_answer(op, 0); op = nullptr; return true;
        case 9: return k().complete_send(c.con(1));
        case 10: op = f.read(c, 0, 4, 4096, {}, true); return op != nullptr;
        }
        return false;
    }
    static constexpr int kSteps = 11;
};

class CloseAt : public ::testing::TestWithParam<std::tuple<Close, bool>> {};

}  // namespace

// After each step of the script, the path is closed one way; whatever the
// state, the teardown ends with nothing left, no lock or post broken, and
// the ULP told of a link down exactly when it was told of a link up.
TEST_P(CloseAt, EveryStepOfALifeEndsClean) {
    const Close how = std::get<0>(GetParam());
    for (int at = 0; at <= Script::kSteps; ++at) {
        SCOPED_TRACE("close after step " + std::to_string(at));
        h::Opts o;
        o.always_invalidate = std::get<1>(GetParam());
        h::Fixture f(o);
        auto c = h::client(30);
        Script s{f, c};
        bool ok = true;
        for (int i = 0; i < at && ok; ++i) ok = s.step(i);
        ASSERT_TRUE(ok) << "the script failed before the close";
        rtrs_srv_op* held = s.op;
        // The ULP holds a request: it answers while the server waits.
        k().on_wait = [&held] {
            if (held) rtrs_core_answer(held, -5);
            held = nullptr;
        };
        do_close(f, c, how);
        if (held) {
            // The path waits for the answer before it goes.
            EXPECT_EQ(count_logs(" closed ("), 0);
            rtrs_core_answer(held, -5);
            k().run();
        }
        EXPECT_EQ(f.link_events(RTRS_CORE_LINK_CONNECTED), f.link_events(RTRS_CORE_LINK_DISCONNECTED));
        EXPECT_EQ(count_logs(": closing path"), at == 0 ? 0 : 1);
        EXPECT_TRUE(f.finish());
    }
}

INSTANTIATE_TEST_SUITE_P(
    All, CloseAt,
    ::testing::Combine(::testing::Values(Close::ClientCm, Close::Sysfs, Close::DeviceRemoval,
                                         Close::ServerClose, Close::CmError, Close::SendError),
                       ::testing::Bool()),
    [](const auto& i) {
        return std::string(close_name(std::get<0>(i.param))) + (std::get<1>(i.param) ? "_Y" : "_N");
    });

TEST(Teardown, TheUlpAnswersAfterThePathClosed) {
    h::Fixture f;
    auto c = h::client(31);
    ASSERT_TRUE(f.up(c, "late"));
    rtrs_srv_op* a = f.write(c, 1, 0, std::vector<std::uint8_t>(100, 7), {});
    rtrs_srv_op* b = f.read(c, 1, 1, 100, {});
    ASSERT_TRUE(a && b);
    EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_STATS_RDMA), "1 0 1 100 2\n");
    k().cm_event(c.con(0), RTRS_CORE_CM_DISCONNECTED);
    k().run();
    // Drained, waiting: still in sysfs, the ULP not told.
    EXPECT_TRUE(c.con(0)->drained && c.con(1)->drained);
    EXPECT_NE(f.sysfs_path(kPath), nullptr);
    EXPECT_EQ(f.link_events(RTRS_CORE_LINK_DISCONNECTED), 0);
    std::size_t sends = c.con(1)->total_sends;
    rtrs_core_answer(a, 0);
    k().run();
    EXPECT_EQ(c.con(1)->total_sends, sends) << "nothing posted after the drain";
    EXPECT_NE(f.sysfs_path(kPath), nullptr) << "one answer still out";
    rtrs_core_answer(b, 0);
    k().run();
    EXPECT_EQ(f.sysfs_path(kPath), nullptr);
    EXPECT_EQ(f.link_events(RTRS_CORE_LINK_DISCONNECTED), 1);
    EXPECT_TRUE(f.finish());
}

TEST(Teardown, AnAnswerForNoRequestIsReported) {
    h::Fixture f;
    auto c = h::client(32);
    ASSERT_TRUE(f.up(c, "twice"));
    rtrs_srv_op* a = f.write(c, 1, 0, std::vector<std::uint8_t>(10, 1), {});
    ASSERT_NE(a, nullptr);
    rtrs_core_answer(a, 0);
    rtrs_core_answer(a, 0);
    ASSERT_EQ(fake_env::state().warnings.size(), 1u);
    EXPECT_NE(fake_env::state().warnings[0].find("does not hold"), std::string::npos);
    fake_env::state().warnings.clear();
    EXPECT_TRUE(f.finish());
}

TEST(Teardown, ClosesRacingEachOtherMakeOneTeardown) {
    h::Fixture f;
    auto c = h::client(33);
    ASSERT_TRUE(f.up(c, "race"));
    EXPECT_EQ(f.store(kPath, RTRS_CORE_ATTR_DISCONNECT, "1"), 0);
    EXPECT_EQ(f.store(kPath, RTRS_CORE_ATTR_DISCONNECT, "1\n"), 0);
    k().cm_event(c.con(0), RTRS_CORE_CM_DISCONNECTED);
    k().cm_event(c.con(1), RTRS_CORE_CM_ERROR, -104);
    k().complete_send(c.con(0), false);  // and a failed send, if one is outstanding
    k().run();
    EXPECT_EQ(count_logs(": closing path"), 1);
    EXPECT_EQ(count_logs(" closed (sysfs disconnect)"), 1);
    EXPECT_TRUE(f.finish());
}

TEST(Teardown, BadWritesToTheFilesChangeNothing) {
    h::Fixture f;
    auto c = h::client(34);
    ASSERT_TRUE(f.up(c, "files"));
    for (const char* bad : {"0", "2", "yes", "11", "1 1", "\n", "1\n\n", ""}) {
        EXPECT_EQ(f.store(kPath, RTRS_CORE_ATTR_DISCONNECT, bad), -22) << "'" << bad << "'";
        EXPECT_EQ(f.store(kPath, RTRS_CORE_ATTR_STATS_RDMA, bad), -22) << "'" << bad << "'";
    }
    EXPECT_EQ(f.store(kPath, RTRS_CORE_ATTR_HCA_NAME, "1"), -22);
    k().run();
    EXPECT_NE(f.sysfs_path(kPath), nullptr);
    EXPECT_TRUE(f.finish());
}

// Two paths of one session: the session's folder goes with the last visible
// path, and a path coming up later gets a new one (a device is never added
// again once deleted).
TEST(Teardown, TheSessionFolderGoesWithItsLastVisiblePathAndComesBackNew) {
    h::Fixture f;
    auto a = h::client(35, 2, 2);
    ASSERT_TRUE(f.up(a, "pair"));
    auto b = h::sibling(a, 36, 2);
    ASSERT_TRUE(f.connect_all(b));  // connecting, not visible yet
    fake::SysfsSess* first = f.sysfs_sess("pair");
    ASSERT_NE(first, nullptr);
    k().cm_event(a.con(0), RTRS_CORE_CM_DISCONNECTED);
    k().run();
    EXPECT_FALSE(first->live);
    EXPECT_EQ(f.sysfs_sess("pair"), nullptr);
    ASSERT_TRUE(f.send_info(b, "pair"));
    ASSERT_TRUE(f.finish_join(b));
    fake::SysfsSess* second = f.sysfs_sess("pair");
    ASSERT_NE(second, nullptr);
    EXPECT_NE(second, first);
    EXPECT_EQ(f.link_events(RTRS_CORE_LINK_CONNECTED), 2);
    EXPECT_EQ(f.link_events(RTRS_CORE_LINK_DISCONNECTED), 1);
    EXPECT_TRUE(f.finish());
}

// A close while the info work is in the ULP's link event: the heartbeat
// timer must not be left behind (it was, in the C glue).
TEST(Teardown, ACloseDuringTheLinkEventLeavesNoTimer) {
    h::Fixture f;
    auto c = h::client(37);
    k().ulp.link_ev = [&](void*, int ev, void*) {
        if (ev == RTRS_CORE_LINK_CONNECTED) {
            // The sysfs file exists by now: the operator writes it.
            EXPECT_EQ(f.store(kPath, RTRS_CORE_ATTR_DISCONNECT, "1"), 0);
        }
        return 0;
    };
    ASSERT_TRUE(f.connect_all(c));
    ASSERT_TRUE(f.send_info(c, "window"));
    k().run();
    k().advance(30000);
    EXPECT_EQ(f.sysfs_path(kPath), nullptr);
    EXPECT_EQ(f.link_events(RTRS_CORE_LINK_DISCONNECTED), 1);
    EXPECT_TRUE(f.finish());
}

TEST(Teardown, TheUlpRefusingTheSessionClosesThePath) {
    h::Fixture f;
    auto c = h::client(38);
    k().ulp.link_ev = [](void*, int ev, void*) { return ev == RTRS_CORE_LINK_CONNECTED ? -12 : 0; };
    ASSERT_TRUE(f.connect_all(c));
    ASSERT_TRUE(f.send_info(c, "refused"));
    k().run();
    EXPECT_EQ(count_logs("the upper layer refused the session: -12"), 1);
    EXPECT_EQ(f.sysfs_path(kPath), nullptr);
    EXPECT_EQ(f.link_events(RTRS_CORE_LINK_DISCONNECTED), 0) << "never up, so never down";
    EXPECT_TRUE(f.finish());
}

TEST(Teardown, DeviceRemovalClosesItsPathsOnlyAndWaits) {
    h::Fixture f;
    auto a = h::client(39, 2, 2, 1);
    auto b = h::client(40, 2, 3, 2);
    ASSERT_TRUE(f.up(a, "dev1"));
    ASSERT_TRUE(f.up(b, "dev2"));
    rtrs_core_on_device_remove(a.ib_dev);
    // It returned: nothing of ours is left on the device.
    EXPECT_EQ(f.sysfs_sess("dev1"), nullptr);
    EXPECT_TRUE(a.con(0)->destroyed && a.con(1)->destroyed);
    EXPECT_FALSE(b.con(0)->destroyed);
    int live_devs = 0;
    for (auto& d : k().devs) live_devs += d->live;
    EXPECT_EQ(live_devs, 1);
    // Removing a device nothing uses returns at once.
    rtrs_core_on_device_remove(reinterpret_cast<void*>(std::uintptr_t{0x9999}));
    EXPECT_TRUE(f.finish());
}

// c's path up as name, then "1" written to its disconnect file, and the
// work items run.
static bool up_then_disconnect(h::Fixture& f, h::Client& c, const std::string& name) {
    if (!f.up(c, name) || f.store(kPath, RTRS_CORE_ATTR_DISCONNECT, "1") != 0) return false;
    k().run();
    return true;
}

// The cm_ids go only after the client answered the disconnect (its DREP):
// upstream's client decides its connection is gone on our DREQ, and one
// whose device goes away before that waits 30 s in its own close.
TEST(Teardown, TheCmIdsWaitForTheClientsAnswerToTheDisconnect) {
    h::Fixture f;
    k().disconnect_answer_ms = 300;
    auto c = h::client(42, 3);
    ASSERT_TRUE(up_then_disconnect(f, c, "drep"));
    // Out of sysfs and the ULP told at once; the connections stay.
    EXPECT_EQ(f.sysfs_path(kPath), nullptr);
    EXPECT_EQ(f.link_events(RTRS_CORE_LINK_DISCONNECTED), 1);
    for (std::uint16_t i = 0; i < 3; ++i) {
        EXPECT_TRUE(c.con(i)->disconnected);
        EXPECT_FALSE(c.con(i)->destroyed) << "connection " << i;
    }
    k().advance(299);
    EXPECT_FALSE(c.con(0)->destroyed);
    k().advance(1);
    for (std::uint16_t i = 0; i < 3; ++i) {
        EXPECT_TRUE(c.con(i)->cm_ended) << "connection " << i << ": its answer came first";
        EXPECT_TRUE(c.con(i)->destroyed) << "connection " << i;
    }
    EXPECT_EQ(count_logs("did not answer the disconnect"), 0);
    EXPECT_TRUE(f.finish());
}

// A client that never answers (it is gone) holds the teardown back
// kDisconnectWaitMs, no longer, and says so once.
TEST(Teardown, AClientThatNeverAnswersTheDisconnectIsWaitedForTwoSeconds) {
    h::Fixture f;
    k().disconnect_answer_ms = -1;
    auto c = h::client(43);
    ASSERT_TRUE(up_then_disconnect(f, c, "mute"));
    EXPECT_EQ(f.sysfs_path(kPath), nullptr);
    k().advance(1999);
    EXPECT_FALSE(c.con(0)->destroyed || c.con(1)->destroyed);
    k().advance(1);
    EXPECT_TRUE(c.con(0)->destroyed && c.con(1)->destroyed);
    EXPECT_EQ(count_logs("mute: path " + std::string(kPath) +
                         ": the client did not answer the disconnect within 2000 ms"), 1);
    // The deadline's run was the last: nothing of the path is queued.
    k().advance(5000);
    EXPECT_TRUE(f.finish());
}

// The first connection's answer does not end the wait; the last one's
// does, long before the deadline.
TEST(Teardown, TheWaitEndsWithTheLastAnswer) {
    h::Fixture f;
    k().disconnect_answer_ms = -1;
    auto c = h::client(44);
    ASSERT_TRUE(up_then_disconnect(f, c, "last"));
    k().advance(100);
    k().cm_event(c.con(0), RTRS_CORE_CM_DISCONNECTED);
    k().run();
    EXPECT_FALSE(c.con(1)->destroyed) << "connection 1 has not answered";
    k().advance(100);
    k().cm_event(c.con(1), RTRS_CORE_CM_DISCONNECTED);
    k().run();
    EXPECT_TRUE(c.con(0)->destroyed && c.con(1)->destroyed) << "both answered, at 200 ms";
    EXPECT_EQ(count_logs("did not answer the disconnect"), 0);
    EXPECT_TRUE(f.finish());
}

// A device's removal returns after its clients heard the disconnect of
// every connection (the order FAILURES.md row 14 needs on one machine),
// and a connection never established is not waited for.
TEST(Teardown, DeviceRemovalReturnsAfterTheClientsAnswered) {
    h::Fixture f;
    k().disconnect_answer_ms = 40;
    auto a = h::client(45, 3);
    ASSERT_TRUE(f.up(a, "devgone"));
    rtrs_core_on_device_remove(a.ib_dev);
    for (std::uint16_t i = 0; i < 3; ++i)
        EXPECT_TRUE(a.con(i)->cm_ended && a.con(i)->destroyed) << "connection " << i;

    k().disconnect_answer_ms = -1;
    auto b = h::client(46, 3, 3, 2);
    ASSERT_EQ(f.connect(b, 0), 0);
    const std::uint64_t t0 = k().now;
    rtrs_core_on_device_remove(b.ib_dev);
    EXPECT_TRUE(b.con(0)->destroyed);
    EXPECT_LT(k().now - t0, 2000u) << "a connection never established has no disconnect to wait for";
    EXPECT_EQ(count_logs("did not answer the disconnect"), 0);
    EXPECT_TRUE(f.finish());
}

TEST(Teardown, DeviceRemovalDuringAConnect) {
    h::Fixture f;
    auto c = h::client(41, 3);
    ASSERT_EQ(f.connect(c, 0), 0);
    ASSERT_EQ(f.connect(c, 1), 0);
    rtrs_core_on_device_remove(c.ib_dev);
    EXPECT_TRUE(c.con(0)->destroyed);
    // The client's last connection comes too late: a new session starts.
    EXPECT_EQ(f.connect(c, 2, false), -6);
    EXPECT_TRUE(f.finish());
}
