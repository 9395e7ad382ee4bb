// SPDX-License-Identifier: GPL-2.0
// Admission (issue 26): the rules' parser, address matching, the limits
// and the rate's token buckets (core/admission.h).
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <vector>
#include <string>

#include "core/admission.h"
#include "core/module.h"
#include "core/server.h"
#include "fake_env.h"
#include "fake_kernel.h"
#include "harness.h"

namespace {

rtrs_core_addr v4(int a, int b, int c, int d) { return fake::ipv4(a, b, c, d); }

// text as inet_pton reads it (an oracle of our own parser's forms).
rtrs_core_addr v6(const char* text, int family = RTRS_CORE_AF_INET6) {
    rtrs_core_addr a{};
    a.family = static_cast<unsigned short>(family);
    EXPECT_EQ(inet_pton(AF_INET6, text, a.bytes), 1) << text;
    return a;
}
rtrs_core_addr gid(const char* text) { return v6(text, RTRS_CORE_AF_IB); }

struct Parsed {
    std::unique_ptr<core::Policy> p = std::make_unique<core::Policy>();
    bool ok = false;
    std::string msg;
};

Parsed parse(const std::string& text) {
    Parsed r;
    char msg[256] = "untouched";
    r.ok = r.p->parse(text.data(), text.size(), msg, sizeof(msg)).ok();
    r.msg = msg;
    return r;
}

std::string format(const core::Policy& p) {
    char buf[16384];
    rt::StrBuf out(buf, sizeof(buf));
    p.format(out);
    return buf;
}

// The policy of a text that must parse, as the core holds one.
rt::Own<core::Policy> policy(const std::string& text) {
    auto made = rt::make_own<core::Policy>(rt::Gfp::kernel);
    EXPECT_TRUE(made.ok());
    rt::Own<core::Policy> p = rt::move(made.value());
    char msg[256];
    EXPECT_TRUE(p->parse(text.data(), text.size(), msg, sizeof(msg)).ok()) << msg;
    return p;
}

// Admission's own objects, on the fake environment's allocator.
class AdmissionUnit : public ::testing::Test {
protected:
    void SetUp() override { fake::reset(); }
    void TearDown() override {
        a.reset();
        EXPECT_EQ(fake_env::state().live_allocations, 0);
    }
    void set(const std::string& text) { a->replace(policy(text)).reset(); }

    std::unique_ptr<core::Admission> a = std::make_unique<core::Admission>();
};

core::ClientCounts holds(std::uint32_t s, std::uint32_t p, std::uint32_t c, bool new_session,
                         bool new_path) {
    core::ClientCounts h;
    h.sessions = s;
    h.paths = p;
    h.connections = c;
    h.new_session = new_session;
    h.new_path = new_path;
    return h;
}

const core::ClientCounts kNothing = holds(0, 0, 0, true, true);

rt::Bytes bytes(const char* s) { return rt::Bytes(reinterpret_cast<const rt::u8*>(s), std::strlen(s)); }

}  // namespace

using core::Verdict;

// --- the parser -----------------------------------------------------------------

TEST(AdmissionParse, RulesCommentsAndBlankLines) {
    auto r = parse(
        "# the lab\n"
        "allow 10.77.0.0/16\n"
        "\tallow fd00::/64 names=alpha,beta   # two names\r\n"
        "   \n"
        "allow gid:fe80::2:c9ff:fe00:1/128\n"
        "#allow 10.0.0.0/8\n"
        "limit sessions=2 paths=4 connections=32 rate=10/s burst=20");
    ASSERT_TRUE(r.ok) << r.msg;
    EXPECT_EQ(r.msg, "");
    EXPECT_TRUE(r.p->allow_list_on());
    EXPECT_EQ(r.p->entries(), 3u);
    EXPECT_EQ(r.p->entry(1).line, 3u);
    const core::AdmitLimits& l = r.p->limits();
    EXPECT_EQ(l.sessions, 2u);
    EXPECT_EQ(l.paths, 4u);
    EXPECT_EQ(l.connections, 32u);
    EXPECT_EQ(l.rate, 10u);
    EXPECT_EQ(l.period_ms, 1000u);
    EXPECT_EQ(l.burst, 20u);
    const std::string text =
        "allow 10.77.0.0/16\n"
        "allow fd00::/64 names=alpha,beta\n"
        "allow gid:fe80:0000:0000:0000:0002:c9ff:fe00:0001/128\n"
        "limit sessions=2 paths=4 connections=32 rate=10/s burst=20\n";
    EXPECT_EQ(format(*r.p), text);
    // What it prints reads back as the same policy.
    auto again = parse(text);
    ASSERT_TRUE(again.ok) << again.msg;
    EXPECT_EQ(format(*again.p), text);
}

// A module parameter is one line (modprobe.d, the kernel's command line):
// ';' ends a rule there as a newline does, and ends a comment too.
TEST(AdmissionParse, ASemicolonEndsARuleAsANewlineDoes) {
    auto r = parse("allow 10.77.0.0/24 names=a,b; allow fd00::/64 # lab; limit sessions=2;;");
    ASSERT_TRUE(r.ok) << r.msg;
    EXPECT_EQ(format(*r.p),
              "allow 10.77.0.0/24 names=a,b\n"
              "allow fd00::/64\n"
              "limit sessions=2\n");
    EXPECT_EQ(r.p->entry(1).line, 2u) << "each rule counts as a line of its own";
    auto bad = parse("allow 10.77.0.0/24;allow 10.77.0.1/16");
    EXPECT_FALSE(bad.ok);
    EXPECT_EQ(bad.msg.substr(0, 8), "line 2: ") << bad.msg;
    auto names = parse("allow 10.77.0.0/24 names=a;b");
    EXPECT_FALSE(names.ok) << "'b' is a rule of its own, and no rule";
    EXPECT_EQ(names.msg, "line 2: unknown rule 'b' (a rule begins with allow or limit)");
}

TEST(AdmissionParse, DefaultsAndOtherForms) {
    auto r = parse("allow 10.1.2.3\nallow ::1\nallow ip:10.9.0.0/16\nallow ip:fd01::/16\n"
                   "allow 0.0.0.0/0\nallow ::/0\nallow 1:2:3:4:5:6:7.8.9.10\nlimit rate=5/m");
    ASSERT_TRUE(r.ok) << r.msg;
    EXPECT_EQ(format(*r.p),
              "allow 10.1.2.3/32\nallow ::1/128\nallow 10.9.0.0/16\nallow fd01::/16\n"
              "allow 0.0.0.0/0\nallow ::/0\nallow 1:2:3:4:5:6:708:90a/128\n"
              "limit rate=5/m burst=5\n");
    EXPECT_EQ(r.p->limits().period_ms, 60000u);
    // No allow rule: the allow-list is off; limits of 0 are none.
    auto off = parse("# nothing\n\nlimit sessions=0 rate=0\n");
    ASSERT_TRUE(off.ok) << off.msg;
    EXPECT_FALSE(off.p->allow_list_on());
    EXPECT_FALSE(off.p->has_limits());
    EXPECT_EQ(format(*off.p), "");
    auto empty = parse("");
    EXPECT_TRUE(empty.ok);
    EXPECT_FALSE(empty.p->allow_list_on());
}

TEST(AdmissionParse, Ipv4MappedEntriesAreIpv4) {
    auto r = parse("allow ::ffff:10.77.0.0/112\nallow ::ffff:192.168.1.7\nallow ::ffff:0:0/96\n"
                   "allow ::fffe:0:0/95");
    ASSERT_TRUE(r.ok) << r.msg;
    EXPECT_EQ(format(*r.p),
              "allow 10.77.0.0/16\nallow 192.168.1.7/32\nallow 0.0.0.0/0\nallow ::fffe:0:0/95\n");
    // Shorter than /96, an entry stays IPv6 (and matches no IPv4 client).
    auto wide = parse("allow ::fffe:0:0/95");
    ASSERT_TRUE(wide.ok);
    EXPECT_NE(wide.p->match(v6("::fffe:1:2")), nullptr);
    EXPECT_EQ(wide.p->match(v6("::ffff:10.0.0.1")), nullptr);
    EXPECT_EQ(wide.p->match(v4(10, 0, 0, 1)), nullptr);
    auto host = parse("allow ::ffff:0:0/95");
    EXPECT_FALSE(host.ok);
    EXPECT_NE(host.msg.find("the network is ::fffe:0:0/95"), std::string::npos) << host.msg;
}

struct BadText {
    const char* name;
    std::string text;
    const char* msg;
};

// (Failures name the case, not its bytes.)
void PrintTo(const BadText& b, std::ostream* os) { *os << b.name; }

class AdmissionBad : public ::testing::TestWithParam<BadText> {};

