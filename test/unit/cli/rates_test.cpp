// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include "rates.h"

using namespace rtrs_srv;

namespace {

Snapshot one(const std::string& session, const std::string& path, std::optional<Stats> st) {
    Path p;
    p.name = path;
    p.stats.value = st;
    Session s;
    s.name = session;
    s.paths.push_back(p);
    Snapshot snap;
    snap.sessions.push_back(s);
    return snap;
}

}  // namespace

TEST(CliRates, FromTwoSamples) {
    auto a = one("s", "p", Stats{100, 409600, 10, 40960, 1});
    auto b = one("s", "p", Stats{300, 1228800, 15, 61440, 4});
    auto r = compute_rates(a, b, 2.0);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].session, "s");
    EXPECT_EQ(r[0].path, "p");
    EXPECT_DOUBLE_EQ(*r[0].reads, 100.0);
    EXPECT_DOUBLE_EQ(*r[0].read_bytes, 409600.0);
    EXPECT_DOUBLE_EQ(*r[0].writes, 2.5);
    EXPECT_DOUBLE_EQ(*r[0].write_bytes, 10240.0);
    EXPECT_EQ(r[0].inflight, 4);
}

TEST(CliRates, NewPathHasNoRates) {
    auto a = one("s", "p", Stats{1, 1, 1, 1, 0});
    auto b = one("s", "q", Stats{5, 5, 5, 5, 0});
    auto r = compute_rates(a, b, 1.0);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].path, "q");
    EXPECT_FALSE(r[0].reads);
    EXPECT_EQ(r[0].inflight, 0);
}

TEST(CliRates, SamePathNameInAnotherSessionIsAnotherPath) {
    auto a = one("s1", "p", Stats{1, 1, 1, 1, 0});
    auto b = one("s2", "p", Stats{5, 5, 5, 5, 0});
    EXPECT_FALSE(compute_rates(a, b, 1.0)[0].reads);
}

TEST(CliRates, ResetDuringTheIntervalHasNoRates) {
    auto a = one("s", "p", Stats{100, 4096, 0, 0, 0});
    auto b = one("s", "p", Stats{3, 12, 0, 0, 0});
    auto r = compute_rates(a, b, 1.0);
    EXPECT_FALSE(r[0].reads);
    EXPECT_FALSE(r[0].read_bytes);
    EXPECT_FALSE(r[0].writes);
    EXPECT_FALSE(r[0].write_bytes);
}

TEST(CliRates, UnreadableStatsOrNoTimeHaveNoRates) {
    auto a = one("s", "p", std::nullopt);
    auto b = one("s", "p", Stats{3, 12, 0, 0, std::nullopt});
    auto r = compute_rates(a, b, 1.0);
    EXPECT_FALSE(r[0].reads);
    EXPECT_FALSE(r[0].inflight);
    auto r2 = compute_rates(b, a, 1.0);
    EXPECT_FALSE(r2[0].reads);
    EXPECT_FALSE(compute_rates(b, b, 0.0)[0].reads);
}

TEST(CliRates, UnchangedCountersAreZero) {
    auto a = one("s", "p", Stats{7, 7, 7, 7, 0});
    auto r = compute_rates(a, a, 0.5);
    EXPECT_DOUBLE_EQ(*r[0].reads, 0.0);
    EXPECT_DOUBLE_EQ(*r[0].write_bytes, 0.0);
}
