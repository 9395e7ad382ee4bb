// SPDX-License-Identifier: GPL-2.0
// The list and watch tables.
#include "format.h"
#include "latency.h"
#include "table.h"
#include "units.h"

namespace rtrs_srv::format {

namespace {

constexpr const char* absent = "-";

template <class T, class F>
std::string or_absent(const std::optional<T>& v, F f) {
    return v ? f(*v) : std::string(absent);
}

}  // namespace

std::string hca(const Path& p) {
    if (!p.hca_name.value && !p.hca_port.value) return absent;
    return (p.hca_name.value ? printable(*p.hca_name.value) : std::string(absent)) + "/" +
           (p.hca_port.value ? std::to_string(*p.hca_port.value) : std::string(absent));
}

std::string count_and_bytes(const std::optional<Stats>& s, bool reads) {
    if (!s) return absent;
    std::uint64_t cnt = reads ? s->read_cnt : s->write_cnt;
    std::uint64_t bytes = reads ? s->read_bytes : s->write_bytes;
    return std::to_string(cnt) + " (" + units::bytes(bytes) + ")";
}

std::string list_table(const Snapshot& snap) {
    Table t;
    t.column("SESSION");
    t.column("PATH");
    t.column("HCA");
    t.column("READS");
    t.column("WRITES");
    t.column("INFLIGHT", Table::Align::right);
    for (const auto& s : snap.sessions) {
        if (s.paths.empty()) t.row({printable(s.name), absent, absent, absent, absent, absent});
        for (const auto& p : s.paths) {
            const auto& st = p.stats.value;
            std::optional<std::int64_t> inflight;
            if (st) inflight = st->inflight;
            t.row({printable(s.name), printable(p.name), hca(p), count_and_bytes(st, true),
                   count_and_bytes(st, false),
                   or_absent(inflight, [](std::int64_t v) { return std::to_string(v); })});
        }
    }
    return t.render();
}

std::string watch_table(const std::vector<PathRates>& rates) {
    Table t;
    t.column("SESSION");
    t.column("PATH");
    t.column("READS/S", Table::Align::right);
    t.column("READ-B/S", Table::Align::right);
    t.column("WRITES/S", Table::Align::right);
    t.column("WRITE-B/S", Table::Align::right);
    t.column("INFLIGHT", Table::Align::right);
    // The latency columns only when some path has a latency file (or one
    // that root alone may read).
    bool lat = false;
    for (const auto& r : rates) lat = lat || r.latency || !r.latency_problem.empty();
    if (lat) {
        t.column("ULP P50/P99/MAX", Table::Align::right);
        t.column("NET P50/P99/MAX", Table::Align::right);
    }
    for (const auto& r : rates) {
        std::vector<std::string> row{
            printable(r.session), printable(r.path), or_absent(r.reads, units::count_rate),
            or_absent(r.read_bytes, units::byte_rate), or_absent(r.writes, units::count_rate),
            or_absent(r.write_bytes, units::byte_rate),
            or_absent(r.inflight, [](std::int64_t v) { return std::to_string(v); })};
        if (lat) {
            row.push_back(r.latency ? latency::cell(r.latency->ulp) : absent);
            row.push_back(r.latency ? latency::cell(r.latency->transport) : absent);
        }
        t.row(std::move(row));
    }
    return t.render();
}

}  // namespace rtrs_srv::format
