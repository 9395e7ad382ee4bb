// SPDX-License-Identifier: GPL-2.0
// `show`: one session in detail.
#include "format.h"
#include "latency.h"
#include "table.h"
#include "units.h"

namespace rtrs_srv::format {

namespace {

// "- (missing)", "- (Permission denied)", or "- (invalid: "abc\n")".
template <class T>
std::string why(const Field<T>& f) {
    std::string s = "- (" + f.problem;
    if (f.problem == "invalid") {
        constexpr std::size_t max = 60;
        std::string raw = printable(f.raw.substr(0, max));
        s += ": \"" + raw + (f.raw.size() > max ? "\"...)" : "\")");
        return s;
    }
    return s + ")";
}

template <class T, class F>
std::string field(const Field<T>& f, F show) {
    return f.value ? show(*f.value) : why(f);
}

std::string text(const std::string& s) { return printable(s); }

void line(std::string& out, const char* name, const std::string& value) {
    out += "    ";
    out += name;
    out += ':';
    out.append(13 - std::char_traits<char>::length(name), ' ');
    out += value;
    out += '\n';
}

std::string count_line(std::uint64_t cnt, std::uint64_t bytes) {
    return std::to_string(cnt) + (cnt == 1 ? " request, " : " requests, ") +
           std::to_string(bytes) + (bytes == 1 ? " byte (" : " bytes (") + units::bytes(bytes) + ")";
}

}  // namespace

std::string show_text(const Session& s) {
    std::string out = "session: " + printable(s.name) + "\n";
    out += "paths:   " + std::to_string(s.paths.size()) + "\n";
    if (!s.problem.empty()) out += "error:   " + s.problem + "\n";
    for (const auto& p : s.paths) {
        out += "\npath: " + printable(p.name) + "\n";
        line(out, "hca_name", field(p.hca_name, text));
        line(out, "hca_port", field(p.hca_port, [](std::uint32_t v) { return std::to_string(v); }));
        line(out, "src_addr",
             field(p.src_addr, [](const std::string& v) { return printable(v) + " (client)"; }));
        line(out, "dst_addr",
             field(p.dst_addr, [](const std::string& v) { return printable(v) + " (server)"; }));
        if (p.stats.value) {
            const Stats& st = *p.stats.value;
            line(out, "reads", count_line(st.read_cnt, st.read_bytes));
            line(out, "writes", count_line(st.write_cnt, st.write_bytes));
            line(out, "inflight", st.inflight ? std::to_string(*st.inflight)
                                              : "- (not reported by this server)");
        } else {
            std::string w = why(p.stats);
            line(out, "reads", w);
            line(out, "writes", w);
            line(out, "inflight", w);
        }
        // Only where there is a latency file (our server, debugfs mounted).
        if (p.latency.value) {
            line(out, "ulp latency", latency::summary(p.latency.value->ulp));
            line(out, "net latency", latency::summary(p.latency.value->transport));
        } else if (!p.latency.problem.empty() && p.latency.problem != "missing") {
            line(out, "ulp latency", why(p.latency));
            line(out, "net latency", why(p.latency));
        }
    }
    return out;
}

}  // namespace rtrs_srv::format
