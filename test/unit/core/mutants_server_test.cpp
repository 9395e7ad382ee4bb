// SPDX-License-Identifier: GPL-2.0
// Connection requests (core/server.cpp) and how their failures end: rules
// no test checked until the mutation campaign (tools/mutants, doc/testing.md
// "Mutation testing") changed them and every test still passed.
#include <gtest/gtest.h>

#include <cstring>

#include "core/module.h"
#include "fake_env.h"
#include "harness.h"

using fake::k;
using h::count_logs;
using h::downs;

namespace {

bool has_violation(const std::string& needle) {
    for (auto& v : k().violations)
        if (v.find(needle) != std::string::npos) return true;
    return false;
}

// The reason of the last refusal (its trace event).
std::string last_refusal() {
    auto r = k().traces_named("conn_refused");
    return r.empty() ? "" : r.back().why;
}

}  // namespace

// A connection of a path that cannot be made after another of the path
// was: the request is refused and the path closes at once ("setup
// failed"), rather than when its handshake's 30 s deadline comes.
TEST(MutantsServer, APathWhoseSecondConnectionFailsClosesAtOnce) {
    h::Fixture f;
    auto c = h::client(150, 2);
    ASSERT_EQ(f.connect(c, 0), 0);
    k().on_point = [](const char* what) {
        if (std::strcmp(what, "con_create") == 0) k().fail_at = k().failure_points;
    };
    EXPECT_NE(f.connect(c, 1), 0);
    k().on_point = nullptr;
    EXPECT_TRUE(c.cms[1]->rejected);
    k().run();
    EXPECT_EQ(downs("setup failed"), 1);
    EXPECT_TRUE(c.con(0)->disconnected) << "the first connection is ended with its path";
    EXPECT_TRUE(f.finish());
}

// A connection whose accept fails (the CM cannot send our answer) is the
// path's to end, as it holds the cm_id by then: the path closes at once
// ("setup failed") and the client's other connection is ended with it.
TEST(MutantsServer, AConnectionThatCannotBeAcceptedClosesItsPath) {
    h::Fixture f;
    auto c = h::client(154, 2);
    ASSERT_EQ(f.connect(c, 0), 0);
    k().on_point = [](const char* what) {
        if (std::strcmp(what, "cm_accept") == 0) k().fail_at = k().failure_points;
    };
    f.connect(c, 1);
    k().on_point = nullptr;
    EXPECT_FALSE(c.cms[1]->accepted);
    EXPECT_EQ(count_logs(": cannot accept connection 1: -22"), 1);
    k().run();
    EXPECT_EQ(downs("setup failed"), 1);
    EXPECT_TRUE(c.con(0)->disconnected);
    EXPECT_TRUE(f.finish());
}

// A path whose setup fails while its device is being removed may hold the
// device's last reference: the removal is woken once the server lock is
// let go, never under it.
TEST(MutantsServer, ASetupFailingDuringADeviceRemovalWakesItWithNoLockHeld) {
    h::Fixture f;
    auto c = h::client(151, 2);
    rtrs_env_waiter* removal = nullptr;
    k().on_point = [&](const char* what) {
        if (removal || std::strcmp(what, "mr_alloc") != 0) return;
        removal = core::module()->begin_device_removal(c.ib_dev);
        k().fail_at = k().failure_points;  // and the setup fails here
    };
    EXPECT_NE(f.connect(c, 0), 0);
    k().on_point = nullptr;
    ASSERT_NE(removal, nullptr) << "the removal began during the setup";
    core::module()->await_device_removal(removal);
    EXPECT_FALSE(has_violation("a waiter woken with a lock held")) << h::problems();
    EXPECT_TRUE(f.finish());
}

// A removal that begins while a new path of its device is being set up
// (after the device was taken) refuses the path as one that came after it:
// EBUSY, "the device is going away", and the log line names the addresses
// (row 28's guest check counts it as a path of the device met by the
// removal).
TEST(MutantsServer, ARemovalDuringASetupRefusesThePathByItsAddresses) {
    h::Fixture f;
    auto c = h::client(159, 2, 5);
    rtrs_env_waiter* removal = nullptr;
    k().on_point = [&](const char* what) {
        if (removal || std::strcmp(what, "mr_alloc") != 0) return;
        removal = core::module()->begin_device_removal(c.ib_dev);
    };
    EXPECT_NE(f.connect(c, 0), 0);
    k().on_point = nullptr;
    ASSERT_NE(removal, nullptr) << "the removal began during the setup";
    EXPECT_EQ(c.cms[0]->reject_errno, 16);
    EXPECT_EQ(last_refusal(), "the device is going away");
    EXPECT_EQ(count_logs("connection request refused: the device is going away "
                         "(ip:10.77.0.5@ip:10.77.0.1)"),
              1);
    core::module()->await_device_removal(removal);
    EXPECT_TRUE(f.finish());
}

