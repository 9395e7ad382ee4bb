// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <cstring>

#include "rt/strbuf.h"

TEST(StrBuf, FormatsNumbersAndText) {
    char buf[64];
    rt::StrBuf b(buf, sizeof(buf));
    b.put("n=").dec(static_cast<rt::u64>(0)).put(' ').dec(-42).put(' ').dec(static_cast<rt::u32>(7));
    b.put(" x=").hex(0xbeef).put(' ').hex(0xa, 4);
    EXPECT_STREQ(b.c_str(), "n=0 -42 7 x=beef 000a");
    EXPECT_FALSE(b.truncated());
    EXPECT_EQ(b.len(), std::strlen(buf));
}

TEST(StrBuf, Extremes) {
    char buf[64];
    rt::StrBuf b(buf, sizeof(buf));
    b.dec(static_cast<rt::i64>(INT64_MIN)).put(' ').dec(static_cast<rt::u64>(UINT64_MAX));
    EXPECT_STREQ(b.c_str(), "-9223372036854775808 18446744073709551615");
}

TEST(StrBuf, TruncatesAndTerminates) {
    char buf[6];
    std::memset(buf, 'Z', sizeof(buf));
    rt::StrBuf b(buf, 5);  // room for 4 characters and the NUL
    b.put("abcdef");
    EXPECT_STREQ(b.c_str(), "abcd");
    EXPECT_TRUE(b.truncated());
    EXPECT_EQ(buf[5], 'Z') << "wrote past its capacity";
    EXPECT_EQ(b.len(), 4u);
    b.dec(rt::u64{1234});
    EXPECT_EQ(b.wanted(), 10u) << "the length it would have had";
}

TEST(StrBuf, ZeroCapacityWritesNothing) {
    char buf[1] = {'Z'};
    rt::StrBuf b(buf, 0);
    b.put("x");
    EXPECT_EQ(buf[0], 'Z');
    EXPECT_TRUE(b.truncated());
    EXPECT_STREQ(b.c_str(), "");
}
