// SPDX-License-Identifier: GPL-2.0
#include "units.h"

#include <cmath>
#include <cstdio>

namespace rtrs_srv::units {

namespace {

constexpr const char* unit_names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

// Exact: tenths of n / 1024^k, rounded half up, in 128 bits.
unsigned __int128 tenths(std::uint64_t n, int k) {
    unsigned __int128 div = static_cast<unsigned __int128>(1) << (10 * k);
    return (static_cast<unsigned __int128>(n) * 10 + div / 2) / div;
}

std::string tenths_str(unsigned __int128 t, const char* unit) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%llu.%u %s", static_cast<unsigned long long>(t / 10),
                  static_cast<unsigned>(t % 10), unit);
    return buf;
}

}  // namespace

std::string bytes(std::uint64_t n) {
    if (n < 1024) return std::to_string(n) + " B";
    int k = 1;
    while (k < 6 && tenths(n, k) >= 10240) ++k;
    return tenths_str(tenths(n, k), unit_names[k]);
}

std::string byte_rate(double r) {
    if (!(r >= 0) || !std::isfinite(r)) r = 0;
    // Rounded to whole bytes, then shown as a size; beyond 2^64 B/s (not
    // a rate a host reaches) it saturates.
    double rounded = std::floor(r + 0.5);
    std::uint64_t n = rounded >= 18446744073709551615.0 ? UINT64_MAX
                                                        : static_cast<std::uint64_t>(rounded);
    return bytes(n) + "/s";
}

std::string count_rate(double r) {
    if (!(r >= 0) || !std::isfinite(r)) r = 0;
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.1f", r);
    return buf;
}

}  // namespace rtrs_srv::units
