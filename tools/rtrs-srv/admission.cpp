// SPDX-License-Identifier: GPL-2.0
#include "admission.h"

#include <cerrno>
#include <cstdlib>

#include "core_admission.h"
#include "json.h"
#include "table.h"

namespace rtrs_srv::admission {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        std::size_t end = s.find(sep, start);
        out.push_back(s.substr(start, end == s.npos ? s.npos : end - start));
        if (end == s.npos) return out;
        start = end + 1;
    }
}

bool starts_with(const std::string& s, const char* prefix) {
    return s.compare(0, std::char_traits<char>::length(prefix), prefix) == 0;
}

// A decimal number of at most `max`.
std::optional<std::uint64_t> number(const std::string& s, std::uint64_t max) {
    if (s.empty() || s.size() > 20) return std::nullopt;
    for (char c : s)
        if (c < '0' || c > '9') return std::nullopt;
    errno = 0;
    unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
    if (errno || v > max) return std::nullopt;
    return v;
}

// One canonical rule (core::Policy::format()'s words) into p.
bool read_rule(const std::string& line, Policy& p) {
    const auto w = split(line, ' ');
    if (w[0] == "allow" && (w.size() == 2 || w.size() == 3) && !w[1].empty()) {
        Allow a;
        a.network = w[1];
        if (w.size() == 3) {
            if (!starts_with(w[2], "names=")) return false;
            a.names = split(w[2].substr(6), ',');
        }
        p.allow.push_back(std::move(a));
        return true;
    }
    if (w[0] != "limit" || w.size() < 2) return false;
    for (std::size_t i = 1; i < w.size(); ++i) {
        const std::size_t eq = w[i].find('=');
        if (eq == std::string::npos) return false;
        const std::string key = w[i].substr(0, eq), value = w[i].substr(eq + 1);
        if (key == "rate") {
            p.limits.rate = value;
            continue;
        }
        auto n = number(value, UINT32_MAX);
        if (!n) return false;
        auto v = static_cast<std::uint32_t>(*n);
        if (key == "sessions") p.limits.sessions = v;
        else if (key == "paths") p.limits.paths = v;
        else if (key == "connections") p.limits.connections = v;
        else if (key == "burst") p.limits.burst = v;
        else return false;
    }
    return true;
}

}  // namespace

std::string Allow::family() const {
    if (starts_with(network, "gid:")) return "gid";
    return network.find(':') == std::string::npos ? "ipv4" : "ipv6";
}

std::optional<Policy> parse_rules(const std::string& text, std::string& error) {
    std::string rules(core_admission::kRulesCap, '\0');
    std::string msg(core_admission::kMessageCap, '\0');
    if (!core_admission::canonical(text.data(), text.size(), rules.data(), msg.data())) {
        error = msg.c_str();
        return std::nullopt;
    }
    rules.resize(rules.find('\0'));
    Policy p;
    std::size_t start = 0;
    while (start < rules.size()) {
        std::size_t end = rules.find('\n', start);
        if (end == std::string::npos) end = rules.size();
        p.rules.push_back(rules.substr(start, end - start));
        start = end + 1;
    }
    for (const auto& r : p.rules) {
        if (!read_rule(r, p)) {
            // The core printed what this tool does not know: a newer core?
            error = "a rule the tool does not understand: " + r;
            return std::nullopt;
        }
    }
    return p;
}

std::optional<State> parse_shown(const std::string& text, std::string& error) {
    if (text.empty()) {
        error = "it is empty (the module is being loaded or unloaded)";
        return std::nullopt;
    }
    const char* const head = "# refused so far:";
    const std::size_t eol = text.find('\n');
    const std::string first = text.substr(0, eol);
    if (!starts_with(first, head)) {
        error = "it does not begin with \"" + std::string(head) + "\"";
        return std::nullopt;
    }
    State s;
    for (const auto& w : split(first.substr(std::char_traits<char>::length(head)), ' ')) {
        if (w.empty()) continue;
        const std::size_t eq = w.find('=');
        std::optional<std::uint64_t> n;
        if (eq != std::string::npos && eq > 0) n = number(w.substr(eq + 1), UINT64_MAX);
        if (!n) {
            error = "a refusal count that is not REASON=N: \"" + w + "\"";
            return std::nullopt;
        }
        s.refused.emplace_back(w.substr(0, eq), *n);
    }
    // The rest is rules (and comments) that the core reads back.
    std::string why;
    auto p = parse_rules(text, why);
    if (!p) {
        error = "its rules do not parse: " + why;
        return std::nullopt;
    }
    s.policy = std::move(*p);
    return s;
}

