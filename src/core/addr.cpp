// SPDX-License-Identifier: GPL-2.0
#include "core/addr.h"

#include "rt/strbuf.h"

namespace core {

namespace {

rt::u16 word(const rtrs_core_addr& a, int i) {
    return static_cast<rt::u16>((a.bytes[2 * i] << 8) | a.bytes[2 * i + 1]);
}

void put_ipv4(rt::StrBuf& out, const unsigned char* b) {
    for (int i = 0; i < 4; ++i) {
        if (i) out.put('.');
        out.dec(rt::u64{b[i]});
    }
}

// IPv6 with the longest run of two or more zero groups (the first of equal
// ones) written "::", groups without leading zeros; IPv4-mapped
// (::ffff:a.b.c.d) and ISATAP (...:0:5efe:a.b.c.d, or 200:5efe) addresses
// end in the dotted IPv4 form.
void put_ipv6(rt::StrBuf& out, const rtrs_core_addr& a) {
    bool mapped = true;
    for (int i = 0; i < 5; ++i) mapped = mapped && word(a, i) == 0;
    mapped = mapped && word(a, 5) == 0xffff;
    const bool isatap = (word(a, 4) | 0x0200) == 0x0200 && word(a, 5) == 0x5efe;
    const int groups = mapped || isatap ? 6 : 8;

    int best = -1, best_len = 1;
    for (int i = 0; i < groups; ++i) {
        int n = 0;
        while (i + n < groups && word(a, i + n) == 0) ++n;
        if (n > best_len) {
            best = i;
            best_len = n;
        }
    }
    bool colon = false;
    for (int i = 0; i < groups; ++i) {
        if (i == best) {
            if (colon || i == 0) out.put(':');
            out.put(':');
            colon = false;
            i += best_len - 1;
            continue;
        }
        if (colon) out.put(':');
        out.hex(word(a, i));
        colon = true;
    }
    if (groups == 6) {
        if (colon) out.put(':');
        put_ipv4(out, a.bytes + 12);
    }
}

}  // namespace

rt::usize format_addr(const rtrs_core_addr& a, char* buf, rt::usize cap) {
    rt::StrBuf out(buf, cap);
    switch (a.family) {
    case RTRS_CORE_AF_INET:
        out.put("ip:");
        put_ipv4(out, a.bytes);
        break;
    case RTRS_CORE_AF_INET6:
        out.put("ip:");
        put_ipv6(out, a);
        break;
    case RTRS_CORE_AF_IB:
        out.put("gid:");
        for (int i = 0; i < 8; ++i) {
            if (i) out.put(':');
            out.hex(word(a, i), 4);
        }
        break;
    default:
        out.put("<unknown address family ").dec(rt::u64{a.family}).put('>');
        break;
    }
    return out.len();
}

// As the names tell them apart: an unknown family has no address bytes.
bool same_addr(const rtrs_core_addr& a, const rtrs_core_addr& b) {
    if (a.family != b.family) return false;
    int n = 0;
    switch (a.family) {
    case RTRS_CORE_AF_INET: n = 4; break;
    case RTRS_CORE_AF_INET6:
    case RTRS_CORE_AF_IB: n = 16; break;
    }
    for (int i = 0; i < n; ++i)
        if (a.bytes[i] != b.bytes[i]) return false;
    return true;
}

}  // namespace core
