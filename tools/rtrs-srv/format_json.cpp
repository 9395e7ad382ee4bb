// SPDX-License-Identifier: GPL-2.0
// -j/--json output of list and show.
#include "format.h"
#include "json.h"

namespace rtrs_srv::format {

namespace {

template <class T>
void error_member(JsonWriter& j, const char* file, const Field<T>& f) {
    if (!f.value) j.member(file, f.problem);
}

void path_json(JsonWriter& j, const Path& p, bool detail) {
    const auto& st = p.stats.value;
    auto counter = [&](std::uint64_t Stats::*m) -> std::optional<std::uint64_t> {
        if (!st) return std::nullopt;
        return (*st).*m;
    };
    j.begin_object();
    j.member("path", p.name);
    j.member("hca_name", p.hca_name.value);
    j.member("hca_port", p.hca_port.value);
    j.member("src_addr", p.src_addr.value);
    j.member("dst_addr", p.dst_addr.value);
    j.member("read_cnt", counter(&Stats::read_cnt));
    j.member("read_bytes", counter(&Stats::read_bytes));
    j.member("write_cnt", counter(&Stats::write_cnt));
    j.member("write_bytes", counter(&Stats::write_bytes));
    j.member("inflight", st ? st->inflight : std::nullopt);
    if (detail) {
        j.key("errors").begin_object();
        error_member(j, "hca_name", p.hca_name);
        error_member(j, "hca_port", p.hca_port);
        error_member(j, "src_addr", p.src_addr);
        error_member(j, "dst_addr", p.dst_addr);
        error_member(j, "stats/rdma", p.stats);
        j.end_object();
    }
    j.end_object();
}

}  // namespace

std::string json(const std::vector<Session>& sessions, bool pretty, bool detail) {
    JsonWriter j(pretty);
    j.begin_array();
    for (const auto& s : sessions) {
        j.begin_object();
        j.member("session", s.name);
        j.key("paths").begin_array();
        for (const auto& p : s.paths) path_json(j, p, detail);
        j.end_array();
        if (detail) {
            j.key("error");
            if (s.problem.empty())
                j.null();
            else
                j.string(s.problem);
        }
        j.end_object();
    }
    j.end_array();
    std::string out = j.str();
    if (out.empty() || out.back() != '\n') out += '\n';
    return out;
}

}  // namespace rtrs_srv::format