TEST_P(AdmissionBad, IsRefusedWithItsLineAndWhy) {
    auto r = parse(GetParam().text);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.msg.find(GetParam().msg), std::string::npos) << r.msg;
}

INSTANTIATE_TEST_SUITE_P(
    All, AdmissionBad,
    ::testing::Values(
        BadText{"no_address", "allow", "line 1: allow without an address"},
        BadText{"octet", "# x\n\nallow 10.0.0.256", "line 3: bad address '10.0.0.256'"},
        BadText{"three_parts", "allow 10.0.0", "line 1: bad address '10.0.0'"},
        BadText{"five_parts", "allow 1.2.3.4.5", "bad address"},
        BadText{"leading_zero", "allow 010.0.0.1", "bad address '010.0.0.1'"},
        BadText{"nine_groups", "allow 1:2:3:4:5:6:7:8:9", "bad address"},
        BadText{"seven_groups", "allow 1:2:3:4:5:6:7", "bad address"},
        BadText{"two_gaps", "allow 1::2::3", "bad address '1::2::3'"},
        BadText{"gap_and_eight", "allow 1::2:3:4:5:6:7:8", "bad address"},
        BadText{"leading_colon", "allow :1::", "bad address"},
        BadText{"trailing_colon", "allow 1::2:", "bad address"},
        BadText{"long_group", "allow 12345::", "bad address"},
        BadText{"zone", "allow fe80::1%eth0", "bad address"},
        BadText{"dotted_not_last", "allow ::1.2.3.4:5", "bad address"},
        BadText{"gid_ipv4", "allow gid:10.0.0.1", "bad address 'gid:10.0.0.1'"},
        BadText{"prefix_v4", "allow 10.0.0.0/33", "line 1: bad prefix '33' (0 to 32 for IPv4)"},
        BadText{"prefix_v6", "allow fd00::/129", "bad prefix '129' (0 to 128 for IPv6)"},
        BadText{"prefix_empty", "allow fd00::/", "bad prefix ''"},
        BadText{"host_bits_v4", "allow 10.77.0.1/16",
                "line 1: '10.77.0.1/16' has bits set past its prefix: the network is 10.77.0.0/16"},
        BadText{"host_bits_v6", "allow fd00::1/64", "the network is fd00::/64"},
        BadText{"host_bits_23", "allow 10.77.3.0/23", "the network is 10.77.2.0/23"},
        BadText{"no_name", "allow 10.0.0.0/8 names=", "line 1: names= without a name"},
        BadText{"empty_name", "allow 10.0.0.0/8 names=a,,b", "an empty name in names="},
        BadText{"trailing_comma", "allow 10.0.0.0/8 names=a,", "an empty name in names="},
        BadText{"dot_name", "allow 10.0.0.0/8 names=a.b", "the name 'a.b' can never be a session's"},
        BadText{"slash_name", "allow 10.0.0.0/8 names=x/y", "the name 'x/y' can never"},
        BadText{"long_name", "allow 10.0.0.0/8 names=" + std::string(255, 'n'),
                "a name of more than 254 bytes"},
        BadText{"names_twice", "allow 10.0.0.0/8 names=a names=b", "names= twice in one rule"},
        BadText{"unknown_word", "allow 10.0.0.0/8 nmes=a", "unknown word 'nmes=a' after the address"},
        BadText{"same_network", "allow 10.0.0.0/8\n# again\nallow 10.0.0.0/8 names=x",
                "line 3: the network 10.0.0.0/8 is on line 1 already"},
        BadText{"same_mapped", "allow 10.0.0.0/8\nallow ::ffff:10.0.0.0/104",
                "line 2: the network 10.0.0.0/8 is on line 1 already"},
        BadText{"unknown_rule", "deny 10.0.0.0/8", "line 1: unknown rule 'deny'"},
        BadText{"limit_empty", "limit", "line 1: limit without a value"},
        BadText{"limit_no_value", "limit sessions", "'sessions' is not KEY=VALUE"},
        BadText{"limit_unknown", "limit sesions=1", "unknown limit 'sesions'"},
        BadText{"limit_twice", "limit sessions=1 sessions=2", "sessions= twice"},
        BadText{"limit_negative", "limit paths=-1", "bad value '-1' for paths (0 to 1000000)"},
        BadText{"limit_big", "limit connections=1000001", "bad value '1000001' for connections"},
        BadText{"limit_word", "limit sessions=x", "bad value 'x' for sessions"},
        BadText{"rate_unit", "limit rate=10", "bad rate '10' (expected R/s or R/m)"},
        BadText{"rate_hour", "limit rate=10/h", "bad rate '10/h'"},
        BadText{"rate_number", "limit rate=x/s", "bad value 'x/s' for rate"},
        BadText{"burst_alone", "limit burst=5", "burst= without a rate"},
        BadText{"burst_zero", "limit rate=5/s burst=0", "bad value '0' for burst (1 to 1000000)"},
        BadText{"two_limits", "limit sessions=1\nlimit paths=1",
                "line 2: a second limit rule (the first is on line 1)"},
        BadText{"nul", std::string("allow 10.0.0.0/8\n\nallow 10.1.0.0/16") + std::string(1, '\0'),
                "line 3: a NUL byte"}),
    [](const auto& i) { return std::string(i.param.name); });

TEST(AdmissionParse, TheNumbersOfEntriesAndNamesAreBounded) {
    std::string text;
    for (unsigned i = 0; i < core::kAdmitMaxEntries; ++i)
        text += "allow 10." + std::to_string(i) + ".0.0/16\n";
    EXPECT_TRUE(parse(text).ok) << parse(text).msg;
    auto over = parse(text + "allow 10.200.0.0/16\n");
    EXPECT_FALSE(over.ok);
    EXPECT_NE(over.msg.find("line 65: more than 64 allow rules"), std::string::npos) << over.msg;

    std::string names = "n0";
    for (unsigned i = 1; i < core::kAdmitMaxNames; ++i) names += ",n" + std::to_string(i);
    EXPECT_TRUE(parse("allow fd00::/8 names=" + names).ok);
    auto nine = parse("allow fd00::/8 names=" + names + ",n8");
    EXPECT_FALSE(nine.ok);
    EXPECT_NE(nine.msg.find("more than 8 names in one rule"), std::string::npos) << nine.msg;

    // 8 names of 254 bytes are 2032 of the 2048 bytes all names share.
    std::string big;
    for (char c = 'a'; c < 'a' + 8; ++c) big += (big.empty() ? "" : ",") + std::string(254, c);
    EXPECT_TRUE(parse("allow 10.0.0.0/8 names=" + big + "\nallow 10.1.0.0/16 names=" + std::string(16, 'z')).ok);
    auto full = parse("allow 10.0.0.0/8 names=" + big + "\nallow 10.1.0.0/16 names=" + std::string(17, 'z'));
    EXPECT_FALSE(full.ok);
    EXPECT_NE(full.msg.find("line 2: the names of all rules take more than 2048 bytes"), std::string::npos)
        << full.msg;
}

TEST(AdmissionParse, ALongWordIsCutInTheMessage) {
    auto r = parse("allow " + std::string(300, 'x'));
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.msg.find("'" + std::string(64, 'x') + "...'"), std::string::npos) << r.msg;
    // A message buffer of any size is never overrun.
    core::Policy p;
    char tiny[8];
    std::memset(tiny, '#', sizeof(tiny));
    EXPECT_FALSE(p.parse("deny", 4, tiny, 5).ok());
    EXPECT_EQ(std::string(tiny), "line");
    EXPECT_EQ(tiny[5], '#');
}

// --- matching ------------------------------------------------------------------------

namespace {

bool matches(const core::Policy& p, const rtrs_core_addr& a) { return p.match(a) != nullptr; }

}  // namespace

