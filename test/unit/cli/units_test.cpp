// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include "units.h"

using namespace rtrs_srv;

TEST(CliUnits, BytesBelowOneKibAreExact) {
    EXPECT_EQ(units::bytes(0), "0 B");
    EXPECT_EQ(units::bytes(1), "1 B");
    EXPECT_EQ(units::bytes(1023), "1023 B");
}

TEST(CliUnits, BytesBoundaries) {
    EXPECT_EQ(units::bytes(1024), "1.0 KiB");
    EXPECT_EQ(units::bytes(1075), "1.0 KiB");   // 1.0498
    EXPECT_EQ(units::bytes(1076), "1.1 KiB");   // 1.0508: rounds half up
    EXPECT_EQ(units::bytes(49152), "48.0 KiB");
    EXPECT_EQ(units::bytes(1048524), "1023.9 KiB");
    EXPECT_EQ(units::bytes(1048525), "1.0 MiB");  // would be "1024.0 KiB"
    EXPECT_EQ(units::bytes(1048575), "1.0 MiB");
    EXPECT_EQ(units::bytes(1048576), "1.0 MiB");
    EXPECT_EQ(units::bytes(1572864), "1.5 MiB");
    EXPECT_EQ(units::bytes(1073741824ull), "1.0 GiB");
    EXPECT_EQ(units::bytes(4294967296ull), "4.0 GiB");
    EXPECT_EQ(units::bytes(1ull << 40), "1.0 TiB");
    EXPECT_EQ(units::bytes(1ull << 50), "1.0 PiB");
    EXPECT_EQ(units::bytes(1ull << 60), "1.0 EiB");
    EXPECT_EQ(units::bytes(UINT64_MAX), "16.0 EiB");
}

TEST(CliUnits, Rates) {
    EXPECT_EQ(units::byte_rate(0), "0 B/s");
    EXPECT_EQ(units::byte_rate(0.4), "0 B/s");
    EXPECT_EQ(units::byte_rate(1023.4), "1023 B/s");
    EXPECT_EQ(units::byte_rate(1023.5), "1.0 KiB/s");
    EXPECT_EQ(units::byte_rate(1536), "1.5 KiB/s");
    EXPECT_EQ(units::byte_rate(-5), "0 B/s");
    EXPECT_EQ(units::byte_rate(1e30), "16.0 EiB/s");
    EXPECT_EQ(units::count_rate(0), "0.0");
    EXPECT_EQ(units::count_rate(12.25), "12.2");  // printf rounds to even here
    EXPECT_EQ(units::count_rate(2.5), "2.5");
    EXPECT_EQ(units::count_rate(-1), "0.0");
}
