// SPDX-License-Identifier: GPL-2.0
// The files of a path, end to end: names, values and modes, for IPv4 with
// two different client and server addresses (where a swap would show),
// IPv6, and two paths over two RDMA devices.
#include <gtest/gtest.h>

#include "abi_env.h"

using namespace std::chrono_literals;
using rtrsabi::Net;

namespace {

void expect_path_files(const std::string& dir, const std::string& hca, const std::string& src,
                       const std::string& dst) {
    SCOPED_TRACE(dir);
    EXPECT_EQ(rtrsabi::read_file(dir + "/hca_name").data, hca + "\n");
    EXPECT_EQ(rtrsabi::read_file(dir + "/hca_port").data, "1\n");
    EXPECT_EQ(rtrsabi::read_file(dir + "/src_addr").data, src + "\n");
    EXPECT_EQ(rtrsabi::read_file(dir + "/dst_addr").data, dst + "\n");
    EXPECT_EQ(rtrsabi::read_file(dir + "/disconnect").data, "Usage: echo 1 > disconnect\n");
    EXPECT_EQ(rtrsabi::read_file(dir + "/stats/rdma").data, "0 0 0 0 0\n");
    EXPECT_EQ(rtrsabi::mode_of(dir + "/hca_name"), 0444);
    EXPECT_EQ(rtrsabi::mode_of(dir + "/hca_port"), 0444);
    EXPECT_EQ(rtrsabi::mode_of(dir + "/src_addr"), 0444);
    EXPECT_EQ(rtrsabi::mode_of(dir + "/dst_addr"), 0444);
    EXPECT_EQ(rtrsabi::mode_of(dir + "/disconnect"), 0644);
    EXPECT_EQ(rtrsabi::mode_of(dir + "/stats/rdma"), 0644);
}

}  // namespace

TEST(PathFiles, Ipv4PathIsNamedFromTheClientSide) {
    rtrsabi::Client c(rtrsabi::connect_args("abi_v4"));
    ASSERT_TRUE(c.wait_for_line(" up", 30s)) << c.output();
    const std::string path = "ip:10.77.0.2@ip:10.77.0.1";
    EXPECT_EQ(rtrsabi::list_dir(rtrsabi::session_dir("abi_v4") + "/paths"),
              std::vector<std::string>{path});
    expect_path_files(rtrsabi::path_dir("abi_v4", path), Net::kHca, "ip:10.77.0.2", "ip:10.77.0.1");
    // The class entry is a link to a device, as for any class device.
    EXPECT_EQ(rtrsabi::read_file(rtrsabi::session_dir("abi_v4") + "/uevent").err, 0);
}

TEST(PathFiles, Ipv6PathUsesCompressedAddresses) {
    rtrsabi::Client c(rtrsabi::connect_args("abi_v6", Net::kClient6, Net::kServer6));
    ASSERT_TRUE(c.wait_for_line(" up", 30s)) << c.output();
    const std::string path = "ip:fd00::2@ip:fd00::1";
    EXPECT_EQ(rtrsabi::list_dir(rtrsabi::session_dir("abi_v6") + "/paths"),
              std::vector<std::string>{path});
    expect_path_files(rtrsabi::path_dir("abi_v6", path), Net::kHca, "ip:fd00::2", "ip:fd00::1");
}

TEST(PathFiles, TwoPathsOverTwoDevicesShareOneSession) {
    rtrsabi::Client c({"connect", "--session", "abi_two", "--server", Net::kServer, "--src",
                   Net::kClient, "--server", Net::kServer2, "--src", Net::kClient2});
    ASSERT_TRUE(rtrsabi::wait_until(
        [] { return rtrsabi::list_dir(rtrsabi::session_dir("abi_two") + "/paths").size() == 2; }, 30s))
        << c.output();
    expect_path_files(rtrsabi::path_dir("abi_two", "ip:10.77.0.2@ip:10.77.0.1"), Net::kHca,
                      "ip:10.77.0.2", "ip:10.77.0.1");
    expect_path_files(rtrsabi::path_dir("abi_two", "ip:10.78.0.2@ip:10.78.0.1"), Net::kHca2,
                      "ip:10.78.0.2", "ip:10.78.0.1");
}

TEST(PathFiles, SessionGoesWithItsClient) {
    {
        rtrsabi::Client c(rtrsabi::connect_args("abi_gone"));
        ASSERT_TRUE(c.wait_for_line(" up", 30s)) << c.output();
        ASSERT_TRUE(rtrsabi::exists(rtrsabi::session_dir("abi_gone")));
    }  // the client disconnects cleanly
    EXPECT_TRUE(rtrsabi::wait_until([] { return !rtrsabi::exists(rtrsabi::session_dir("abi_gone")); }, 15s));
}
