// SPDX-License-Identifier: GPL-2.0
// Admission control (rtrs-server's module parameters admission and
// admission_close): the rules as the core reads them, what the parameter
// shows, and the texts the `admission` command prints and writes. The
// rules' grammar is the core's (src/core/admission.h); every text here is
// checked by the core's own parser (core_admission.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rtrs_srv::admission {

// rtrs-server's parameters (absent when the module is not loaded).
inline constexpr const char* default_params_dir = "/sys/module/rtrs_server/parameters";
inline constexpr const char* default_modprobe_dir = "/etc/modprobe.d";
// What --persist writes in the modprobe.d folder.
inline constexpr const char* persist_name = "rtrs-server-admission.conf";

// One allow rule: a network ("10.77.0.0/24", "fd00::/64",
// "gid:fe80:0000:...:0001/128", as the core prints it) and the only
// session names a client of it may use (empty: any name).
struct Allow {
    std::string network;
    std::vector<std::string> names;

    // "ipv4", "ipv6" or "gid".
    std::string family() const;
};

// The limit rule; each absent value is no limit. rate is "R/s" or "R/m";
// burst is there whenever rate is (the core fills it in).
struct Limits {
    std::optional<std::uint32_t> sessions;
    std::optional<std::uint32_t> paths;
    std::optional<std::uint32_t> connections;
    std::optional<std::string> rate;
    std::optional<std::uint32_t> burst;

    bool any() const { return sessions || paths || connections || rate; }
};

// Rules as the core took them.
struct Policy {
    std::vector<Allow> allow;  // empty: the allow-list is off
    Limits limits;
    // The canonical rules (core::Policy::format()), one a line, without the
    // newlines: what parses back to the same policy.
    std::vector<std::string> rules;

    bool allow_list() const { return !allow.empty(); }
    bool is_default() const { return rules.empty(); }
};

// What the admission parameter reads: the refusals so far (each reason as
// the kernel names it, in its order: not-allowed, sessions, paths,
// connections, rate, name), then the rules in effect.
struct State {
    std::vector<std::pair<std::string, std::uint64_t>> refused;
    Policy policy;
};

// Reads rules with the core's parser, as the module would. nullopt with
// `error` set to the core's "line N: why" when the module would refuse them.
std::optional<Policy> parse_rules(const std::string& text, std::string& error);

// Reads what the admission parameter shows. nullopt with `error` set when
// it is not that.
std::optional<State> parse_shown(const std::string& text, std::string& error);

// The core's words for the refusals of a reason ("the client's address is
// not on the allow-list"); empty for a reason it does not know.
std::string reason_words(const std::string& reason);

// `admission show`: the allow-list, the limits, the refusals.
std::string table(const State& s);
// `admission show -j`: one JSON object (rtrs-srv(8) ADMISSION).
std::string json(const State& s, bool pretty);

// What `admission set` writes to the parameter: the canonical rules, one a
// line; a lone newline for the default (sysfs takes no empty write).
std::string parameter_text(const Policy& p);
// Why the rules cannot be kept in modprobe.d (a name with a '"', which
// the kernel's quoting of a parameter's value cannot carry), or "".
std::string persist_problem(const Policy& p);
// The modprobe.d file of rules that are not the default: a header, then
// options rtrs_server admission="RULE; RULE".
std::string persist_text(const Policy& p);

}  // namespace rtrs_srv::admission
