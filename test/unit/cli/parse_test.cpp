// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include "parse.h"

using namespace rtrs_srv;
using namespace std::string_literals;

TEST(CliParse, LineTakesOneLineWithOrWithoutItsNewline) {
    EXPECT_EQ(parse::line("rxe0\n"), "rxe0");
    EXPECT_EQ(parse::line("rxe0"), "rxe0");
    EXPECT_EQ(parse::line("ip:fd00::2\n"), "ip:fd00::2");
    EXPECT_EQ(parse::line("with space \"q\"\n"), "with space \"q\"");
}

TEST(CliParse, LineRejectsEmptyAndMultiLineAndNul) {
    EXPECT_FALSE(parse::line(""));
    EXPECT_FALSE(parse::line("\n"));
    EXPECT_FALSE(parse::line("a\nb\n"));
    EXPECT_FALSE(parse::line("a\n\n"));
    EXPECT_FALSE(parse::line("a\0b\n"s));
}

TEST(CliParse, Number) {
    EXPECT_EQ(parse::number("1\n"), 1u);
    EXPECT_EQ(parse::number("0"), 0u);
    EXPECT_EQ(parse::number("18446744073709551615\n"), UINT64_MAX);
    EXPECT_FALSE(parse::number("18446744073709551616\n"));
    EXPECT_EQ(parse::number("4294967295\n", UINT32_MAX), 4294967295u);
    EXPECT_FALSE(parse::number("4294967296\n", UINT32_MAX));
    for (const char* bad : {"", "\n", "-1\n", "+1\n", " 1\n", "1 \n", "0x1\n", "1a\n", "one\n"})
        EXPECT_FALSE(parse::number(bad)) << bad;
}

TEST(CliParse, StatsOfThisModuleHaveFiveValues) {
    auto s = parse::stats("12 49152 3 12288 2\n");
    ASSERT_TRUE(s);
    EXPECT_EQ(*s, (Stats{12, 49152, 3, 12288, 2}));
}

TEST(CliParse, StatsOfUpstreamHaveFourValuesAndNoInflight) {
    auto s = parse::stats("5 20480 1 4096\n");
    ASSERT_TRUE(s);
    EXPECT_EQ(*s, (Stats{5, 20480, 1, 4096, std::nullopt}));
}

TEST(CliParse, StatsExtremes) {
    auto s = parse::stats("18446744073709551615 0 0 18446744073709551615 -2147483648\n");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->read_cnt, UINT64_MAX);
    EXPECT_EQ(s->write_bytes, UINT64_MAX);
    EXPECT_EQ(s->inflight, -2147483648LL);
    auto m = parse::stats("0 0 0 0 -9223372036854775808\n");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->inflight, INT64_MIN);
    EXPECT_FALSE(parse::stats("0 0 0 0 -9223372036854775809\n"));
    EXPECT_FALSE(parse::stats("0 0 0 0 9223372036854775808\n"));
}

TEST(CliParse, StatsRejectsGarbage) {
    for (const char* bad : {
             "", "\n", "garbage\n", "1 2 3\n", "1 2 3 4 5 6\n", "1  2 3 4\n", " 1 2 3 4\n",
             "1 2 3 4 \n", "1 2 3 -4 5\n", "1 2 3 4 x\n", "1 2 3 4\n5\n", "1\t2\t3\t4\n",
             "18446744073709551616 0 0 0 0\n", "1 2 3 4 -\n"})
        EXPECT_FALSE(parse::stats(bad)) << '"' << bad << '"';
}
