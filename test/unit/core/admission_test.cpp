// SPDX-License-Identifier: GPL-2.0
// Admission (issue 26): the rules' parser, address matching, the limits
// and the rate's token buckets (core/admission.h).
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>
#include <string>

#include "core/admission.h"
#include "fake_env.h"
#include "fake_kernel.h"

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
              "# no allow rule: every address may connect\n# no limit\n"
              "# refused so far: not-allowed=0 sessions=0 paths=0 connections=0 rate=0 name=0\n");
    set("allow 10.0.0.0/8 names=a\nlimit paths=2\n");
    a->admit_connection(v4(11, 0, 0, 1), 0, kNothing);
    rt::StrBuf again(buf, sizeof(buf));
    a->format(again);
    const std::string text = buf;
    EXPECT_EQ(text,
              "allow 10.0.0.0/8 names=a\nlimit paths=2\n"
              "# refused so far: not-allowed=1 sessions=0 paths=0 connections=0 rate=0 name=0\n");
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