// The same when a new path is given up because its first connection
// cannot be made, and a removal of its device begins as it is given up
// (after it left the Connecting state, so the removal does not close it):
// the device's last reference goes after the server lock.
TEST(MutantsServer, AGivenUpPathDuringADeviceRemovalWakesItWithNoLockHeld) {
    h::Fixture f;
    auto c = h::client(153, 2);
    rtrs_env_waiter* removal = nullptr;
    bool failed_con = false;
    k().on_point = [&](const char* what) {
        if (failed_con || std::strcmp(what, "con_create") != 0) return;
        failed_con = true;
        k().fail_at = k().failure_points;  // the first connection's QP cannot be made
    };
    k().on_release = [&](fake::Lock* l) {
        // The first io lock let go after the failure with only the server
        // lock held: the path's abandon().
        if (!failed_con || removal || l->kind != RTRS_ENV_LOCK_PATH_IO) return;
        if (k().held.size() != 1 || k().held[0]->kind != RTRS_ENV_LOCK_SERVER) return;
        removal = core::module()->begin_device_removal(c.ib_dev);
    };
    EXPECT_NE(f.connect(c, 0), 0);
    k().on_point = nullptr;
    k().on_release = nullptr;
    ASSERT_NE(removal, nullptr) << "the removal began as the path was given up";
    core::module()->await_device_removal(removal);
    EXPECT_FALSE(has_violation("a waiter woken with a lock held")) << h::problems();
    EXPECT_TRUE(f.finish());
}

// A request for a path that exists is refused, and the reason says why:
// the path is up, or it is closing.
TEST(MutantsServer, ARequestForAnExistingPathIsRefusedWithItsState) {
    h::Fixture f;
    auto c = h::client(152, 2);
    ASSERT_TRUE(f.up(c, "taken"));
    auto again = c;
    EXPECT_NE(f.connect(again, 1), 0);
    EXPECT_EQ(last_refusal(), "the path is already established");
    // A client that never answers the disconnect keeps the path closing.
    k().disconnect_answer_ms = -1;
    ASSERT_EQ(f.store("ip:10.77.0.2@ip:10.77.0.1", RTRS_CORE_ATTR_DISCONNECT, "1"), 0);
    k().run();
    auto late = c;
    EXPECT_NE(f.connect(late, 1), 0);
    EXPECT_EQ(last_refusal(), "the path is closing");
    k().advance(3000);
    EXPECT_TRUE(f.finish());
}

// A request on a device that is being removed is refused as such (EBUSY,
// "the device is going away"); one whose device cannot be opened, as that.
TEST(MutantsServer, ARefusalForTheDeviceSaysWhy) {
    h::Fixture f;
    auto a = h::client(155, 2);
    ASSERT_TRUE(f.up(a, "on-dev"));
    rtrs_env_waiter* removal = core::module()->begin_device_removal(a.ib_dev);
    ASSERT_NE(removal, nullptr);
    auto b = h::client(156, 2, 3);  // same device
    EXPECT_NE(f.connect(b, 0), 0);
    EXPECT_EQ(b.cms[0]->reject_errno, 16);
    EXPECT_EQ(last_refusal(), "the device is going away");
    // The log line names the addresses (row 28's guest check counts it as
    // a request of that path during the removal).
    bool named = false;
    for (auto& l : fake_env::state().logs)
        named |= l.second.find("connection request refused: the device is going away "
                               "(ip:10.77.0.3@ip:10.77.0.1)") != std::string::npos;
    EXPECT_TRUE(named);
    core::module()->await_device_removal(removal);
    auto c = h::client(157, 2, 4, 2);  // another device, which cannot be opened
    k().on_point = [](const char* what) {
        if (std::strcmp(what, "dev_open") == 0) k().fail_at = k().failure_points;
    };
    EXPECT_NE(f.connect(c, 0), 0);
    k().on_point = nullptr;
    EXPECT_EQ(last_refusal(), "cannot use the device");
    EXPECT_TRUE(f.finish());
}

// A connection whose charge the machine's available memory refuses
// leaves the memory budget as it found it.
TEST(MutantsServer, AConnectionRefusedForMemoryLeavesTheBudgetAsItWas) {
    h::Fixture f;
    auto c = h::client(158, 2);
    ASSERT_EQ(f.connect(c, 0), 0);
    const std::uint64_t used = core::module()->chunk_mem_used();
    k().available_ram = k().total_ram / 8;  // the headroom alone
    EXPECT_NE(f.connect(c, 1), 0);
    EXPECT_EQ(c.cms[1]->reject_errno, 12);
    EXPECT_EQ(core::module()->chunk_mem_used(), used);
    EXPECT_TRUE(f.finish());
}

// A session is made when the machine's available memory covers its chunks
// and the headroom (an eighth of the memory) exactly; a byte less, not.
TEST(MutantsServer, ASessionFitsWhenAvailableMemoryCoversItExactly) {
    h::Opts o;
    o.queue_depth = 64;  // 1 MiB of chunks: more than a connection costs
    for (std::uint64_t less : {0ull, 1ull}) {
        SCOPED_TRACE(less);
        h::Fixture f(o);
        k().available_ram = k().total_ram / 8 + 64ull * 16384 - less;
        auto c = h::client(159, 2);
        const int ret = f.connect(c, 0);
        if (less) {
            EXPECT_NE(ret, 0);
            EXPECT_EQ(count_logs("MiB (an eighth of its memory) free of chunks"), 1);
        } else {
            EXPECT_EQ(ret, 0);
        }
        EXPECT_TRUE(f.finish());
    }
}