TEST(AdmissionMatch, PrefixEdges) {
    auto all4 = parse("allow 0.0.0.0/0");
    ASSERT_TRUE(all4.ok);
    EXPECT_TRUE(matches(*all4.p, v4(1, 2, 3, 4)));
    EXPECT_TRUE(matches(*all4.p, v4(255, 255, 255, 255)));
    EXPECT_TRUE(matches(*all4.p, v6("::ffff:1.2.3.4"))) << "mapped: IPv4";
    EXPECT_FALSE(matches(*all4.p, v6("fd00::1")));
    EXPECT_FALSE(matches(*all4.p, gid("fe80::1")));

    auto one = parse("allow 10.77.0.9/32");
    ASSERT_TRUE(one.ok);
    EXPECT_TRUE(matches(*one.p, v4(10, 77, 0, 9)));
    EXPECT_FALSE(matches(*one.p, v4(10, 77, 0, 8)));
    EXPECT_FALSE(matches(*one.p, v4(10, 77, 0, 10)));

    auto half = parse("allow 128.0.0.0/1");
    ASSERT_TRUE(half.ok);
    EXPECT_TRUE(matches(*half.p, v4(128, 0, 0, 0)));
    EXPECT_TRUE(matches(*half.p, v4(255, 1, 1, 1)));
    EXPECT_FALSE(matches(*half.p, v4(127, 255, 255, 255)));

    auto p23 = parse("allow 10.77.2.0/23");
    ASSERT_TRUE(p23.ok);
    EXPECT_TRUE(matches(*p23.p, v4(10, 77, 2, 0)));
    EXPECT_TRUE(matches(*p23.p, v4(10, 77, 3, 255)));
    EXPECT_FALSE(matches(*p23.p, v4(10, 77, 4, 0)));
    EXPECT_FALSE(matches(*p23.p, v4(10, 77, 1, 255)));

    auto p121 = parse("allow fd00::80/121");
    ASSERT_TRUE(p121.ok);
    EXPECT_TRUE(matches(*p121.p, v6("fd00::80")));
    EXPECT_TRUE(matches(*p121.p, v6("fd00::ff")));
    EXPECT_FALSE(matches(*p121.p, v6("fd00::7f")));
    EXPECT_FALSE(matches(*p121.p, v6("fd00::100")));

    auto p128 = parse("allow fd00::5");
    ASSERT_TRUE(p128.ok);
    EXPECT_TRUE(matches(*p128.p, v6("fd00::5")));
    EXPECT_FALSE(matches(*p128.p, v6("fd00::4")));
    EXPECT_FALSE(matches(*p128.p, v6("fd00::5:0")));

    auto all6 = parse("allow ::/0");
    ASSERT_TRUE(all6.ok);
    EXPECT_TRUE(matches(*all6.p, v6("fd00::1")));
    EXPECT_TRUE(matches(*all6.p, v6("::")));
    EXPECT_FALSE(matches(*all6.p, v4(10, 0, 0, 1))) << "::/0 is IPv6 only";
    EXPECT_FALSE(matches(*all6.p, v6("::ffff:10.0.0.1"))) << "mapped is IPv4";
    EXPECT_FALSE(matches(*all6.p, gid("fe80::1")));

    rtrs_core_addr odd = v4(10, 0, 0, 1);
    odd.family = 1;  // AF_UNIX: never a client's
    EXPECT_FALSE(matches(*all4.p, odd));
    EXPECT_FALSE(matches(*all6.p, odd));
}

TEST(AdmissionMatch, Ipv4MappedAddressesMatchBothWays) {
    auto by_v4 = parse("allow 10.77.0.0/16");
    ASSERT_TRUE(by_v4.ok);
    EXPECT_TRUE(matches(*by_v4.p, v6("::ffff:10.77.0.5")));
    EXPECT_FALSE(matches(*by_v4.p, v6("::ffff:10.78.0.5")));
    EXPECT_FALSE(matches(*by_v4.p, v6("::10.77.0.5"))) << "IPv4-compatible is not mapped";

    auto by_v6 = parse("allow ::ffff:10.77.0.0/112");
    ASSERT_TRUE(by_v6.ok);
    EXPECT_TRUE(matches(*by_v6.p, v4(10, 77, 0, 5)));
    EXPECT_TRUE(matches(*by_v6.p, v6("::ffff:10.77.255.255")));
    EXPECT_FALSE(matches(*by_v6.p, v4(10, 78, 0, 5)));
}

TEST(AdmissionMatch, GidsAndIpv6AddressesNeverMatchAcrossFamilies) {
    auto g = parse("allow gid:fe80::/64");
    ASSERT_TRUE(g.ok);
    EXPECT_TRUE(matches(*g.p, gid("fe80::2:c9ff:fe00:1")));
    EXPECT_FALSE(matches(*g.p, v6("fe80::2:c9ff:fe00:1"))) << "the same bytes, another family";
    auto ip = parse("allow fe80::/64");
    ASSERT_TRUE(ip.ok);
    EXPECT_TRUE(matches(*ip.p, v6("fe80::2:c9ff:fe00:1")));
    EXPECT_FALSE(matches(*ip.p, gid("fe80::2:c9ff:fe00:1")));
    // A GID of a RoCE port for an IPv4 address looks mapped: still a GID.
    auto mapped = parse("allow 10.0.0.0/8");
    ASSERT_TRUE(mapped.ok);
    EXPECT_FALSE(matches(*mapped.p, gid("::ffff:10.0.0.1")));
    // Both may be listed: they are two networks.
    EXPECT_TRUE(parse("allow gid:fe80::/64\nallow fe80::/64").ok);
}

TEST(AdmissionMatch, TheLongestPrefixDecidesWhateverTheOrder) {
    const char* rules[] = {"allow 10.0.0.0/8\nallow 10.1.0.0/16 names=a\nallow 10.1.2.3 names=b\n",
                           "allow 10.1.2.3 names=b\nallow 10.1.0.0/16 names=a\nallow 10.0.0.0/8\n"};
    for (const char* text : rules) {
        auto r = parse(text);
        ASSERT_TRUE(r.ok) << r.msg;
        const core::AllowEntry* e = r.p->match(v4(10, 1, 2, 3));
        ASSERT_NE(e, nullptr);
        EXPECT_EQ(e->prefix, 32);
        EXPECT_TRUE(r.p->name_allowed(*e, bytes("b")));
        EXPECT_FALSE(r.p->name_allowed(*e, bytes("a"))) << "the /16's names do not add up";
        e = r.p->match(v4(10, 1, 9, 9));
        ASSERT_NE(e, nullptr);
        EXPECT_EQ(e->prefix, 16);
        EXPECT_TRUE(r.p->name_allowed(*e, bytes("a")));
        EXPECT_FALSE(r.p->name_allowed(*e, bytes("b")));
        e = r.p->match(v4(10, 9, 9, 9));
        ASSERT_NE(e, nullptr);
        EXPECT_EQ(e->prefix, 8);
        EXPECT_TRUE(r.p->name_allowed(*e, bytes("anything")));
        EXPECT_EQ(r.p->match(v4(11, 1, 2, 3)), nullptr);
    }
}

TEST(AdmissionMatch, NamesAreExact) {
    auto r = parse("allow 10.0.0.0/8 names=db,db2,x#y");
    ASSERT_TRUE(r.ok) << r.msg;
    const core::AllowEntry* e = r.p->match(v4(10, 0, 0, 1));
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(r.p->name_allowed(*e, bytes("db")));
    EXPECT_TRUE(r.p->name_allowed(*e, bytes("db2")));
    EXPECT_TRUE(r.p->name_allowed(*e, bytes("x#y"))) << "a '#' inside a word is no comment";
    EXPECT_FALSE(r.p->name_allowed(*e, bytes("d")));
    EXPECT_FALSE(r.p->name_allowed(*e, bytes("db3")));
    EXPECT_FALSE(r.p->name_allowed(*e, bytes("DB")));
}

TEST(AdmissionMatch, ClientKeysFoldMappedAddresses) {
    EXPECT_TRUE(core::same_client(v4(10, 0, 0, 1), v6("::ffff:10.0.0.1")));
    EXPECT_FALSE(core::same_client(v4(10, 0, 0, 1), v6("::ffff:10.0.0.2")));
    EXPECT_FALSE(core::same_client(v6("fe80::1"), gid("fe80::1")));
    EXPECT_EQ(core::client_key(v6("::ffff:10.0.0.1")).family, RTRS_CORE_AF_INET);
    EXPECT_EQ(core::client_key(v6("fd00::1")).family, RTRS_CORE_AF_INET6);
}

// --- decisions --------------------------------------------------------------------------

TEST_F(AdmissionUnit, WithoutAPolicyEverythingIsAdmitted) {
    for (int i = 0; i < 1000; ++i)
        EXPECT_EQ(a->admit_connection(v4(10, 0, 0, 1), 0, holds(100, 100, 1000, true, true)), Verdict::Ok);
    EXPECT_EQ(a->admit_name(v6("fd00::1"), bytes("any")), Verdict::Ok);
    // Nor with a policy of comments only.
    set("# nothing yet\n");
    EXPECT_EQ(a->admit_connection(gid("fe80::1"), 0, kNothing), Verdict::Ok);
    for (std::uint32_t v = 0; v < core::kVerdicts; ++v)
        EXPECT_EQ(a->refusals(static_cast<Verdict>(v)), 0u);
}

