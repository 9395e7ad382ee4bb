// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include "table.h"

using namespace rtrs_srv;
using namespace std::string_literals;

TEST(CliTable, PadsColumnsAndTrimsTrailingBlanks) {
    Table t;
    t.column("NAME");
    t.column("N", Table::Align::right);
    t.column("LAST");
    t.row({"a", "1", ""});
    t.row({"longer", "100", "x"});
    EXPECT_EQ(t.render(),
              "NAME      N  LAST\n"
              "a         1\n"
              "longer  100  x\n");
}

TEST(CliTable, WidthCountsCharactersNotBytes) {
    Table t;
    t.column("A");
    t.column("B");
    t.row({"caf\xc3\xa9", "x"});
    t.row({"abcd", "y"});
    EXPECT_EQ(t.render(),
              "A     B\n"
              "caf\xc3\xa9  x\n"
              "abcd  y\n");
}

TEST(CliTable, HeaderOnlyWhenEmpty) {
    Table t;
    t.column("SESSION");
    t.column("PATH");
    EXPECT_TRUE(t.empty());
    EXPECT_EQ(t.render(), "SESSION  PATH\n");
}

TEST(CliPrintable, EscapesControlsAndBadBytesKeepsTheRest) {
    EXPECT_EQ(printable("sess 1 \"q\" @:"), "sess 1 \"q\" @:");
    EXPECT_EQ(printable("a\nb\tc\r"), "a\\nb\\tc\\r");
    EXPECT_EQ(printable("\x1b[2J"), "\\x1b[2J");
    EXPECT_EQ(printable("x\0y"s), "x\\x00y");
    EXPECT_EQ(printable("back\\slash"), "back\\\\slash");
    EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9");
    EXPECT_EQ(printable("\xff\xc3"), "\\xff\\xc3");
    EXPECT_EQ(printable("\xc2\x9b"), "\\xc2\\x9b");  // C1 CSI
    EXPECT_EQ(printable("\x7f"), "\\x7f");
}
