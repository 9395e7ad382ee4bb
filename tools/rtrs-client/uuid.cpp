// SPDX-License-Identifier: GPL-2.0
#include "uuid.h"

#include <sys/random.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace rc {

wire::Uuid random_uuid() {
    wire::Uuid u{};
    size_t got = 0;
    while (got < sizeof(u.b)) {
        const ssize_t n = getrandom(u.b + got, sizeof(u.b) - got, 0);
        if (n <= 0) {
            std::perror("getrandom");
            std::abort();
        }
        got += static_cast<size_t>(n);
    }
    u.b[6] = static_cast<uint8_t>((u.b[6] & 0x0f) | 0x40);  // version 4
    u.b[8] = static_cast<uint8_t>((u.b[8] & 0x3f) | 0x80);  // RFC 4122 variant
    return u;
}

std::string format_uuid(const wire::Uuid& u) {
    std::string s;
    char hex[3];
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
        std::snprintf(hex, sizeof(hex), "%02x", u.b[i]);
        s += hex;
    }
    return s;
}

bool parse_uuid(const std::string& s, wire::Uuid* out) {
    wire::Uuid u{};
    size_t n = 0;
    for (char ch : s) {
        if (ch == '-') continue;
        int v;
        if (ch >= '0' && ch <= '9') v = ch - '0';
        else if (ch >= 'a' && ch <= 'f') v = ch - 'a' + 10;
        else if (ch >= 'A' && ch <= 'F') v = ch - 'A' + 10;
        else return false;
        if (n >= 32) return false;
        u.b[n / 2] = static_cast<uint8_t>(u.b[n / 2] | (n % 2 ? v : v << 4));
        ++n;
    }
    if (n != 32) return false;
    *out = u;
    return true;
}

}  // namespace rc