TEST_F(AdmissionUnit, TheAllowListRefusesOtherAddressesAndNames) {
    set("allow 10.77.0.0/24 names=alpha\nallow fd00::/64\n");
    EXPECT_EQ(a->admit_connection(v4(10, 77, 0, 2), 0, kNothing), Verdict::Ok);
    EXPECT_EQ(a->admit_connection(v4(10, 77, 1, 2), 0, kNothing), Verdict::NotAllowed);
    EXPECT_EQ(a->admit_connection(v6("fd00::9"), 0, kNothing), Verdict::Ok);
    EXPECT_EQ(a->admit_connection(v6("fd01::9"), 0, kNothing), Verdict::NotAllowed);
    EXPECT_EQ(a->recheck_connection(v6("fd01::9"), kNothing), Verdict::NotAllowed);
    EXPECT_EQ(a->admit_name(v4(10, 77, 0, 2), bytes("alpha")), Verdict::Ok);
    EXPECT_EQ(a->admit_name(v4(10, 77, 0, 2), bytes("beta")), Verdict::NameNotAllowed);
    EXPECT_EQ(a->admit_name(v6("fd00::9"), bytes("beta")), Verdict::Ok);
    EXPECT_EQ(a->admit_name(v4(10, 1, 0, 2), bytes("alpha")), Verdict::NotAllowed);
    EXPECT_EQ(a->refusals(Verdict::NotAllowed), 4u);
    EXPECT_EQ(a->refusals(Verdict::NameNotAllowed), 1u);
}

TEST_F(AdmissionUnit, LimitsRefuseOnlyWhatWouldGrowPastThem) {
    set("limit sessions=2 paths=3 connections=8\n");
    const auto c = v4(10, 0, 0, 1);
    EXPECT_EQ(a->admit_connection(c, 0, holds(1, 2, 7, true, true)), Verdict::Ok);
    EXPECT_EQ(a->admit_connection(c, 0, holds(2, 2, 4, true, true)), Verdict::TooManySessions);
    // A new path of a session the address is in already is no new session.
    EXPECT_EQ(a->admit_connection(c, 0, holds(2, 2, 4, false, true)), Verdict::Ok);
    EXPECT_EQ(a->admit_connection(c, 0, holds(2, 3, 4, false, true)), Verdict::TooManyPaths);
    // A new connection of a path that exists is no new path.
    EXPECT_EQ(a->admit_connection(c, 0, holds(2, 3, 4, false, false)), Verdict::Ok);
    EXPECT_EQ(a->admit_connection(c, 0, holds(2, 3, 8, false, false)), Verdict::TooManyConnections);
    EXPECT_EQ(a->recheck_connection(c, holds(2, 3, 8, false, false)), Verdict::TooManyConnections);
    EXPECT_EQ(a->refusals(Verdict::TooManySessions), 1u);
    EXPECT_EQ(a->refusals(Verdict::TooManyPaths), 1u);
    EXPECT_EQ(a->refusals(Verdict::TooManyConnections), 2u);
    // Limits apply without an allow-list: any address.
    EXPECT_EQ(a->admit_connection(gid("fe80::1"), 0, holds(2, 0, 0, true, true)), Verdict::TooManySessions);
}

TEST_F(AdmissionUnit, TheTokenBucketRefusesPastTheBurstAndRefills) {
    set("limit rate=2/s burst=3\n");
    const auto c = v4(10, 0, 0, 1);
    std::uint64_t t = 5000;
    for (int i = 0; i < 3; ++i) EXPECT_EQ(a->admit_connection(c, t, kNothing), Verdict::Ok) << i;
    EXPECT_EQ(a->admit_connection(c, t, kNothing), Verdict::RateLimited);
    EXPECT_EQ(a->admit_connection(c, t + 499, kNothing), Verdict::RateLimited) << "0.998 of a token";
    EXPECT_EQ(a->admit_connection(c, t + 500, kNothing), Verdict::Ok);
    EXPECT_EQ(a->admit_connection(c, t + 500, kNothing), Verdict::RateLimited);
    // A look again takes no token.
    EXPECT_EQ(a->recheck_connection(c, kNothing), Verdict::Ok);
    // Another address has its own bucket; a mapped one is the same address.
    EXPECT_EQ(a->admit_connection(v4(10, 0, 0, 2), t + 500, kNothing), Verdict::Ok);
    EXPECT_EQ(a->admit_connection(v6("::ffff:10.0.0.1"), t + 500, kNothing), Verdict::RateLimited);
    // A second and a half later: three tokens again, not more.
    t += 2000;
    for (int i = 0; i < 3; ++i) EXPECT_EQ(a->admit_connection(c, t, kNothing), Verdict::Ok) << i;
    EXPECT_EQ(a->admit_connection(c, t, kNothing), Verdict::RateLimited);
    // A clock that goes back refills nothing (and breaks nothing).
    EXPECT_EQ(a->admit_connection(c, t - 4000, kNothing), Verdict::RateLimited);
    // Ages later: full, no overflow.
    EXPECT_EQ(a->admit_connection(c, ~std::uint64_t{0} / 2, kNothing), Verdict::Ok);
    EXPECT_EQ(a->refusals(Verdict::RateLimited), 6u);
}

TEST_F(AdmissionUnit, ARatePerMinute) {
    set("limit rate=1/m\n");
    const auto c = v6("fd00::1");
    EXPECT_EQ(a->admit_connection(c, 0, kNothing), Verdict::Ok);
    EXPECT_EQ(a->admit_connection(c, 59999, kNothing), Verdict::RateLimited);
    EXPECT_EQ(a->admit_connection(c, 60000, kNothing), Verdict::Ok);
}

TEST_F(AdmissionUnit, TheLeastRecentlyUsedBucketIsForgottenFirst) {
    set("limit rate=1/m\n");
    const auto victim = v4(10, 0, 0, 1);
    ASSERT_EQ(a->admit_connection(victim, 1, kNothing), Verdict::Ok);
    ASSERT_EQ(a->admit_connection(victim, 2, kNothing), Verdict::RateLimited);
    // Every other slot taken, later: the victim is still remembered.
    for (unsigned i = 0; i < core::kAdmitBuckets - 1; ++i)
        ASSERT_EQ(a->admit_connection(v4(10, 1, i / 256, i % 256), 10 + i, kNothing), Verdict::Ok);
    EXPECT_EQ(a->admit_connection(victim, 1000, kNothing), Verdict::RateLimited);
    // (That touched it: the oldest is now 10.1.0.0.) One more address
    // forgets 10.1.0.0, which comes back with a full bucket.
    ASSERT_EQ(a->admit_connection(v4(10, 2, 0, 0), 1001, kNothing), Verdict::Ok);
    EXPECT_EQ(a->admit_connection(victim, 1002, kNothing), Verdict::RateLimited);
    EXPECT_EQ(a->admit_connection(v4(10, 1, 0, 0), 1003, kNothing), Verdict::Ok);
    // That evicted the next oldest, 10.1.0.1 (its token spent at 11): it
    // comes back full too, while 10.1.0.3 (spent at 13) is remembered.
    EXPECT_EQ(a->admit_connection(v4(10, 1, 0, 1), 1004, kNothing), Verdict::Ok);
    EXPECT_EQ(a->admit_connection(v4(10, 1, 0, 3), 1005, kNothing), Verdict::RateLimited);
}

TEST_F(AdmissionUnit, ANewPolicyStartsTheBucketsAfresh) {
    set("limit rate=1/m\n");
    const auto c = v4(10, 0, 0, 1);
    ASSERT_EQ(a->admit_connection(c, 0, kNothing), Verdict::Ok);
    ASSERT_EQ(a->admit_connection(c, 1, kNothing), Verdict::RateLimited);
    set("limit rate=1/m\n");
    EXPECT_EQ(a->admit_connection(c, 2, kNothing), Verdict::Ok);
    // Counters are the module's: they survive a new policy.
    EXPECT_EQ(a->refusals(Verdict::RateLimited), 1u);
}

TEST_F(AdmissionUnit, TheTextItShowsReadsBack) {
    char buf[1024];
    rt::StrBuf out(buf, sizeof(buf));
    a->format(out);
    EXPECT_EQ(std::string(buf),
              "# refused so far: not-allowed=0 sessions=0 paths=0 connections=0 rate=0 name=0\n"
              "# no allow rule: every address may connect\n# no limit\n");
    set("allow 10.0.0.0/8 names=a\nlimit paths=2\n");
    a->admit_connection(v4(11, 0, 0, 1), 0, kNothing);
    rt::StrBuf again(buf, sizeof(buf));
    a->format(again);
    const std::string text = buf;
    EXPECT_EQ(text,
              "# refused so far: not-allowed=1 sessions=0 paths=0 connections=0 rate=0 name=0\n"
              "allow 10.0.0.0/8 names=a\nlimit paths=2\n");
    auto r = parse(text);
    ASSERT_TRUE(r.ok) << r.msg;
    EXPECT_EQ(format(*r.p), "allow 10.0.0.0/8 names=a\nlimit paths=2\n");
}

