// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "fake_env.h"
#include "rt/alloc.h"
#include "rt/refcount.h"

namespace {

struct Shared {
    static inline int freed = 0;
    rt::RefCount ref;
    void add_ref() { ref.get(); }
    void release_ref() {
        if (ref.put()) {
            ++freed;
            rt::destroy(this);
        }
    }
};

class RefCountTest : public ::testing::Test {
protected:
    void SetUp() override {
        fake_env::reset();
        Shared::freed = 0;
    }
    void TearDown() override { EXPECT_EQ(fake_env::state().live_allocations, 0); }
};

}  // namespace

TEST_F(RefCountTest, CountsUpAndDown) {
    rt::RefCount r;
    EXPECT_EQ(r.read(), 1u);
    r.get();
    r.get();
    EXPECT_EQ(r.read(), 3u);
    EXPECT_FALSE(r.put());
    EXPECT_FALSE(r.put());
    EXPECT_TRUE(r.put());
    EXPECT_EQ(r.read(), 0u);
    EXPECT_TRUE(fake_env::state().warnings.empty());
}

TEST_F(RefCountTest, GetUnlessZero) {
    rt::RefCount r;
    EXPECT_TRUE(r.get_unless_zero());
    EXPECT_EQ(r.read(), 2u);
    EXPECT_FALSE(r.put());
    EXPECT_TRUE(r.put());
    EXPECT_FALSE(r.get_unless_zero());
    EXPECT_EQ(r.read(), 0u);
    EXPECT_TRUE(fake_env::state().warnings.empty());
}

TEST_F(RefCountTest, GetOnZeroWarnsAndSaturates) {
    rt::RefCount r(0);
    r.get();
    ASSERT_EQ(fake_env::state().warnings.size(), 1u);
    EXPECT_EQ(r.read(), rt::RefCount::kSaturated);
    // A saturated count never reaches zero again: the object leaks instead
    // of being freed twice.
    EXPECT_FALSE(r.put());
}

TEST_F(RefCountTest, PutBelowZeroWarns) {
    rt::RefCount r(1);
    EXPECT_TRUE(r.put());
    EXPECT_FALSE(r.put());
    EXPECT_EQ(fake_env::state().warnings.size(), 1u);
    EXPECT_EQ(r.read(), rt::RefCount::kSaturated);
}

TEST_F(RefCountTest, ConcurrentGetPutKeepsCount) {
    rt::RefCount r;
    constexpr int kThreads = 4;
    constexpr int kIters = 20000;
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t)
        ts.emplace_back([&] {
            for (int i = 0; i < kIters; ++i) {
                r.get();
                EXPECT_FALSE(r.put());
            }
        });
    for (auto& t : ts) t.join();
    EXPECT_EQ(r.read(), 1u);
    EXPECT_TRUE(r.put());
}

TEST_F(RefCountTest, RefPtrReleasesOnLastReference) {
    Shared* raw = new (rt::Gfp::kernel) Shared();
    ASSERT_NE(raw, nullptr);
    {
        auto a = rt::RefPtr<Shared>::adopt(raw);
        {
            rt::RefPtr<Shared> b = a;
            EXPECT_EQ(raw->ref.read(), 2u);
            rt::RefPtr<Shared> c = rt::move(b);
            EXPECT_FALSE(b);
            EXPECT_EQ(raw->ref.read(), 2u);
        }
        EXPECT_EQ(raw->ref.read(), 1u);
        EXPECT_EQ(Shared::freed, 0);
    }
    EXPECT_EQ(Shared::freed, 1);
}
