// SPDX-License-Identifier: GPL-2.0
// The core spells errno values out; each must be the platform's.
#include <cerrno>

#include <gtest/gtest.h>

#include "rt/errno.h"

TEST(Errno, EveryValueMatchesTheSystemHeader) {
    int checked = 0;
#define CHECK_ONE(macro, name, value)                     \
    EXPECT_EQ(macro, value) << #macro;                    \
    EXPECT_EQ(macro, rt::errc::name) << #macro;           \
    ++checked;
    RT_ERRNO_LIST(CHECK_ONE)
#undef CHECK_ONE
    EXPECT_GE(checked, 20);
}