TEST(AdmissionVerdicts, ReasonsNamesAndErrnos) {
    EXPECT_EQ(core::verdict_errno(Verdict::Ok), 0);
    EXPECT_EQ(core::verdict_errno(Verdict::NotAllowed), ECONNREFUSED);
    EXPECT_EQ(core::verdict_errno(Verdict::TooManySessions), EDQUOT);
    EXPECT_EQ(core::verdict_errno(Verdict::TooManyPaths), EDQUOT);
    EXPECT_EQ(core::verdict_errno(Verdict::TooManyConnections), EDQUOT);
    EXPECT_EQ(core::verdict_errno(Verdict::RateLimited), EAGAIN);
    EXPECT_EQ(core::verdict_errno(Verdict::NameNotAllowed), EPERM);
    std::set<std::string> reasons, names;
    for (std::uint32_t v = 0; v < core::kVerdicts; ++v) {
        reasons.insert(core::verdict_reason(static_cast<Verdict>(v)));
        names.insert(core::verdict_name(static_cast<Verdict>(v)));
    }
    EXPECT_EQ(reasons.size(), core::kVerdicts) << "each reason its own words";
    EXPECT_EQ(names.size(), core::kVerdicts);
    EXPECT_STREQ(core::verdict_reason(Verdict::NotAllowed), "the client's address is not on the allow-list");
}

// --- through the server (the fake kernel) -------------------------------------------

namespace {

using fake::k;
using h::count_logs;

std::string all_logs() {
    std::string out;
    for (auto& l : fake_env::state().logs) out += l.second + "\n";
    return out;
}

// Through the C entry points, as the glue will.
int set_policy(const std::string& text, std::string* msg = nullptr) {
    char buf[256];
    std::memset(buf, 'x', sizeof(buf));
    const int r = rtrs_core_admission_set(text.data(), text.size(), buf, sizeof(buf));
    if (msg) *msg = buf;
    return r;
}

std::string show_policy() {
    char buf[4096];
    const int n = rtrs_core_admission_show(buf, sizeof(buf));
    return n < 0 ? "<error " + std::to_string(n) + ">" : std::string(buf, static_cast<std::size_t>(n));
}

core::Server& server(h::Fixture& f) { return *reinterpret_cast<core::Server*>(f.srv); }

std::string counts(h::Fixture& f, const rtrs_core_addr& a) {
    const core::ClientCounts c = server(f).count_client(a);
    return std::to_string(c.sessions) + " " + std::to_string(c.paths) + " " + std::to_string(c.connections);
}

std::uint64_t refusals(Verdict v) { return core::module()->admission_refusals(v); }

// Everything a request could make, counted: a refused one makes none of it.
struct Made {
    long failure_points, allocations;
    std::size_t cons, chunks, mrs, dma, devs, works, locks, sysfs_sess, sysfs_paths;
    std::uint64_t sessions, paths;

    static Made now() {
        Made m{};
        m.failure_points = k().failure_points;
        m.allocations = fake_env::state().total_allocations;
        m.cons = k().cons.size();
        m.chunks = k().chunks.size();
        m.mrs = k().mrs.size();
        m.dma = k().dma.size();
        m.devs = k().devs.size();
        m.works = k().works.size();
        m.locks = k().locks.size();
        m.sysfs_sess = k().sysfs_sess.size();
        m.sysfs_paths = k().sysfs_paths.size();
        rtrs_core_held(&m.sessions, &m.paths);
        return m;
    }
};

// A refused request: rejected with err, nothing made for it (no call
// that can fail was even made: no allocation, no QP, no chunk), one log
// line with its reason and one trace event.
void expect_refused(h::Client& c, std::uint16_t cid, int err, Verdict v, h::Fixture& f,
                    bool first = true) {
    const Made before = Made::now();
    const auto traces = k().traces_named("conn_refused").size();
    const int logged = count_logs(core::verdict_reason(v));
    EXPECT_NE(f.connect(c, cid, first), 0);
    ASSERT_NE(c.cms[cid], nullptr);
    EXPECT_TRUE(c.cms[cid]->rejected);
    EXPECT_EQ(c.cms[cid]->reject_errno, err);
    EXPECT_EQ(c.cms[cid]->con, nullptr);
    const Made after = Made::now();
    EXPECT_EQ(after.failure_points, before.failure_points) << "something was made for it";
    EXPECT_EQ(after.allocations, before.allocations);
    EXPECT_EQ(after.cons, before.cons);
    EXPECT_EQ(after.chunks, before.chunks);
    EXPECT_EQ(after.mrs, before.mrs);
    EXPECT_EQ(after.dma, before.dma);
    EXPECT_EQ(after.devs, before.devs);
    EXPECT_EQ(after.works, before.works);
    EXPECT_EQ(after.locks, before.locks);
    EXPECT_EQ(after.sysfs_sess, before.sysfs_sess);
    EXPECT_EQ(after.sysfs_paths, before.sysfs_paths);
    EXPECT_EQ(after.sessions, before.sessions);
    EXPECT_EQ(after.paths, before.paths);
    EXPECT_EQ(count_logs(std::string("connection request refused: ") + core::verdict_reason(v)), logged + 1)
        << all_logs();
    auto t = k().traces_named("conn_refused");
    ASSERT_EQ(t.size(), traces + 1);
    EXPECT_EQ(t.back().why, core::verdict_reason(v));
    EXPECT_EQ(t.back().err, -err);
}

rtrs_core_addr addr_v6(const char* text) { return v6(text); }

}  // namespace

TEST(AdmissionServer, WithoutRulesEveryoneIsServedAsBefore) {
    h::Fixture f;
    EXPECT_EQ(show_policy(),
              "# refused so far: not-allowed=0 sessions=0 paths=0 connections=0 rate=0 name=0\n"
              "# no allow rule: every address may connect\n# no limit\n");
    auto a = h::client(1, 2, 2);
    auto b = h::client(2, 3, 2);  // the same address, another session
    auto c = h::client(3, 2, 3);
    c.caddr = addr_v6("fd00::3");
    c.saddr = addr_v6("fd00::1");
    auto d = h::client(4, 2, 4);
    d.caddr = gid("fe80::2:c9ff:fe00:4");
    d.saddr = gid("fe80::2:c9ff:fe00:1");
    ASSERT_TRUE(f.up(a, "a")) << all_logs();
    ASSERT_TRUE(f.up(b, "b")) << all_logs();
    ASSERT_TRUE(f.up(c, "c")) << all_logs();
    ASSERT_TRUE(f.up(d, "d")) << all_logs();
    EXPECT_EQ(f.link_events(RTRS_CORE_LINK_CONNECTED), 4);
    EXPECT_EQ(counts(f, a.caddr), "2 2 5");
    EXPECT_EQ(counts(f, v6("::ffff:10.77.0.2")), "2 2 5") << "mapped: the same client";
    EXPECT_EQ(counts(f, c.caddr), "1 1 2");
    EXPECT_EQ(count_logs("refused"), 0) << all_logs();
    EXPECT_TRUE(f.finish());
}

TEST(AdmissionServer, AnAddressNotOnTheListIsRefusedBeforeAnythingIsMade) {
    h::Fixture f;
    std::string msg;
    ASSERT_EQ(set_policy("allow 10.77.0.0/24\n", &msg), 0) << msg;
    EXPECT_EQ(msg, "");
    EXPECT_EQ(count_logs("admission policy set: an allow-list of 1 entry, no limits"), 1) << all_logs();
    auto out = h::client(1, 2, 2);
    out.caddr = fake::ipv4(10, 78, 0, 2);
    expect_refused(out, 0, ECONNREFUSED, Verdict::NotAllowed, f);
    EXPECT_EQ(count_logs("the client's address is not on the allow-list (ip:10.78.0.2)"), 1) << all_logs();
    EXPECT_EQ(k().traces_named("conn_refused").back().path, "ip:10.78.0.2@ip:10.77.0.1");
    expect_refused(out, 1, ECONNREFUSED, Verdict::NotAllowed, f);
    // Refused before it learns whether the session exists (no ENXIO).
    auto probe = h::client(2, 1, 2);
    probe.caddr = fake::ipv4(10, 78, 0, 3);
    expect_refused(probe, 0, ECONNREFUSED, Verdict::NotAllowed, f, false);
    // The same bytes as an allowed IPv4 address, as a GID: another family.
    auto g = h::client(3, 1, 2);
    g.caddr = gid("::ffff:10.77.0.2");
    expect_refused(g, 0, ECONNREFUSED, Verdict::NotAllowed, f);
    // An allowed client on the same server is served, IPv4-mapped too.
    auto in = h::client(4, 2, 3);
    ASSERT_TRUE(f.up(in, "inside")) << all_logs();
    auto mapped = h::client(5, 2, 4);
    mapped.caddr = v6("::ffff:10.77.0.4");
    mapped.saddr = v6("::ffff:10.77.0.1");
    ASSERT_TRUE(f.up(mapped, "mapped")) << all_logs();
    EXPECT_NE(f.sysfs_sess("inside"), nullptr);
    EXPECT_NE(f.sysfs_sess("mapped"), nullptr);
    EXPECT_EQ(f.link_events(RTRS_CORE_LINK_CONNECTED), 2);
    EXPECT_EQ(refusals(Verdict::NotAllowed), 4u);
    EXPECT_NE(show_policy().find("allow 10.77.0.0/24\n"), std::string::npos) << show_policy();
    EXPECT_NE(show_policy().find("not-allowed=4 "), std::string::npos) << show_policy();
    EXPECT_TRUE(f.finish());
}

