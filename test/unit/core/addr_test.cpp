// SPDX-License-Identifier: GPL-2.0
// Addresses as sysfs shows them; expectations are the kernel's %pI4, %pI6c
// and %pI6 output, written out by hand.
#include <gtest/gtest.h>

#include <string>

#include "core/addr.h"

namespace {

rtrs_core_addr v6(std::initializer_list<int> words, int family = RTRS_CORE_AF_INET6) {
    rtrs_core_addr a{};
    a.family = static_cast<unsigned short>(family);
    int i = 0;
    for (int w : words) {
        a.bytes[2 * i] = static_cast<unsigned char>(w >> 8);
        a.bytes[2 * i + 1] = static_cast<unsigned char>(w);
        ++i;
    }
    return a;
}

std::string fmt(const rtrs_core_addr& a, std::size_t cap = 64) {
    char buf[64];
    core::format_addr(a, buf, cap);
    return buf;
}

}  // namespace

TEST(Addr, Ipv4) {
    rtrs_core_addr a{};
    a.family = RTRS_CORE_AF_INET;
    a.bytes[0] = 10; a.bytes[1] = 77; a.bytes[2] = 0; a.bytes[3] = 255;
    EXPECT_EQ(fmt(a), "ip:10.77.0.255");
}

TEST(Addr, Ipv6Compressed) {
    EXPECT_EQ(fmt(v6({0xfd00, 0, 0, 0, 0, 0, 0, 1})), "ip:fd00::1");
    EXPECT_EQ(fmt(v6({0, 0, 0, 0, 0, 0, 0, 0})), "ip:::");
    EXPECT_EQ(fmt(v6({0, 0, 0, 0, 0, 0, 0, 1})), "ip:::1");
    EXPECT_EQ(fmt(v6({0xfe80, 0, 0, 0, 0x2, 0xc9ff, 0xfe00, 0x1})), "ip:fe80::2:c9ff:fe00:1");
    // A single zero group is not compressed; of two equal runs the first.
    EXPECT_EQ(fmt(v6({1, 0, 2, 3, 4, 5, 6, 7})), "ip:1:0:2:3:4:5:6:7");
    EXPECT_EQ(fmt(v6({1, 0, 0, 2, 0, 0, 3, 4})), "ip:1::2:0:0:3:4");
    EXPECT_EQ(fmt(v6({1, 0, 0, 2, 0, 0, 0, 4})), "ip:1:0:0:2::4");
    EXPECT_EQ(fmt(v6({0xabcd, 0x0bcd, 0x00cd, 0x000d, 0x1000, 0x100, 0x10, 0})),
              "ip:abcd:bcd:cd:d:1000:100:10:0");
    // IPv4-mapped and ISATAP addresses end in dotted quads.
    EXPECT_EQ(fmt(v6({0, 0, 0, 0, 0, 0xffff, 0x0a4d, 0x0001})), "ip:::ffff:10.77.0.1");
    EXPECT_EQ(fmt(v6({0xfe80, 0, 0, 0, 0, 0x5efe, 0xc000, 0x0201})), "ip:fe80::5efe:192.0.2.1");
    EXPECT_EQ(fmt(v6({0xfe80, 0, 0, 0, 0x200, 0x5efe, 0xc000, 0x0201})),
              "ip:fe80::200:5efe:192.0.2.1");
}

TEST(Addr, GidEveryGroup) {
    EXPECT_EQ(fmt(v6({0xfe80, 0, 0, 0, 0x2, 0xc9ff, 0xfe00, 0x1}, RTRS_CORE_AF_IB)),
              "gid:fe80:0000:0000:0000:0002:c9ff:fe00:0001");
}

TEST(Addr, UnknownFamilyAndTruncation) {
    rtrs_core_addr a{};
    a.family = 99;
    EXPECT_EQ(fmt(a), "<unknown address family 99>");
    EXPECT_EQ(fmt(v6({0xfd00, 0, 0, 0, 0, 0, 0, 1}), 6), "ip:fd");
}

TEST(Addr, SameAddressIgnoresFamilyPadding) {
    rtrs_core_addr a{}, b{};
    a.family = b.family = RTRS_CORE_AF_INET;
    a.bytes[0] = b.bytes[0] = 10;
    b.bytes[8] = 1;  // past an IPv4 address
    EXPECT_TRUE(core::same_addr(a, b));
    b.family = RTRS_CORE_AF_INET6;
    EXPECT_FALSE(core::same_addr(a, b));
    // An unknown family is named without its bytes: same name, same address.
    a.family = b.family = 99;
    EXPECT_TRUE(core::same_addr(a, b));
}
