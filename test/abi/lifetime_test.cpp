// SPDX-License-Identifier: GPL-2.0
// Paths that end without a word from the client, heartbeats, and uevents.
#include <gtest/gtest.h>

#include <linux/netlink.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <unistd.h>

#include <poll.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "abi_env.h"

using namespace std::chrono_literals;
using rtrsabi::Net;

namespace {
const std::string kPath = "ip:10.77.0.2@ip:10.77.0.1";
}

// Two clients at once, so that the heartbeat periods pass only once: one
// that stays quiet but answers heartbeats (it must stay), and one that
// neither sends nor answers them (it must be dropped after > 5 periods).
TEST(Lifetime, HeartbeatsKeepAQuietSessionUpAndDropAVanishedOne) {
    rtrsabi::Client quiet(rtrsabi::connect_args("abi_hb"));
    ASSERT_TRUE(quiet.wait_for_line(" up", 30s)) << quiet.output();
    auto quiet_up = std::chrono::steady_clock::now();
    rtrsabi::clear_kernel_log();
    rtrsabi::Client gone([] {
        auto a = rtrsabi::connect_args("abi_vanish");
        a.push_back("--no-heartbeat");
        return a;
    }());
    ASSERT_TRUE(gone.wait_for_line(" up", 30s)) << gone.output();
    auto gone_up = std::chrono::steady_clock::now();
    // No heartbeat, no answer to ours: the server gives up when more than
    // five periods of 5 s went by without a word (FAILURES.md row 17): 35 s,
    // as upstream (36 s measured on 6.1). Not before 30 s: a server that
    // counted one missed heartbeat dropped it after 15 s (seen, with
    // kHbMissedMax 1); and not after 60 s.
    EXPECT_TRUE(rtrsabi::wait_until([] { return !rtrsabi::exists(rtrsabi::session_dir("abi_vanish")); }, 60s));
    auto dropped_after = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - gone_up);
    EXPECT_GE(dropped_after, 30s) << "dropped " << dropped_after.count() << " s after it came up";
    EXPECT_EQ(rtrsabi::count_lines_with(rtrsabi::kernel_log(), "no heartbeat from the client"), 1)
        << rtrsabi::kernel_log();
    // The quiet one stays the whole time, well past five periods: looked at
    // every half second until 40 s after it came up, failing at the first
    // look that finds it gone.
    bool stayed = true;
    while (stayed && std::chrono::steady_clock::now() < quiet_up + 40s) {
        stayed = rtrsabi::exists(rtrsabi::path_dir("abi_hb", kPath));
        std::this_thread::sleep_for(500ms);
    }
    EXPECT_TRUE(stayed && rtrsabi::exists(rtrsabi::path_dir("abi_hb", kPath)))
        << "the path of the quiet client that answers heartbeats went away";
}

TEST(Lifetime, KilledClientPathGoes) {
    rtrsabi::Client c(rtrsabi::connect_args("abi_kill"));
    ASSERT_TRUE(c.wait_for_line(" up", 30s)) << c.output();
    c.kill_hard();
    // The kernel closes a dead process's RDMA CM ids, which disconnects.
    EXPECT_TRUE(rtrsabi::wait_until([] { return !rtrsabi::exists(rtrsabi::session_dir("abi_kill")); }, 60s));
}

// uevents of the session device, as udev would see them.
TEST(Lifetime, SessionDeviceSendsAddAndRemoveUevents) {
    int sock = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
    ASSERT_GE(sock, 0);
    sockaddr_nl addr{};
    addr.nl_family = AF_NETLINK;
    addr.nl_groups = 1;
    ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    {
        rtrsabi::Client c(rtrsabi::connect_args("abi_uev"));
        ASSERT_TRUE(c.wait_for_line(" up", 30s)) << c.output();
        ASSERT_EQ(rtrsabi::write_file(rtrsabi::path_dir("abi_uev", kPath) + "/disconnect", "1"), 0);
        ASSERT_TRUE(rtrsabi::wait_until([] { return !rtrsabi::exists(rtrsabi::session_dir("abi_uev")); }, 15s));
    }
    std::string events;
    char buf[8192];
    pollfd p{sock, POLLIN, 0};
    while (::poll(&p, 1, 1000) > 0) {
        ssize_t n = ::recv(sock, buf, sizeof(buf), 0);
        if (n <= 0) break;
        events.append(buf, strnlen(buf, static_cast<size_t>(n)));  // the header line
        events += "\n";
    }
    ::close(sock);
    EXPECT_EQ(rtrsabi::count_lines_with(events, "add@/devices/virtual/rtrs-server/abi_uev\n"), 1)
        << events;
    EXPECT_EQ(rtrsabi::count_lines_with(events, "remove@/devices/virtual/rtrs-server/abi_uev\n"), 1)
        << events;
}

// The files of a path stay open across its teardown: the path goes, the
// open files answer ENODEV, and closing them later frees what is left (the
// debug kernel delays each kobject's release by seconds, so anything that
// frees a kobject's memory before its release shows up there).
TEST(Lifetime, FilesHeldOpenAcrossTheTeardown) {
    rtrsabi::Client c(rtrsabi::connect_args("abi_held"));
    ASSERT_TRUE(c.wait_for_line(" up", 30s)) << c.output();
    const std::string dir = rtrsabi::path_dir("abi_held", kPath);
    int stats = ::open((dir + "/stats/rdma").c_str(), O_RDWR | O_CLOEXEC);
    int disc = ::open((dir + "/disconnect").c_str(), O_RDWR | O_CLOEXEC);
    int src = ::open((dir + "/src_addr").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(stats, 0);
    ASSERT_GE(disc, 0);
    ASSERT_GE(src, 0);
    char buf[128];
    EXPECT_GT(::pread(stats, buf, sizeof(buf), 0), 0);
    EXPECT_EQ(::pwrite(disc, "1", 1, 0), 1);
    EXPECT_TRUE(rtrsabi::wait_until([] { return !rtrsabi::exists(rtrsabi::session_dir("abi_held")); }, 15s));
    errno = 0;
    EXPECT_EQ(::pread(stats, buf, sizeof(buf), 0), -1);
    EXPECT_EQ(errno, ENODEV);
    errno = 0;
    EXPECT_EQ(::pwrite(stats, "1", 1, 0), -1);
    EXPECT_EQ(errno, ENODEV);
    errno = 0;
    EXPECT_EQ(::pread(src, buf, sizeof(buf), 0), -1);
    EXPECT_EQ(errno, ENODEV);
    // Past the longest delayed release of the debug kernel (4 s).
    std::this_thread::sleep_for(5s);
    ::close(stats);
    ::close(disc);
    ::close(src);
}
