// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include <cstdint>

#include "rt/span.h"
#include "rt/utility.h"

TEST(Span, SubInsideBounds) {
    rt::u8 data[16] = {};
    rt::MutBytes all(data);
    EXPECT_EQ(all.size(), 16u);
    rt::MutBytes part;
    ASSERT_TRUE(all.sub(4, 8, &part));
    EXPECT_EQ(part.data(), data + 4);
    EXPECT_EQ(part.size(), 8u);
    ASSERT_TRUE(all.sub(16, 0, &part));
    EXPECT_TRUE(part.empty());
    ASSERT_TRUE(all.sub(10, &part));
    EXPECT_EQ(part.size(), 6u);
}

TEST(Span, SubOutsideBoundsIsRefused) {
    rt::u8 data[16] = {};
    rt::MutBytes all(data);
    rt::MutBytes part(data, 3);
    EXPECT_FALSE(all.sub(17, 0, &part));
    EXPECT_FALSE(all.sub(8, 9, &part));
    EXPECT_FALSE(all.sub(1, SIZE_MAX, &part)) << "offset + count overflow must not wrap";
    EXPECT_FALSE(all.sub(SIZE_MAX, 2, &part));
    EXPECT_FALSE(all.sub(17, &part));
    EXPECT_EQ(part.size(), 3u) << "a refused sub() leaves the output alone";
}

TEST(Utility, BitsFor) {
    EXPECT_EQ(rt::bits_for(0), 0u);
    EXPECT_EQ(rt::bits_for(1), 0u);
    EXPECT_EQ(rt::bits_for(2), 1u);
    EXPECT_EQ(rt::bits_for(3), 2u);
    EXPECT_EQ(rt::bits_for(4), 2u);
    EXPECT_EQ(rt::bits_for(5), 3u);
    EXPECT_EQ(rt::bits_for(512), 9u);
    EXPECT_EQ(rt::bits_for(513), 10u);
    EXPECT_EQ(rt::bits_for(65535), 16u);
    EXPECT_EQ(rt::bits_for(131072), 17u);
    EXPECT_EQ(rt::bits_for(UINT64_MAX), 64u);
}

TEST(Utility, PowerOfTwo) {
    EXPECT_FALSE(rt::is_power_of_two(0));
    EXPECT_TRUE(rt::is_power_of_two(1));
    EXPECT_TRUE(rt::is_power_of_two(8192));
    EXPECT_FALSE(rt::is_power_of_two(8193));
    EXPECT_TRUE(rt::is_power_of_two(1ull << 63));
}
