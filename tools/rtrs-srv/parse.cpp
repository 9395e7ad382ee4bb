// SPDX-License-Identifier: GPL-2.0
#include "parse.h"

#include <vector>

namespace rtrs_srv::parse {

namespace {

std::optional<std::string_view> strip_line(std::string_view s) {
    if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
    if (s.empty() || s.find('\n') != s.npos || s.find('\0') != s.npos) return std::nullopt;
    return s;
}

std::optional<std::uint64_t> decimal(std::string_view s, std::uint64_t max) {
    if (s.empty() || s.size() > 20) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        std::uint64_t d = static_cast<std::uint64_t>(c - '0');
        if (v > (max - d) / 10) return std::nullopt;
        v = v * 10 + d;
    }
    return v;
}

std::optional<std::int64_t> signed_decimal(std::string_view s) {
    bool neg = !s.empty() && s.front() == '-';
    if (neg) s.remove_prefix(1);
    // The magnitude of INT64_MIN is one more than INT64_MAX.
    auto v = decimal(s, neg ? static_cast<std::uint64_t>(INT64_MAX) + 1 : INT64_MAX);
    if (!v) return std::nullopt;
    if (!neg) return static_cast<std::int64_t>(*v);
    return *v == 0 ? 0 : -static_cast<std::int64_t>(*v - 1) - 1;
}

}  // namespace

std::optional<std::string> line(std::string_view content) {
    auto s = strip_line(content);
    if (!s) return std::nullopt;
    return std::string(*s);
}

std::optional<std::uint64_t> number(std::string_view content, std::uint64_t max) {
    auto s = strip_line(content);
    if (!s) return std::nullopt;
    return decimal(*s, max);
}

std::optional<Stats> stats(std::string_view content) {
    auto s = strip_line(content);
    if (!s) return std::nullopt;
    std::vector<std::string_view> words;
    std::string_view rest = *s;
    for (;;) {
        auto sp = rest.find(' ');
        words.push_back(rest.substr(0, sp));
        if (sp == rest.npos) break;
        rest.remove_prefix(sp + 1);
    }
    if (words.size() != 4 && words.size() != 5) return std::nullopt;
    Stats st;
    std::uint64_t* counters[] = {&st.read_cnt, &st.read_bytes, &st.write_cnt, &st.write_bytes};
    for (int i = 0; i < 4; ++i) {
        auto v = decimal(words[i], UINT64_MAX);
        if (!v) return std::nullopt;
        *counters[i] = *v;
    }
    if (words.size() == 5) {
        auto v = signed_decimal(words[4]);
        if (!v) return std::nullopt;
        st.inflight = *v;
    }
    return st;
}

std::optional<Latency> latency(std::string_view content) {
    Latency out;
    bool have_ulp = false, have_transport = false;
    while (!content.empty()) {
        auto nl = content.find('\n');
        if (nl == content.npos) return std::nullopt;  // every line ends
        std::string_view l = content.substr(0, nl);
        content.remove_prefix(nl + 1);
        if (!l.empty() && l.front() == '#') continue;
        std::vector<std::string_view> words;
        for (;;) {
            auto sp = l.find(' ');
            words.push_back(l.substr(0, sp));
            if (sp == l.npos) break;
            l.remove_prefix(sp + 1);
        }
        if (words.size() < 5 || words.size() > 4 + 64) return std::nullopt;
        Histogram h;
        std::uint64_t* head[] = {&h.count, &h.sum_us, &h.max_us};
        for (int i = 0; i < 3; ++i) {
            auto v = decimal(words[i + 1], UINT64_MAX);
            if (!v) return std::nullopt;
            *head[i] = *v;
        }
        std::uint64_t total = 0;
        for (std::size_t i = 4; i < words.size(); ++i) {
            auto v = decimal(words[i], UINT64_MAX);
            if (!v || *v > UINT64_MAX - total) return std::nullopt;
            total += *v;
            h.buckets.push_back(*v);
        }
        if (total != h.count) return std::nullopt;
        if (words[0] == "ulp") {
            out.ulp = std::move(h);
            have_ulp = true;
        } else if (words[0] == "transport") {
            out.transport = std::move(h);
            have_transport = true;
        }
    }
    if (!have_ulp || !have_transport) return std::nullopt;
    return out;
}

}  // namespace rtrs_srv::parse
