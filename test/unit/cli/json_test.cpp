// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "json.h"

using namespace rtrs_srv;
using namespace std::string_literals;

TEST(CliJson, EscapesWhatJsonRequires) {
    EXPECT_EQ(JsonWriter::escape("plain"), "\"plain\"");
    EXPECT_EQ(JsonWriter::escape("a \"q\" b"), R"("a \"q\" b")");
    EXPECT_EQ(JsonWriter::escape("back\\slash"), R"("back\\slash")");
    EXPECT_EQ(JsonWriter::escape("\b\f\n\r\t"), R"("\b\f\n\r\t")");
    EXPECT_EQ(JsonWriter::escape("\x01\x1f\x7f"), R"("\u0001\u001f\u007f")");
    EXPECT_EQ(JsonWriter::escape("nul\0in"s), R"("nul\u0000in")");
    EXPECT_EQ(JsonWriter::escape("/ and @ and :"), R"("/ and @ and :")");
}

TEST(CliJson, KeepsUtf8AndReplacesWhatIsNot) {
    EXPECT_EQ(JsonWriter::escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
              "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    EXPECT_EQ(JsonWriter::escape("\xff"), R"("\ufffd")");
    EXPECT_EQ(JsonWriter::escape("a\xc3"), R"("a\ufffd")");         // cut short
    EXPECT_EQ(JsonWriter::escape("\xc0\xaf"), R"("\ufffd\ufffd")");  // overlong '/'
    EXPECT_EQ(JsonWriter::escape("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");  // surrogate
    EXPECT_EQ(JsonWriter::escape("\xf4\x90\x80\x80"), R"("\ufffd\ufffd\ufffd\ufffd")");
}

TEST(CliJson, CompactOutput) {
    JsonWriter j;
    j.begin_array();
    j.begin_object();
    j.member("s", std::string("x"));
    j.member("n", std::uint64_t{18446744073709551615u});
    j.member("i", std::int64_t{-3});
    j.member("none", std::optional<std::uint64_t>());
    j.member("some", std::optional<std::uint64_t>(7));
    j.member("t", true);
    j.key("a").begin_array().end_array();
    j.key("o").begin_object().end_object();
    j.end_object();
    j.number(1.5);
    j.null();
    j.end_array();
    EXPECT_EQ(j.str(),
              R"([{"s":"x","n":18446744073709551615,"i":-3,"none":null,"some":7,"t":true,)"
              R"("a":[],"o":{}},1.5,null])");
}

TEST(CliJson, PrettyOutput) {
    JsonWriter j(true);
    j.begin_array().begin_object();
    j.member("k", std::string("v"));
    j.key("empty").begin_array().end_array();
    j.key("list").begin_array().number(std::uint64_t{1}).number(std::uint64_t{2}).end_array();
    j.end_object().end_array();
    EXPECT_EQ(j.str(), R"([
    {
        "k": "v",
        "empty": [],
        "list": [
            1,
            2
        ]
    }
]
)");
}

TEST(CliJson, EmptyArray) {
    JsonWriter c;
    c.begin_array().end_array();
    EXPECT_EQ(c.str(), "[]");
    JsonWriter p(true);
    p.begin_array().end_array();
    EXPECT_EQ(p.str(), "[]\n");
}

TEST(CliJson, Doubles) {
    JsonWriter j;
    j.begin_array().number(0.1).number(12.0).number(1e300).number(-0.5);
    j.number(std::numeric_limits<double>::infinity()).number(std::nan("")).end_array();
    EXPECT_EQ(j.str(), "[0.1,12,1e+300,-0.5,null,null]");
}

TEST(CliJson, KeysAreEscapedToo) {
    JsonWriter j;
    j.begin_object().member("a\"b", std::string("c")).end_object();
    EXPECT_EQ(j.str(), R"({"a\"b":"c"})");
}