TEST(AdmissionServer, Ipv6AndGidEntriesAdmitOnlyTheirFamily) {
    h::Fixture f;
    ASSERT_EQ(set_policy("allow fd00::/64\nallow gid:fe80::/64\n"), 0);
    auto ip = h::client(1, 1, 2);
    ip.caddr = v6("fd00::2");
    ip.saddr = v6("fd00::1");
    ASSERT_TRUE(f.up(ip, "ip6")) << all_logs();
    auto ib = h::client(2, 1, 3);
    ib.caddr = gid("fe80::2");
    ib.saddr = gid("fe80::1");
    ASSERT_TRUE(f.up(ib, "ib")) << all_logs();
    auto cross = h::client(3, 1, 4);
    cross.caddr = gid("fd00::2");  // an allowed IPv6 address's bytes, as a GID
    cross.saddr = gid("fe80::1");
    expect_refused(cross, 0, ECONNREFUSED, Verdict::NotAllowed, f);
    auto cross2 = h::client(4, 1, 5);
    cross2.caddr = v6("fe80::2");  // an allowed GID's bytes, as IPv6
    cross2.saddr = v6("fd00::1");
    expect_refused(cross2, 0, ECONNREFUSED, Verdict::NotAllowed, f);
    auto v4client = h::client(5, 1, 6);
    expect_refused(v4client, 0, ECONNREFUSED, Verdict::NotAllowed, f);
    EXPECT_TRUE(f.finish());
}

TEST(AdmissionServer, TooManySessionsIsRefusedWithEdquot) {
    h::Fixture f;
    ASSERT_EQ(set_policy("limit sessions=1\n"), 0);
    auto a = h::client(1, 2, 2);
    ASSERT_TRUE(f.up(a, "one")) << all_logs();
    auto b = h::client(2, 2, 2);  // 10.77.0.2 again, a new session
    expect_refused(b, 0, EDQUOT, Verdict::TooManySessions, f);
    EXPECT_EQ(count_logs("(ip:10.77.0.2 holds 1 sessions, 1 paths, 2 connections)"), 1) << all_logs();
    // Another path of the session it has (to another server address) is
    // no new session.
    auto more = h::sibling(a, 3, 2);
    more.caddr = a.caddr;
    more.saddr = fake::ipv4(10, 79, 0, 1);
    ASSERT_TRUE(f.up(more, "one")) << all_logs();
    EXPECT_EQ(counts(f, a.caddr), "1 2 4");
    // Another address: its own count.
    auto c = h::client(4, 2, 3);
    ASSERT_TRUE(f.up(c, "three")) << all_logs();
    EXPECT_EQ(refusals(Verdict::TooManySessions), 1u);
    EXPECT_TRUE(f.finish());
}

TEST(AdmissionServer, TooManyPathsAndTheCountGoingDownWhenAPathCloses) {
    h::Fixture f;
    ASSERT_EQ(set_policy("limit paths=1\n"), 0);
    auto a = h::client(1, 2, 2);
    ASSERT_TRUE(f.up(a, "first")) << all_logs();
    EXPECT_EQ(counts(f, a.caddr), "1 1 2");
    auto b = h::client(2, 2, 2);
    expect_refused(b, 0, EDQUOT, Verdict::TooManyPaths, f);
    // A mapped form of the same address is the same client.
    auto m = h::client(3, 2, 2);
    m.caddr = v6("::ffff:10.77.0.2");
    expect_refused(m, 0, EDQUOT, Verdict::TooManyPaths, f);
    // The first one leaves: its teardown ends, the count goes down, and
    // the address may have a path again.
    k().cm_event(a.con(0), RTRS_CORE_CM_DISCONNECTED);
    EXPECT_EQ(counts(f, a.caddr), "1 1 2") << "a path counts until its teardown ends";
    k().run();
    EXPECT_EQ(counts(f, a.caddr), "0 0 0");
    auto b2 = h::client(2, 2, 2);
    ASSERT_TRUE(f.up(b2, "second")) << all_logs();
    EXPECT_EQ(counts(f, a.caddr), "1 1 2");
    EXPECT_EQ(refusals(Verdict::TooManyPaths), 2u);
    EXPECT_TRUE(f.finish());
}

TEST(AdmissionServer, TooManyConnectionsIsRefusedAndTheHalfMadePathGoes) {
    h::Fixture f;
    ASSERT_EQ(set_policy("limit connections=3\n"), 0);
    auto a = h::client(1, 2, 2);
    ASSERT_TRUE(f.up(a, "two")) << all_logs();
    auto b = h::client(2, 2, 2);
    ASSERT_EQ(f.connect(b, 0), 0) << "the third connection";
    EXPECT_EQ(counts(f, a.caddr), "2 2 3");
    expect_refused(b, 1, EDQUOT, Verdict::TooManyConnections, f);
    EXPECT_EQ(count_logs("(ip:10.77.0.2 holds 2 sessions, 2 paths, 3 connections)"), 1) << all_logs();
    // The path that cannot be completed stalls and is closed.
    k().advance(26000);
    EXPECT_TRUE(b.con(0)->destroyed);
    EXPECT_EQ(counts(f, a.caddr), "1 1 2");
    k().complete_all_sends(a.con(0));  // (heartbeats meanwhile)
    EXPECT_EQ(refusals(Verdict::TooManyConnections), 1u);
    EXPECT_TRUE(f.finish());
}

TEST(AdmissionServer, TheRateRefusesPastTheBurstAndRefills) {
    h::Fixture f;
    ASSERT_EQ(set_policy("limit rate=2/s burst=3\n"), 0);
    std::vector<h::Client> cs;
    for (int i = 0; i < 8; ++i) cs.push_back(h::client(10 + i, 1, 2));
    for (int i = 0; i < 3; ++i) EXPECT_EQ(f.connect(cs[i], 0), 0) << i;
    expect_refused(cs[3], 0, EAGAIN, Verdict::RateLimited, f);
    // Another address is not slowed by this one.
    auto other = h::client(30, 1, 3);
    EXPECT_EQ(f.connect(other, 0), 0);
    k().advance(499);
    auto again = h::client(13, 1, 2);
    expect_refused(again, 0, EAGAIN, Verdict::RateLimited, f);
    k().advance(1);
    auto next = h::client(14, 1, 2);
    EXPECT_EQ(f.connect(next, 0), 0);
    auto last = h::client(15, 1, 2);
    expect_refused(last, 0, EAGAIN, Verdict::RateLimited, f);
    EXPECT_EQ(refusals(Verdict::RateLimited), 3u);
    EXPECT_TRUE(f.finish());
}

TEST(AdmissionServer, ANameNotAllowedClosesThePathAtItsInfoRequest) {
    h::Fixture f;
    ASSERT_EQ(set_policy("allow 10.77.0.0/24 names=alpha,beta\nallow 10.77.0.3 names=gamma\n"), 0);
    auto a = h::client(1, 2, 2);
    ASSERT_TRUE(f.up(a, "alpha")) << all_logs();
    auto b = h::client(2, 2, 2);
    ASSERT_TRUE(f.connect_all(b));
    ASSERT_TRUE(f.send_info(b, "gamma"));
    k().run();
    EXPECT_EQ(count_logs("ip:10.77.0.2@ip:10.77.0.1: bad info request: the session name is not "
                         "allowed for the client's address ('gamma')"),
              1)
        << all_logs();
    EXPECT_EQ(count_logs("(unnamed): closing path ip:10.77.0.2@ip:10.77.0.1 (admission policy)"), 1)
        << "closed for what it is, not as a protocol error";
    EXPECT_EQ(f.sysfs_sess("gamma"), nullptr);
    EXPECT_TRUE(b.con(0)->destroyed);
    EXPECT_TRUE(b.con(1)->destroyed);
    EXPECT_EQ(f.link_events(RTRS_CORE_LINK_CONNECTED), 1) << "the ULP never heard of it";
    // The longest prefix decides: 10.77.0.3 has its own names.
    auto c = h::client(3, 2, 3);
    ASSERT_TRUE(f.up(c, "gamma")) << all_logs();
    auto d = h::client(4, 2, 3);
    ASSERT_TRUE(f.connect_all(d));
    ASSERT_TRUE(f.send_info(d, "alpha"));
    k().run();
    EXPECT_TRUE(d.con(0)->destroyed);
    auto e = h::client(5, 2, 4);
    ASSERT_TRUE(f.up(e, "beta")) << all_logs();
    EXPECT_EQ(refusals(Verdict::NameNotAllowed), 2u);
    EXPECT_EQ(count_logs("connection request refused"), 0) << "refused at the info request";
    EXPECT_TRUE(f.finish());
}

