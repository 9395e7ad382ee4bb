// SPDX-License-Identifier: GPL-2.0
#include "rates.h"

#include "latency.h"

#include <map>
#include <utility>

namespace rtrs_srv {

namespace {

std::optional<double> rate(std::uint64_t before, std::uint64_t now, double seconds) {
    if (now < before) return std::nullopt;
    return static_cast<double>(now - before) / seconds;
}

}  // namespace

std::vector<PathRates> compute_rates(const Snapshot& prev, const Snapshot& cur, double seconds) {
    std::map<std::pair<std::string, std::string>, const Stats*> before;
    std::map<std::pair<std::string, std::string>, const Latency*> lat_before;
    for (const auto& s : prev.sessions)
        for (const auto& p : s.paths) {
            if (p.stats.value) before[{s.name, p.name}] = &*p.stats.value;
            if (p.latency.value) lat_before[{s.name, p.name}] = &*p.latency.value;
        }

    std::vector<PathRates> out;
    for (const auto& s : cur.sessions) {
        for (const auto& p : s.paths) {
            PathRates r;
            r.session = s.name;
            r.path = p.name;
            if (p.stats.value) r.inflight = p.stats.value->inflight;
            if (p.latency.value) {
                auto lb = lat_before.find({s.name, p.name});
                Latency l = *p.latency.value;
                if (lb != lat_before.end()) {
                    l.ulp = latency::since(lb->second->ulp, l.ulp);
                    l.transport = latency::since(lb->second->transport, l.transport);
                }
                r.latency = std::move(l);
            } else if (!p.latency.problem.empty() && p.latency.problem != "missing") {
                r.latency_problem = p.latency.problem;
            }
            auto it = before.find({s.name, p.name});
            if (p.stats.value && it != before.end() && seconds > 0) {
                const Stats& a = *it->second;
                const Stats& b = *p.stats.value;
                auto reads = rate(a.read_cnt, b.read_cnt, seconds);
                auto rbytes = rate(a.read_bytes, b.read_bytes, seconds);
                auto writes = rate(a.write_cnt, b.write_cnt, seconds);
                auto wbytes = rate(a.write_bytes, b.write_bytes, seconds);
                // A reset zeroes all four counters at once: if any went
                // back, none of the four differences means anything.
                if (reads && rbytes && writes && wbytes) {
                    r.reads = reads;
                    r.read_bytes = rbytes;
                    r.writes = writes;
                    r.write_bytes = wbytes;
                }
            }
            out.push_back(std::move(r));
        }
    }
    return out;
}

}  // namespace rtrs_srv
