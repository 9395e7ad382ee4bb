// SPDX-License-Identifier: GPL-2.0
// Paths that end without a word from the client, heartbeats, and uevents.
#include <gtest/gtest.h>

#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <poll.h>

#include <cstring>
#include <thread>

#include "abi_env.h"

using namespace std::chrono_literals;
using rtrsabi::Net;

namespace {
const std::string kPath = "ip:10.77.0.2@ip:10.77.0.1";
}

TEST(Lifetime, HeartbeatsKeepAQuietSessionUp) {
    rtrsabi::Client c(rtrsabi::connect_args("abi_hb"));
    ASSERT_TRUE(c.wait_for_line(" up", 30s)) << c.output();
    // Well past the server's five missed heartbeats of 5 s each.
    std::this_thread::sleep_for(40s);
    EXPECT_TRUE(rtrsabi::exists(rtrsabi::path_dir("abi_hb", kPath)));
}

TEST(Lifetime, ClientThatVanishesIsDroppedAfterTheHeartbeatTimeout) {
    rtrsabi::Client c([] {
        auto a = rtrsabi::connect_args("abi_vanish");
        a.push_back("--no-heartbeat");
        return a;
    }());
    ASSERT_TRUE(c.wait_for_line(" up", 30s)) << c.output();
    rtrsabi::clear_kernel_log();
    // No heartbeat, no answer to ours: the server gives up after > 5 periods.
    EXPECT_TRUE(rtrsabi::wait_until([] { return !rtrsabi::exists(rtrsabi::session_dir("abi_vanish")); }, 60s));
    EXPECT_EQ(rtrsabi::count_lines_with(rtrsabi::kernel_log(), "no heartbeat from the client"), 1)
        << rtrsabi::kernel_log();
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