TEST(AdmissionServer, AnAddressTakenOffTheListBeforeItsInfoRequestIsClosed) {
    h::Fixture f;
    ASSERT_EQ(set_policy("allow 10.77.0.0/24\n"), 0);
    auto a = h::client(1, 2, 2);
    ASSERT_TRUE(f.connect_all(a));
    ASSERT_EQ(set_policy("allow 10.99.0.0/16\n"), 0);
    ASSERT_TRUE(f.send_info(a, "late"));
    k().run();
    EXPECT_EQ(count_logs("bad info request: the client's address is not on the allow-list ('late')"), 1)
        << all_logs();
    EXPECT_TRUE(a.con(0)->destroyed);
    EXPECT_EQ(f.sysfs_sess("late"), nullptr);
    // What is up stays up under a new policy.
    ASSERT_EQ(set_policy(""), 0);
    auto b = h::client(2, 2, 3);
    ASSERT_TRUE(f.up(b, "stays")) << all_logs();
    ASSERT_EQ(set_policy("allow 10.99.0.0/16\n"), 0);
    k().advance(6000);
    k().complete_all_sends(b.con(0));
    EXPECT_NE(f.sysfs_sess("stays"), nullptr);
    EXPECT_FALSE(b.con(0)->destroyed);
    EXPECT_TRUE(f.finish());
}

TEST(AdmissionServer, ABadTextLeavesThePolicyInEffect) {
    {
        // Before the core is up: nothing to set.
        std::string msg;
        EXPECT_EQ(set_policy("allow 10.0.0.0/8", &msg), -ENXIO);
        EXPECT_EQ(msg, "the core is not up");
        char buf[64];
        EXPECT_EQ(rtrs_core_admission_show(buf, sizeof(buf)), -ENXIO);
    }
    h::Fixture f;
    ASSERT_EQ(set_policy("allow 10.77.0.0/24\nlimit paths=4\n"), 0);
    const std::string shown = show_policy();
    std::string msg;
    EXPECT_EQ(set_policy("allow 10.0.0.0/8\nallow 10.78.0.x\nlimit paths=1\n", &msg), -EINVAL);
    EXPECT_EQ(msg, "line 2: bad address '10.78.0.x' (expected IPv4, IPv6, or gid: and a GID in IPv6 notation)");
    EXPECT_EQ(show_policy(), shown);
    EXPECT_EQ(count_logs("admission policy set"), 1);
    // Still the old one: 10.78.0.2 is refused, 10.77.0.2 served.
    auto out = h::client(1, 1, 2);
    out.caddr = fake::ipv4(10, 78, 0, 2);
    expect_refused(out, 0, ECONNREFUSED, Verdict::NotAllowed, f);
    auto in = h::client(2, 1, 2);
    ASSERT_TRUE(f.up(in, "in")) << all_logs();
    // Back to the default with an empty text.
    ASSERT_EQ(set_policy("# nothing\n"), 0);
    auto out2 = h::client(3, 1, 2);
    out2.caddr = fake::ipv4(10, 78, 0, 2);
    ASSERT_TRUE(f.up(out2, "out")) << all_logs();
    // The largest policy there may be fits in RTRS_CORE_ADMISSION_SHOW_MAX
    // when shown (a module parameter's page); one that would not is refused.
    auto gids = [](int names) {
        std::string text;
        for (int i = 0; i < 64; ++i) {
            char line[96];
            std::snprintf(line, sizeof(line), "allow gid:fe80::2:c9ff:fe00:%x", 0x1000 + i);
            text += line;
            for (int n = 0; n < names; ++n)
                text += (n ? "," : " names=") + std::string("s") + std::to_string(i) + "_" + std::to_string(n);
            text += "\n";
        }
        return text + "limit sessions=1000000 paths=1000000 connections=1000000 rate=1000000/m burst=1000000\n";
    };
    EXPECT_EQ(set_policy(gids(6), &msg), -EINVAL);
    const std::string head = "the rules take more than 3840 bytes when shown (";
    const std::string tail = "): use fewer rules or names, or prefixes that cover several";
    EXPECT_EQ(msg.substr(0, head.size()), head) << msg;
    ASSERT_GT(msg.size(), head.size() + tail.size());
    EXPECT_EQ(msg.substr(msg.size() - tail.size()), tail) << msg;
    ASSERT_EQ(set_policy(gids(0), &msg), 0) << msg;
    {
        std::vector<char> page(RTRS_CORE_ADMISSION_SHOW_MAX);
        const int n = rtrs_core_admission_show(page.data(), page.size());
        ASSERT_GT(n, 0);
        EXPECT_NE(std::string(page.data()).find("allow gid:fe80:0000:0000:0000:0002:c9ff:fe00:103f/128\n"),
                  std::string::npos);
    }
    ASSERT_EQ(set_policy("allow 10.77.0.0/24\nlimit paths=4\n"), 0);
    ASSERT_EQ(set_policy(""), 0);
    // A policy that does not fit the caller's buffer is not half shown.
    char small[16];
    EXPECT_EQ(rtrs_core_admission_show(small, sizeof(small)), -ENOSPC);
    // Nor is a failed allocation a half-set policy.
    k().fail_at = k().failure_points;
    EXPECT_EQ(set_policy("allow 10.1.0.0/16\n", &msg), -ENOMEM);
    EXPECT_EQ(msg, "no memory for the policy");
    EXPECT_EQ(show_policy().find("allow 10.1.0.0/16"), std::string::npos) << show_policy();
    EXPECT_NE(show_policy().find("# no allow rule"), std::string::npos) << show_policy();
    EXPECT_TRUE(f.finish());
}

// A policy replaced while a connection request is handled: the request's
// first look (before its session is made, without the server lock) used
// the old policy; its second look, once the session is there, sees the
// new one and refuses, and the session made for it goes unused.
TEST(AdmissionServer, APolicyReplacedDuringAConnectionRequestDecidesItsSecondLook) {
    h::Fixture f;
    ASSERT_EQ(set_policy("allow 10.77.0.0/16\n"), 0);
    auto c = h::client(1, 2, 2);
    bool swapped = false;
    k().on_release = [&](fake::Lock* l) {
        // The request lets go of the server lock to make its session.
        if (l->kind != RTRS_ENV_LOCK_SERVER || !k().held.empty()) return;
        // (Kept alive while it runs: it is this very function.)
        auto self = std::move(k().on_release);
        k().on_release = nullptr;
        EXPECT_EQ(set_policy("allow 10.99.0.0/16\n"), 0);
        swapped = true;
    };
    const auto held_before = Made::now();
    EXPECT_NE(f.connect(c, 0), 0);
    ASSERT_TRUE(swapped);
    EXPECT_TRUE(c.cms[0]->rejected);
    EXPECT_EQ(c.cms[0]->reject_errno, ECONNREFUSED);
    EXPECT_EQ(count_logs("connection request refused: the client's address is not on the allow-list"), 1)
        << all_logs();
    EXPECT_TRUE(k().chunks.empty()) << "the session made meanwhile is freed";
    std::uint64_t sessions = 0, paths = 0;
    rtrs_core_held(&sessions, &paths);
    EXPECT_EQ(sessions, held_before.sessions);
    EXPECT_EQ(paths, held_before.paths);
    EXPECT_EQ(k().cons.size(), 0u);
    EXPECT_TRUE(f.finish());
}

// Two requests of one address race for its last session: the second
// starts and finishes while the first makes its session; the first's
// second look counts it and refuses.
TEST(AdmissionServer, TwoRequestsRacingForTheLastSessionGetOne) {
    h::Fixture f;
    ASSERT_EQ(set_policy("limit sessions=1\n"), 0);
    auto first = h::client(1, 1, 2);
    auto second = h::client(2, 1, 2);
    int second_ret = -1;
    k().on_release = [&](fake::Lock* l) {
        if (l->kind != RTRS_ENV_LOCK_SERVER || !k().held.empty()) return;
        // (Kept alive while it runs: it is this very function.)
        auto self = std::move(k().on_release);
        k().on_release = nullptr;
        second_ret = f.connect(second, 0);
    };
    const int first_ret = f.connect(first, 0);
    EXPECT_EQ(second_ret, 0) << "the second came in while the first made its session";
    EXPECT_NE(first_ret, 0);
    EXPECT_EQ(first.cms[0]->reject_errno, EDQUOT);
    EXPECT_EQ(count_logs("holds as many sessions as its limit allows"), 1) << all_logs();
    EXPECT_EQ(counts(f, first.caddr), "1 1 1");
    EXPECT_EQ(k().chunks.size(), 16u) << "one session's chunks";
    EXPECT_TRUE(f.finish());
}

