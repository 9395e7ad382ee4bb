// SPDX-License-Identifier: GPL-2.0
// Hostile input from the network: each malformed request is refused (a CM
// reject carrying an errno, or the path torn down), logged once and not
// repeated, and leaves nothing behind. The expected outcome of each case is
// what the upstream 6.1 server does with it.
#include <gtest/gtest.h>

#include "abi_env.h"

using namespace std::chrono_literals;
using rtrsabi::Net;

namespace {

struct Case {
    const char* name;
    const char* result;      // the client's verdict line
    const char* log_needle;  // what our kernel log says about it, once
};

// ECONNRESET is -104, ENXIO -6.
const Case kCases[] = {
    // RDMA CM over RoCE pads private data to 56 bytes with zeros, so 8 bytes
    // arrive as a request with cid_num 0.
    {"short-private-data", "result: rejected errno=-104", "cid not below cid_num"},
    {"bad-magic", "result: rejected errno=-104", "wrong magic"},
    {"bad-major", "result: rejected errno=-104", "unsupported major version"},
    {"cid-ge-cid-num", "result: rejected errno=-104", "cid not below cid_num"},
    {"cid-num-zero", "result: rejected errno=-104", "cid not below cid_num"},
    {"cid-num-too-big", "result: rejected errno=-104", "too many connections"},
    {"not-first-conn", "result: rejected errno=-6", "not the first connection"},
    {"info-empty-name", "result: closed", "empty session name"},
    {"info-unterminated-name", "result: closed", "session name not terminated"},
    {"info-slash-name", "result: closed", "contains '/' or '.'"},
    {"info-dot-name", "result: closed", "contains '/' or '.'"},
    {"info-wrong-type", "result: closed", "not an info request"},
    {"info-before-all-cons", "result: closed", "info request before connection"},
    {"unknown-imm", "result: closed", "unknown immediate type"},
};

class Hostile : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(Hostile, RefusedLoggedOnceNothingLeft) {
    const Case& c = GetParam();
    rtrsabi::clear_kernel_log();
    auto r = rtrsabi::run_client({"bad", c.name, "--server", Net::kServer, "--src", Net::kClient,
                              "--session", std::string("abi_bad_") + c.name},
                             60s);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find(c.result), std::string::npos) << r.output;
    EXPECT_TRUE(rtrsabi::wait_until([] { return rtrsabi::list_dir(rtrsabi::kClassDir).empty(); }, 15s))
        << "a refused client leaves no session behind";
    std::string log = rtrsabi::kernel_log();
    EXPECT_EQ(rtrsabi::count_lines_with(log, c.log_needle), 1) << log;
}

INSTANTIATE_TEST_SUITE_P(AllCases, Hostile, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                             std::string n = info.param.name;
                             for (char& ch : n)
                                 if (ch == '-') ch = '_';
                             return n;
                         });

TEST(HostileName, TakenByAnotherSessionIsRefused) {
    rtrsabi::clear_kernel_log();
    auto r = rtrsabi::run_client({"bad", "name-taken", "--server", Net::kServer, "--src",
                              Net::kClient, "--session", "abi_taken"},
                             60s);
    EXPECT_EQ(r.status, 0) << r.output;
    // The second session is closed and the first one stays up: a server
    // that closed both would print "first=closed".
    EXPECT_NE(r.output.find("result: closed first=up"), std::string::npos) << r.output;
    EXPECT_EQ(rtrsabi::count_lines_with(rtrsabi::kernel_log(), "is taken by another session"), 1);
    EXPECT_TRUE(rtrsabi::wait_until([] { return rtrsabi::list_dir(rtrsabi::kClassDir).empty(); }, 15s));
}

TEST(HostileMinor, AnotherMinorVersionIsAccepted) {
    auto r = rtrsabi::run_client({"bad", "other-minor", "--server", Net::kServer, "--src",
                              Net::kClient, "--session", "abi_minor"},
                             60s);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("result: accepted"), std::string::npos) << r.output;
}
