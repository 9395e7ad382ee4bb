// SPDX-License-Identifier: GPL-2.0
// Writing the disconnect and stats/rdma files.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "abi_env.h"

using namespace std::chrono_literals;
using rtrsabi::Net;

namespace {
const std::string kPath = "ip:10.77.0.2@ip:10.77.0.1";
const std::string kPath2 = "ip:10.78.0.2@ip:10.78.0.1";
}  // namespace

TEST(Disconnect, BadValuesAreEinvalAndChangeNothing) {
    rtrsabi::Client c(rtrsabi::connect_args("abi_dbad"));
    ASSERT_TRUE(c.wait_for_line(" up", 30s)) << c.output();
    const std::string file = rtrsabi::path_dir("abi_dbad", kPath) + "/disconnect";
    rtrsabi::clear_kernel_log();
    // (A zero-length write never reaches a sysfs store, so "" is no case.)
    for (const char* bad : {"0", "2", "yes", "11", "1 1", "\n", "1\n\n"}) {
        EXPECT_EQ(rtrsabi::write_file(file, bad), EINVAL) << "'" << bad << "'";
    }
    // Nothing started: no close in the kernel log, and the path is there at
    // every look for 2 s (a close would take it away well within that).
    bool stayed = true;
    auto until = std::chrono::steady_clock::now() + 2s;
    while (stayed && std::chrono::steady_clock::now() < until) {
        stayed = rtrsabi::exists(rtrsabi::path_dir("abi_dbad", kPath));
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_TRUE(stayed);
    EXPECT_EQ(rtrsabi::count_lines_with(rtrsabi::kernel_log(), "closing path"), 0) << rtrsabi::kernel_log();
}

TEST(Disconnect, OneRemovesThePathAndTheSessionWithItsLastPath) {
    rtrsabi::Client c({"connect", "--session", "abi_disc", "--server", Net::kServer, "--src",
                   Net::kClient, "--server", Net::kServer2, "--src", Net::kClient2});
    ASSERT_TRUE(rtrsabi::wait_until(
        [] { return rtrsabi::list_dir(rtrsabi::session_dir("abi_disc") + "/paths").size() == 2; }, 30s))
        << c.output();

    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(rtrsabi::write_file(rtrsabi::path_dir("abi_disc", kPath) + "/disconnect", "1"), 0);
    // The write only starts the teardown: it returns at once.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
    EXPECT_TRUE(rtrsabi::wait_until([] { return !rtrsabi::exists(rtrsabi::path_dir("abi_disc", kPath)); }, 10s));
    EXPECT_TRUE(rtrsabi::exists(rtrsabi::path_dir("abi_disc", kPath2)))
        << "the other path of the session must stay";

    EXPECT_EQ(rtrsabi::write_file(rtrsabi::path_dir("abi_disc", kPath2) + "/disconnect", "1\n"), 0);
    EXPECT_TRUE(rtrsabi::wait_until([] { return !rtrsabi::exists(rtrsabi::session_dir("abi_disc")); }, 10s))
        << "the session folder goes with its last path";
}

TEST(Disconnect, ConcurrentWritersAreFine) {
    rtrsabi::Client c(rtrsabi::connect_args("abi_dconc"));
    ASSERT_TRUE(c.wait_for_line(" up", 30s)) << c.output();
    const std::string file = rtrsabi::path_dir("abi_dconc", kPath) + "/disconnect";
    std::atomic<int> ok{0}, gone{0}, other{0};
    std::vector<std::thread> writers;
    for (int i = 0; i < 4; ++i)
        writers.emplace_back([&] {
            int err = rtrsabi::write_file(file, "1");
            if (err == 0)
                ++ok;
            else if (err == ENOENT || err == ENODEV)
                ++gone;  // the file went away under a later writer: fine
            else
                ++other;
        });
    for (auto& t : writers) t.join();
    EXPECT_GE(ok.load(), 1);
    EXPECT_EQ(other.load(), 0);
    EXPECT_TRUE(rtrsabi::wait_until([] { return !rtrsabi::exists(rtrsabi::session_dir("abi_dconc")); }, 10s));
}

TEST(Stats, OneResetsOtherValuesAreEinval) {
    rtrsabi::Client c(rtrsabi::connect_args("abi_stats"));
    ASSERT_TRUE(c.wait_for_line(" up", 30s)) << c.output();
    const std::string file = rtrsabi::path_dir("abi_stats", kPath) + "/stats/rdma";
    EXPECT_EQ(rtrsabi::write_file(file, "1"), 0);
    EXPECT_EQ(rtrsabi::write_file(file, "1\n"), 0);
    for (const char* bad : {"0", "0\n", "2", "reset", "\n"}) {
        EXPECT_EQ(rtrsabi::write_file(file, bad), EINVAL) << "'" << bad << "'";
    }
    EXPECT_EQ(rtrsabi::read_file(file).data, "0 0 0 0 0\n");
}