std::string reason_words(const std::string& reason) {
    const char* w = core_admission::reason_words(reason.c_str());
    return w ? w : "";
}

std::string table(const State& s) {
    const Policy& p = s.policy;
    std::string out;
    if (!p.allow_list()) {
        out += "allow-list: off (no allow rule): every address may connect\n";
    } else {
        out += "allow-list: on, " + std::to_string(p.allow.size()) +
               (p.allow.size() == 1 ? " entry" : " entries") +
               ": an address on none is refused, the longest matching network decides\n";
        Table t;
        t.column("NETWORK");
        t.column("NAMES");
        for (const auto& a : p.allow) {
            std::string names;
            for (const auto& n : a.names) names += (names.empty() ? "" : ",") + printable(n);
            t.row({printable(a.network), a.names.empty() ? "any name" : names});
        }
        out += t.render();
    }
    out += '\n';
    Table l;
    l.column("LIMIT");
    l.column("VALUE", Table::Align::right);
    auto n = [](const std::optional<std::uint32_t>& v) { return v ? std::to_string(*v) : "none"; };
    const Limits& lim = p.limits;
    l.row({"sessions", n(lim.sessions)});
    l.row({"paths", n(lim.paths)});
    l.row({"connections", n(lim.connections)});
    l.row({"rate", lim.rate ? printable(*lim.rate) : "none"});
    l.row({"burst", n(lim.burst)});
    out += l.render();
    out += '\n';
    Table r;
    r.column("REFUSED");
    r.column("COUNT", Table::Align::right);
    r.column("WHY");
    for (const auto& [reason, count] : s.refused)
        r.row({printable(reason), std::to_string(count), reason_words(reason)});
    out += r.render();
    return out;
}

std::string json(const State& s, bool pretty) {
    const Policy& p = s.policy;
    JsonWriter j(pretty);
    j.begin_object();
    j.member("allow_list", p.allow_list());
    j.key("allow").begin_array();
    for (const auto& a : p.allow) {
        j.begin_object();
        j.member("network", a.network);
        j.member("family", a.family());
        j.key("names");
        if (a.names.empty()) {
            j.null();
        } else {
            j.begin_array();
            for (const auto& n : a.names) j.string(n);
            j.end_array();
        }
        j.end_object();
    }
    j.end_array();
    j.key("limits").begin_object();
    j.member("sessions", p.limits.sessions);
    j.member("paths", p.limits.paths);
    j.member("connections", p.limits.connections);
    j.member("rate", p.limits.rate);
    j.member("burst", p.limits.burst);
    j.end_object();
    j.key("refused").begin_object();
    for (const auto& [reason, count] : s.refused) j.member(reason, count);
    j.end_object();
    j.key("rules").begin_array();
    for (const auto& r : p.rules) j.string(r);
    j.end_array();
    j.end_object();
    std::string out = j.str();
    if (out.empty() || out.back() != '\n') out += '\n';
    return out;
}

std::string parameter_text(const Policy& p) {
    std::string out;
    for (const auto& r : p.rules) out += r + "\n";
    return out.empty() ? "\n" : out;
}

std::string persist_problem(const Policy& p) {
    for (const auto& a : p.allow)
        for (const auto& n : a.names)
            if (n.find('"') != std::string::npos)
                return "the name \"" + printable(n) +
                       "\" holds a '\"', which a module option's quotes cannot carry";
    return "";
}

std::string persist_text(const Policy& p) {
    std::string rules;
    for (const auto& r : p.rules) rules += (rules.empty() ? "" : "; ") + r;
    return "# Written by rtrs-srv (admission set --persist): the admission rules of\n"
           "# rtrs-server, in effect from the module's load on. rtrs-srv rewrites this\n"
           "# file, and removes it for the default rules; see rtrs-srv(8), ADMISSION.\n"
           "options rtrs_server admission=\"" + rules + "\"\n";
}

}  // namespace rtrs_srv::admission
