// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include <vector>

#include "fake_env.h"
#include "rt/list.h"

namespace {

struct ByAge;
struct ByName;

struct Item : rt::ListLink<ByAge>, rt::ListLink<ByName> {
    explicit Item(int v) : value(v) {}
    int value;
};

using AgeList = rt::List<Item, ByAge>;
using NameList = rt::List<Item, ByName>;

std::vector<int> values(AgeList& l) {
    std::vector<int> out;
    for (Item& i : l) out.push_back(i.value);
    return out;
}

class ListTest : public ::testing::Test {
protected:
    void SetUp() override { fake_env::reset(); }
};

}  // namespace

TEST_F(ListTest, PushPopOrder) {
    Item a(1), b(2), c(3);
    AgeList l;
    EXPECT_TRUE(l.empty());
    l.push_back(a);
    l.push_back(b);
    l.push_front(c);
    EXPECT_EQ(values(l), (std::vector<int>{3, 1, 2}));
    EXPECT_EQ(l.size(), 3u);
    EXPECT_EQ(l.front(), &c);
    EXPECT_EQ(l.back(), &b);
    EXPECT_EQ(l.pop_front(), &c);
    EXPECT_EQ(l.pop_front(), &a);
    EXPECT_EQ(l.pop_front(), &b);
    EXPECT_EQ(l.pop_front(), nullptr);
    EXPECT_TRUE(l.empty());
    EXPECT_TRUE(fake_env::state().warnings.empty());
}

TEST_F(ListTest, RemoveFromMiddleAndLinkedState) {
    Item a(1), b(2), c(3);
    AgeList l;
    l.push_back(a);
    l.push_back(b);
    l.push_back(c);
    EXPECT_TRUE(static_cast<rt::ListLink<ByAge>&>(b).linked());
    l.remove(b);
    EXPECT_FALSE(static_cast<rt::ListLink<ByAge>&>(b).linked());
    EXPECT_FALSE(l.contains(b));
    EXPECT_TRUE(l.contains(a));
    EXPECT_EQ(values(l), (std::vector<int>{1, 3}));
    l.remove(a);
    l.remove(c);
    EXPECT_TRUE(l.empty());
}

TEST_F(ListTest, OneElementOnTwoListsAtOnce) {
    Item a(1), b(2);
    AgeList ages;
    NameList names;
    ages.push_back(a);
    ages.push_back(b);
    names.push_back(b);
    names.push_back(a);
    EXPECT_EQ(ages.front(), &a);
    EXPECT_EQ(names.front(), &b);
    ages.remove(a);
    EXPECT_EQ(names.size(), 2u);
    names.remove(a);
    names.remove(b);
    ages.remove(b);
    EXPECT_TRUE(fake_env::state().warnings.empty());
}

TEST_F(ListTest, ForEachSafeMayUnlinkCurrent) {
    Item items[5] = {Item(0), Item(1), Item(2), Item(3), Item(4)};
    AgeList l;
    for (Item& i : items) l.push_back(i);
    l.for_each_safe([&](Item& i) {
        if (i.value % 2 == 0) l.remove(i);
    });
    EXPECT_EQ(values(l), (std::vector<int>{1, 3}));
    l.for_each_safe([&](Item& i) { l.remove(i); });
    EXPECT_TRUE(l.empty());
}

TEST_F(ListTest, RemovingAnUnlinkedElementWarns) {
    Item a(1);
    AgeList l;
    l.remove(a);
    ASSERT_EQ(fake_env::state().warnings.size(), 1u);
    EXPECT_NE(fake_env::state().warnings[0].find("unlinked"), std::string::npos);
}

TEST_F(ListTest, DestroyingWhileLinkedWarns) {
    {
        Item a(1);
        {
            AgeList l;
            l.push_back(a);
        }  // the list goes while `a` is on it
        ASSERT_EQ(fake_env::state().warnings.size(), 1u);
        EXPECT_NE(fake_env::state().warnings[0].find("List destroyed while not empty"),
                  std::string::npos);
    }
    EXPECT_EQ(fake_env::state().warnings.size(), 1u) << "one mistake, one report";

}

TEST_F(ListTest, ElementDestroyedWhileLinkedWarnsAndLeavesTheListSound) {
    AgeList l;
    Item b(2);
    l.push_back(b);
    {
        Item a(1);
        l.push_back(a);
    }  // `a` goes while on the list
    ASSERT_EQ(fake_env::state().warnings.size(), 1u);
    EXPECT_NE(fake_env::state().warnings[0].find("ListLink destroyed while still on a list"),
              std::string::npos);
    EXPECT_EQ(l.size(), 1u);
    EXPECT_EQ(l.back(), &b);
    l.remove(b);
    EXPECT_EQ(fake_env::state().warnings.size(), 1u);
}

// A second insert is reported and ignored: the element stays where it was,
// and the list is not corrupted.
TEST(List, DoubleInsertIsReportedAndIgnored) {
    fake_env::reset();
    Item a(1), b(2);
    AgeList l;
    l.push_back(a);
    l.push_back(b);
    l.push_back(a);
    ASSERT_EQ(fake_env::state().warnings.size(), 1u);
    EXPECT_NE(fake_env::state().warnings[0].find("already on a list"), std::string::npos);
    EXPECT_EQ(l.size(), 2u);
    EXPECT_EQ(l.front(), &a);
    EXPECT_EQ(l.back(), &b);
    l.remove(a);
    l.remove(b);
    EXPECT_TRUE(l.empty());
}
