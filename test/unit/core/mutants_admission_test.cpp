// SPDX-License-Identifier: GPL-2.0
// Admission rules (core/admission.h) that no test checked until the
// mutation campaign (tools/mutants, doc/testing.md "Mutation testing")
// changed them and every test still passed. Each test states the rule.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/admission.h"
#include "fake_env.h"
#include "harness.h"

using fake::k;
using h::count_logs;

namespace {

int set_policy(const std::string& text) {
    char msg[256];
    return rtrs_core_admission_set(text.data(), text.size(), msg, sizeof(msg));
}

// The parser's message for text ("" when it parsed).
std::string parse_message(const std::string& text) {
    auto p = std::make_unique<core::Policy>();
    char msg[256] = "untouched";
    if (p->parse(text.data(), text.size(), msg, sizeof(msg)).ok()) return "";
    return msg;
}

}  // namespace

// A refused word is quoted in the message whole up to 64 bytes; a longer
// one is cut to its first 64 and marked as cut.
TEST(MutantsAdmission, AMessageQuotesAWordWholeUpTo64Bytes) {
    const std::string w64(64, 'x');
    EXPECT_EQ(parse_message(w64 + "\n"),
              "line 1: unknown rule '" + w64 + "' (a rule begins with allow or limit)");
    EXPECT_EQ(parse_message(w64 + "y\n"),
              "line 1: unknown rule '" + w64 + "...' (a rule begins with allow or limit)");
}

// RFC 4291: one "::" at most in an IPv6 address, wherever the first one
// stands (at the start too).
TEST(MutantsAdmission, AnIpv6AddressWithTwoDoubleColonsIsRefused) {
    for (const char* a : {"::1::2", "1::2::3", "fd00::1::"}) {
        SCOPED_TRACE(a);
        const std::string m = parse_message(std::string("allow ") + a + "/128\n");
        EXPECT_EQ(m.rfind(std::string("line 1: bad address '") + a + "'", 0), 0u) << m;
    }
    EXPECT_EQ(parse_message("allow ::1/128\n"), "");
}

// The refusals' log gates: with every slot taken, a new source takes the
// slot of the source idle the longest, and among sources last refused at
// the same time the one that has held its slot the longest; a source
// forgotten with lines unlogged says how many first.
TEST(MutantsAdmission, TheOldestOfTheIdleRefusedSourcesIsForgottenFirst) {
    h::Fixture f;
    ASSERT_EQ(set_policy("allow 10.77.0.0/24\n"), 0);
    // The first source past its burst, then enough others for every slot,
    // all at the same time.
    for (int i = 0; i < 15; ++i) {
        auto c = h::client(160 + i, 1, 2);
        c.caddr = fake::ipv4(10, 79, 0, 1);
        f.connect(c, 0);
    }
    for (std::uint32_t i = 1; i < core::RefusalGates::kSlots; ++i) {
        auto c = h::client(200 + static_cast<int>(i), 1, 2);
        c.caddr = fake::ipv4(10, 79, 1, static_cast<int>(i));
        f.connect(c, 0);
    }
    EXPECT_EQ(count_logs("were not logged"), 0);
    k().advance(core::LogGate::kWindowMs);  // every source idle now
    auto late = h::client(300, 1, 2);
    late.caddr = fake::ipv4(10, 79, 2, 1);
    f.connect(late, 0);
    EXPECT_EQ(count_logs("5 refusals of ip:10.79.0.1 (not-allowed) were not logged"), 1);
    EXPECT_TRUE(f.finish());
}

// An allow entry whose address has bits set past its prefix is refused,
// and the message gives the network it would be and the hint that a
// single address takes no prefix.
TEST(MutantsAdmission, AnEntryWithBitsPastItsPrefixIsRefusedWithTheNetwork) {
    EXPECT_EQ(parse_message("allow 10.77.0.1/16\n"),
              "line 1: '10.77.0.1/16' has bits set past its prefix: the network is 10.77.0.0/16; "
              "a single address needs no prefix");
}
