// SPDX-License-Identifier: GPL-2.0
#include "latency.h"

#include <cmath>
#include <cstdio>

namespace rtrs_srv::latency {

double lower_us(std::size_t i) { return i == 0 ? 0.0 : std::ldexp(1.0, static_cast<int>(i)); }
double upper_us(std::size_t i) { return std::ldexp(1.0, static_cast<int>(i) + 1); }

std::optional<double> quantile(const Histogram& h, double q) {
    if (h.count == 0 || h.buckets.empty()) return std::nullopt;
    const double rank = q * static_cast<double>(h.count);
    const double max = static_cast<double>(h.max_us);
    std::uint64_t below = 0;
    for (std::size_t i = 0; i < h.buckets.size(); ++i) {
        const std::uint64_t n = h.buckets[i];
        if (n == 0 || static_cast<double>(below + n) < rank) {
            below += n;
            continue;
        }
        const bool last = i + 1 == h.buckets.size();
        double lo = lower_us(i);
        double hi = last ? std::max(max, lo) : upper_us(i);
        double v = lo + (hi - lo) * (rank - static_cast<double>(below)) / static_cast<double>(n);
        // The max is exact; a bucket's bound is only a bound.
        return v > max ? max : v;
    }
    return max;
}

Histogram since(const Histogram& before, const Histogram& now) {
    if (before.buckets.size() != now.buckets.size()) return now;
    Histogram d;
    d.max_us = now.max_us;
    for (std::size_t i = 0; i < now.buckets.size(); ++i) {
        if (now.buckets[i] < before.buckets[i]) return now;
        d.buckets.push_back(now.buckets[i] - before.buckets[i]);
        d.count += d.buckets.back();
    }
    d.sum_us = now.sum_us >= before.sum_us ? now.sum_us - before.sum_us : now.sum_us;
    return d;
}

std::string duration(double us) {
    char buf[32];
    const char* unit = "us";
    double v = us;
    if (us >= 1e6) {
        v = us / 1e6;
        unit = "s";
    } else if (us >= 1e3) {
        v = us / 1e3;
        unit = "ms";
    }
    if (unit[0] == 'u' || v >= 100)
        std::snprintf(buf, sizeof(buf), "%.0f %s", v, unit);
    else if (v >= 10)
        std::snprintf(buf, sizeof(buf), "%.1f %s", v, unit);
    else
        std::snprintf(buf, sizeof(buf), "%.2f %s", v, unit);
    return buf;
}

std::string summary(const Histogram& h) {
    if (h.count == 0) return "no requests";
    return "p50 " + duration(*quantile(h, 0.5)) + ", p99 " + duration(*quantile(h, 0.99)) +
           ", max " + duration(static_cast<double>(h.max_us)) + " (" + std::to_string(h.count) +
           (h.count == 1 ? " request)" : " requests)");
}

std::string cell(const Histogram& h) {
    if (h.count == 0) return "-";
    auto compact = [](double us) {
        std::string s = duration(us);
        s.erase(s.find(' '), 1);
        return s;
    };
    return compact(*quantile(h, 0.5)) + "/" + compact(*quantile(h, 0.99)) + "/" +
           compact(static_cast<double>(h.max_us));
}

}  // namespace rtrs_srv::latency