// A connection request handled while a new policy is being parsed (no
// lock held yet) is decided by the old one; the next, by the new one.
TEST(AdmissionServer, ARequestDuringTheParseOfANewPolicyGetsTheOldOne) {
    h::Fixture f;
    auto during = h::client(1, 1, 2);
    int ret = -1;
    k().on_point = [&](const char* what) {
        if (std::strcmp(what, "alloc") != 0 || !k().held.empty()) return;
        auto self = std::move(k().on_point);
        k().on_point = nullptr;
        ret = f.connect(during, 0);
    };
    ASSERT_EQ(set_policy("allow 10.99.0.0/16\n"), 0);
    EXPECT_EQ(ret, 0) << "the default admitted it";
    auto after = h::client(2, 1, 3);
    expect_refused(after, 0, ECONNREFUSED, Verdict::NotAllowed, f);
    EXPECT_TRUE(f.finish());
}

// Each reason logs through a gate of its own: a flood of one does not
// hide another.
TEST(AdmissionServer, AFloodOfRefusalsDoesNotHideAnotherReason) {
    h::Fixture f;
    ASSERT_EQ(set_policy("allow 10.77.0.0/24\nlimit rate=1/s\n"), 0);
    for (int i = 0; i < 50; ++i) {
        auto c = h::client(100 + i, 1, 2);
        c.caddr = fake::ipv4(10, 78, 0, 2);
        f.connect(c, 0);
    }
    EXPECT_LE(count_logs(core::verdict_reason(Verdict::NotAllowed)), 10);
    EXPECT_EQ(refusals(Verdict::NotAllowed), 50u);
    auto a = h::client(1, 1, 2), b = h::client(2, 1, 2);
    EXPECT_EQ(f.connect(a, 0), 0);
    EXPECT_NE(f.connect(b, 0), 0);
    EXPECT_EQ(count_logs(core::verdict_reason(Verdict::RateLimited)), 1) << all_logs();
    EXPECT_TRUE(f.finish());
}

// One peer's flood of refusals hides no other peer's refusal of the same
// reason: each (address, reason) has its own gate while it is active.
TEST(AdmissionServer, AFloodFromOnePeerDoesNotHideAnotherPeersRefusal) {
    h::Fixture f;
    ASSERT_EQ(set_policy("allow 10.77.0.0/24\n"), 0);
    const std::string line = std::string("connection request refused: ") +
                             core::verdict_reason(Verdict::NotAllowed);
    for (int i = 0; i < 50; ++i) {
        auto c = h::client(100 + i, 1, 2);
        c.caddr = fake::ipv4(10, 78, 0, 2);
        f.connect(c, 0);
    }
    EXPECT_EQ(count_logs(line + " (ip:10.78.0.2)"), 10) << all_logs();
    auto other = h::client(200, 1, 2);
    other.caddr = fake::ipv4(10, 78, 0, 3);
    f.connect(other, 0);
    EXPECT_EQ(count_logs(line + " (ip:10.78.0.3)"), 1) << all_logs();
    // The flooder's next window says how many of its lines went unlogged.
    k().advance(core::LogGate::kWindowMs);
    auto again = h::client(300, 1, 2);
    again.caddr = fake::ipv4(10, 78, 0, 2);
    f.connect(again, 0);
    EXPECT_EQ(count_logs(line + " (ip:10.78.0.2) (and 40 lines before it from the same source "
                                "were not logged: more than 10 in 5 s)"),
              1)
        << all_logs();
    EXPECT_EQ(refusals(Verdict::NotAllowed), 52u);
    EXPECT_TRUE(f.finish());
}

// Bounded, whatever the number of addresses: past kSlots active sources
// the rest share their reason's gate; a source forgotten with lines
// unlogged says so first.
TEST(AdmissionServer, RefusalsFromManyAddressesStayBounded) {
    h::Fixture f;
    ASSERT_EQ(set_policy("allow 10.77.0.0/24\n"), 0);
    const std::string line = std::string("connection request refused: ") +
                             core::verdict_reason(Verdict::NotAllowed);
    // One address past its burst, then 200 others, one request each.
    for (int i = 0; i < 15; ++i) {
        auto c = h::client(100 + i, 1, 2);
        c.caddr = fake::ipv4(10, 79, 0, 1);
        f.connect(c, 0);
    }
    for (int i = 0; i < 200; ++i) {
        auto c = h::client(1000 + i, 1, 2);
        c.caddr = fake::ipv4(10, 80, static_cast<std::uint8_t>(i / 100), static_cast<std::uint8_t>(1 + i % 100));
        f.connect(c, 0);
    }
    const int slots = static_cast<int>(core::RefusalGates::kSlots);
    EXPECT_EQ(count_logs(line), 10 + (slots - 1) + static_cast<int>(core::LogGate::kBurst))
        << all_logs();
    EXPECT_EQ(count_logs("were not logged"), 0);
    // Later, new addresses take the idle slots; the one with unlogged lines
    // says how many first.
    k().advance(core::LogGate::kWindowMs);
    for (int i = 0; i < slots; ++i) {
        auto c = h::client(3000 + i, 1, 2);
        c.caddr = fake::ipv4(10, 81, 0, static_cast<std::uint8_t>(1 + i));
        f.connect(c, 0);
    }
    EXPECT_EQ(count_logs("5 refusals of ip:10.79.0.1 (not-allowed) were not logged"), 1) << all_logs();
    EXPECT_EQ(refusals(Verdict::NotAllowed), 215u + static_cast<unsigned>(slots));
    EXPECT_TRUE(f.finish());
}

// What is connected stays under a new policy, unless the operator asks:
// rtrs_core_admission_close_refused() closes each path the policy in
// effect would refuse now (its address off the list, its session's name
// not allowed for it), handshakes included, and leaves the rest.
TEST(AdmissionServer, ClosingWhatANewPolicyRefusesIsTheOperatorsChoice) {
    h::Fixture f;
    EXPECT_EQ(rtrs_core_admission_close_refused(), 0) << "nothing to close without rules";
    auto a = h::client(1, 2, 2);
    auto b = h::client(2, 2, 3);
    auto c = h::client(3, 2, 4);
    auto d = h::client(4, 2, 5);
    ASSERT_TRUE(f.up(a, "alpha")) << all_logs();
    ASSERT_TRUE(f.up(b, "beta")) << all_logs();
    ASSERT_TRUE(f.up(d, "delta")) << all_logs();
    ASSERT_TRUE(f.connect_all(c));  // no info request yet: a handshake
    ASSERT_EQ(set_policy("allow 10.77.0.2 names=alpha\nallow 10.77.0.3 names=other\nallow 10.77.0.5\n"), 0);
    k().run();
    EXPECT_FALSE(b.con(0)->destroyed) << "a new policy alone closes nothing";
    EXPECT_FALSE(c.con(0)->destroyed);
    const auto refused_before = refusals(Verdict::NameNotAllowed) + refusals(Verdict::NotAllowed);
    EXPECT_EQ(rtrs_core_admission_close_refused(), 2);
    k().run();
    EXPECT_TRUE(b.con(0)->destroyed) << "its name is not allowed any more";
    EXPECT_TRUE(b.con(1)->destroyed);
    EXPECT_TRUE(c.con(0)->destroyed) << "its address is off the list";
    EXPECT_FALSE(a.con(0)->destroyed);
    EXPECT_FALSE(d.con(0)->destroyed);
    EXPECT_NE(f.sysfs_sess("alpha"), nullptr);
    EXPECT_EQ(f.sysfs_sess("beta"), nullptr);
    EXPECT_EQ(count_logs("beta: closing path ip:10.77.0.3@ip:10.77.0.1 (admission policy)"), 1)
        << all_logs();
    EXPECT_EQ(count_logs("(unnamed): closing path ip:10.77.0.4@ip:10.77.0.1 (admission policy)"), 1);
    EXPECT_EQ(refusals(Verdict::NameNotAllowed) + refusals(Verdict::NotAllowed), refused_before)
        << "closes are not refusals";
    EXPECT_EQ(f.link_events(RTRS_CORE_LINK_DISCONNECTED), 1) << "the ULP heard of beta going";
    // Once more: nothing left to close.
    EXPECT_EQ(rtrs_core_admission_close_refused(), 0);
    EXPECT_TRUE(f.finish());
}
