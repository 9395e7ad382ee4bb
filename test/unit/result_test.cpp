// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include "fake_env.h"
#include "rt/alloc.h"
#include "rt/errno.h"
#include "rt/result.h"

namespace {

rt::Result<int> parse_digit(char c) {
    if (c < '0' || c > '9') return rt::err(rt::errc::inval);
    return c - '0';
}

rt::Result<int> sum_two(char a, char b) {
    int x = RT_TRY(parse_digit(a));
    int y = RT_TRY(parse_digit(b));
    return x + y;
}

rt::Result<void> check_positive(int v) {
    if (v <= 0) return rt::err(rt::errc::range);
    return {};
}

rt::Result<void> check_both(int a, int b) {
    RT_TRY(check_positive(a));
    RT_TRY(check_positive(b));
    return {};
}

// Counts live instances, to prove Result runs destructors exactly once.
struct Tracked {
    static inline int live = 0;
    int v;
    explicit Tracked(int x) : v(x) { ++live; }
    Tracked(Tracked&& o) : v(o.v) { ++live; }
    ~Tracked() { --live; }
};

rt::Result<Tracked> make_tracked(int v) {
    if (v < 0) return rt::err(rt::errc::inval);
    return Tracked(v);
}

}  // namespace

TEST(Result, HoldsValue) {
    auto r = parse_digit('7');
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.error(), 0);
    EXPECT_EQ(r.value(), 7);
}

TEST(Result, HoldsError) {
    auto r = parse_digit('x');
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.error(), rt::errc::inval);
    EXPECT_EQ(rt::to_neg_errno(r), -rt::errc::inval);
}

TEST(Result, TryPropagatesFirstErrorAndValues) {
    EXPECT_EQ(sum_two('3', '4').value(), 7);
    EXPECT_EQ(sum_two('a', '4').error(), rt::errc::inval);
    EXPECT_EQ(sum_two('3', 'b').error(), rt::errc::inval);
}

TEST(Result, VoidResult) {
    EXPECT_TRUE(check_both(1, 2).ok());
    EXPECT_EQ(check_both(1, 0).error(), rt::errc::range);
    EXPECT_EQ(check_both(-1, 5).error(), rt::errc::range);
}

TEST(Result, DestroysItsValueOnce) {
    Tracked::live = 0;
    {
        auto r = make_tracked(5);
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(r.value().v, 5);
        EXPECT_EQ(Tracked::live, 1);
        auto moved = rt::move(r);
        EXPECT_EQ(moved.value().v, 5);
    }
    EXPECT_EQ(Tracked::live, 0);
    {
        auto r = make_tracked(-1);
        EXPECT_FALSE(r.ok());
        EXPECT_EQ(Tracked::live, 0);
    }
    EXPECT_EQ(Tracked::live, 0);
}

// Reading the value of an error is a bug: reported, and what comes back is
// the type's all-zero state (a null pointer here), not garbage.
TEST(Result, ValueOfAnErrorIsReportedAndZero) {
    fake_env::reset();
    rt::Result<int*> r(rt::err(rt::errc::inval));
    EXPECT_EQ(r.value(), nullptr);
    ASSERT_EQ(fake_env::state().warnings.size(), 1u);
    EXPECT_NE(fake_env::state().warnings[0].find("value() on an error"), std::string::npos);
}

TEST(Result, NonPositiveErrnoIsReportedAndBecomesEinval) {
    fake_env::reset();
    rt::Result<int> r(rt::err(0));
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.error(), rt::errc::inval);
    rt::Result<void> v(rt::err(-5));
    EXPECT_EQ(v.error(), rt::errc::inval);
    EXPECT_EQ(fake_env::state().warnings.size(), 2u);
}
