// SPDX-License-Identifier: GPL-2.0
// Unloading rtrs-null and rtrs-server while clients are connected: the
// sessions are torn down, the clients are told, and nothing is left behind.
// guest-run.sh runs this suite last, on its own, since it unloads.
#include <gtest/gtest.h>

#include <cstdlib>

#include "abi_env.h"

using namespace std::chrono_literals;
using rtrsabi::Net;

TEST(Unload, WithLiveSessionsLeavesNothingBehind) {
    rtrsabi::Client one(rtrsabi::connect_args("abi_unload1"));
    rtrsabi::Client two({"connect", "--session", "abi_unload2", "--server", Net::kServer, "--src",
                     Net::kClient, "--server", Net::kServer2, "--src", Net::kClient2});
    ASSERT_TRUE(one.wait_for_line(" up", 30s)) << one.output();
    ASSERT_TRUE(rtrsabi::wait_until(
        [] { return rtrsabi::list_dir(rtrsabi::session_dir("abi_unload2") + "/paths").size() == 2; },
        30s))
        << two.output();

    ASSERT_EQ(std::system("rmmod rtrs_null"), 0);
    EXPECT_TRUE(rtrsabi::list_dir(rtrsabi::kClassDir).empty()) << "rtrs_srv_close waits for the teardown";
    ASSERT_EQ(std::system("rmmod rtrs_server"), 0);
    EXPECT_FALSE(rtrsabi::exists(rtrsabi::kClassDir));
    EXPECT_FALSE(rtrsabi::exists("/sys/module/rtrs_server"));
    // The clients are told: they end with status 3 (the server closed a path).
    EXPECT_EQ(one.wait_exit(30s), 3) << one.output();
    EXPECT_EQ(two.wait_exit(30s), 3) << two.output();
}
