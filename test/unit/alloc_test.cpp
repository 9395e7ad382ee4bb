// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include "fake_env.h"
#include "rt/alloc.h"

namespace {

struct Widget {
    static inline int constructed = 0;
    static inline int destroyed = 0;
    int a;
    int b;
    Widget(int x, int y) : a(x), b(y) { ++constructed; }
    ~Widget() { ++destroyed; }
};

class AllocTest : public ::testing::Test {
protected:
    void SetUp() override {
        fake_env::reset();
        Widget::constructed = Widget::destroyed = 0;
    }
    void TearDown() override {
        EXPECT_EQ(fake_env::state().live_allocations, 0) << "leak";
        EXPECT_TRUE(fake_env::state().warnings.empty());
    }
};

}  // namespace

TEST_F(AllocTest, MakeOwnConstructsAndFrees) {
    {
        auto w = rt::make_own<Widget>(rt::Gfp::kernel, 3, 4);
        ASSERT_TRUE(w.ok());
        EXPECT_EQ(w.value()->a, 3);
        EXPECT_EQ(w.value()->b, 4);
        EXPECT_EQ(fake_env::state().live_allocations, 1);
        EXPECT_EQ(fake_env::state().last_gfp, RTRS_ENV_GFP_KERNEL);
    }
    EXPECT_EQ(Widget::constructed, 1);
    EXPECT_EQ(Widget::destroyed, 1);
}

TEST_F(AllocTest, FlagsReachTheEnvironment) {
    auto w = rt::make_own<Widget>(rt::Gfp::atomic, 1, 2);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(fake_env::state().last_gfp, RTRS_ENV_GFP_ATOMIC);
}

TEST_F(AllocTest, FailureIsAnErrorAndNoConstructorRuns) {
    fake_env::state().fail_after = 0;
    auto w = rt::make_own<Widget>(rt::Gfp::kernel, 1, 2);
    EXPECT_FALSE(w.ok());
    EXPECT_EQ(w.error(), rt::errc::nomem);
    EXPECT_EQ(Widget::constructed, 0);
}

TEST_F(AllocTest, NewExpressionYieldsNullOnFailure) {
    fake_env::state().fail_after = 0;
    Widget* w = new (rt::Gfp::kernel) Widget(1, 2);
    EXPECT_EQ(w, nullptr);
    EXPECT_EQ(Widget::constructed, 0);
}

TEST_F(AllocTest, ReleaseGivesUpOwnership) {
    Widget* raw = nullptr;
    {
        auto w = rt::make_own<Widget>(rt::Gfp::kernel, 1, 2);
        ASSERT_TRUE(w.ok());
        raw = w.value().release();
    }
    EXPECT_EQ(Widget::destroyed, 0);
    EXPECT_EQ(fake_env::state().live_allocations, 1);
    rt::destroy(raw);
    EXPECT_EQ(Widget::destroyed, 1);
}

TEST_F(AllocTest, MoveAssignmentFreesTheOldObject) {
    auto a = rt::make_own<Widget>(rt::Gfp::kernel, 1, 1);
    auto b = rt::make_own<Widget>(rt::Gfp::kernel, 2, 2);
    ASSERT_TRUE(a.ok() && b.ok());
    rt::Own<Widget> x = rt::move(a).value();
    x = rt::move(b).value();
    EXPECT_EQ(x->a, 2);
    EXPECT_EQ(Widget::destroyed, 1);
    EXPECT_EQ(fake_env::state().live_allocations, 1);
}

TEST_F(AllocTest, DestroyNullIsHarmless) {
    rt::destroy(static_cast<Widget*>(nullptr));
    EXPECT_EQ(Widget::destroyed, 0);
}
