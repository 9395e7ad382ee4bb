// SPDX-License-Identifier: GPL-2.0
// The load-time checks of the module parameters. Expected outcomes are the
// upstream server's rules, worked out by hand here (not read back from the
// code): depth 1..65535; chunk a power of two >= 8192; chunk id bits plus
// offset bits <= 28.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/rtrs_core.h"

namespace {

struct Outcome {
    int rc;
    std::string msg;
};

Outcome check(int chunk, int depth) {
    char msg[160];
    std::memset(msg, 'Z', sizeof(msg));
    int rc = rtrs_core_check_params(chunk, depth, msg, sizeof(msg));
    return {rc, msg};
}

}  // namespace

TEST(Params, UpstreamDefaultsAreAccepted) {
    auto o = check(131072, 512);
    EXPECT_EQ(o.rc, 0);
}

TEST(Params, Boundaries) {
    EXPECT_EQ(check(8192, 1).rc, 0);
    EXPECT_EQ(check(8192, 32768).rc, 0);     // 15 + 13 = 28
    EXPECT_EQ(check(1 << 27, 2).rc, 0);      // 1 + 27 = 28
    EXPECT_EQ(check(1 << 28, 1).rc, 0);      // 0 + 28 = 28
}

TEST(Params, QueueDepthOutOfRange) {
    for (int d : {0, -1, 65536, 1 << 30}) {
        auto o = check(131072, d);
        EXPECT_EQ(o.rc, -EINVAL) << d;
        EXPECT_NE(o.msg.find("sess_queue_depth " + std::to_string(d)), std::string::npos) << o.msg;
    }
}

TEST(Params, ChunkSizeRules) {
    for (int c : {0, -8192, 4096, 8191, 12288, 131071, 131073}) {
        auto o = check(c, 512);
        EXPECT_EQ(o.rc, -EINVAL) << c;
        EXPECT_NE(o.msg.find("max_chunk_size " + std::to_string(c)), std::string::npos) << o.msg;
        EXPECT_NE(o.msg.find("power of two"), std::string::npos) << o.msg;
    }
}

TEST(Params, ImmediateDataBudget) {
    // 65535 chunks need 16 bits; 8 KiB offsets need 13: 29 > 28.
    auto o = check(8192, 65535);
    EXPECT_EQ(o.rc, -EINVAL);
    EXPECT_NE(o.msg.find("29 bits"), std::string::npos) << o.msg;
    auto big = check(1 << 20, 1024);  // 10 + 20 = 30 bits
    EXPECT_EQ(big.rc, -EINVAL);
    EXPECT_NE(big.msg.find("30 bits"), std::string::npos) << big.msg;
    EXPECT_EQ(check(1 << 28, 2).rc, -EINVAL);  // 1 + 28 = 29
    EXPECT_EQ(check(1 << 17, 2048).rc, 0);     // 11 + 17 = 28
    EXPECT_EQ(check(1 << 17, 2049).rc, -EINVAL);
}

TEST(Params, MessageFitsTinyBuffers) {
    char msg[8];
    std::memset(msg, 'Z', sizeof(msg));
    EXPECT_EQ(rtrs_core_check_params(100, 512, msg, 5), -EINVAL);
    EXPECT_EQ(std::strlen(msg), 4u);
    EXPECT_EQ(msg[5], 'Z');
}
