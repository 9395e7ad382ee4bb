// SPDX-License-Identifier: GPL-2.0
#include "cli.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "commands.h"
#include "exit_codes.h"
#include "help.h"
#include "reader.h"

#ifndef RTRS_SRV_VERSION
#define RTRS_SRV_VERSION "unknown"
#endif

namespace rtrs_srv {

namespace {

struct Options {
    bool json = false;
    bool pretty = false;
    bool help = false;
    bool version = false;
    std::optional<std::string> root;
    std::optional<std::string> interval;
    std::optional<std::string> count;
    std::optional<std::string> debugfs_root;
    std::optional<std::string> textfile;
    std::vector<std::string> words;  // the command and its arguments
};

// Parses options anywhere on the line; "--" ends them. nullopt with
// `error` set on a bad option.
std::optional<Options> parse_options(const std::vector<std::string>& args, std::string& error) {
    Options o;
    auto need_value = [&](std::size_t& i, const std::string& name,
                          std::optional<std::string>& slot) -> bool {
        if (i + 1 >= args.size()) {
            error = "option " + name + " needs a value";
            return false;
        }
        slot = args[++i];
        return true;
    };
    bool options_done = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (options_done || a.size() < 2 || a[0] != '-') {
            o.words.push_back(a);
            continue;
        }
        if (a == "--") {
            options_done = true;
            continue;
        }
        if (a.compare(0, 2, "--") == 0) {
            auto eq = a.find('=');
            std::string name = a.substr(0, eq);
            std::optional<std::string> inline_value;
            if (eq != a.npos) inline_value = a.substr(eq + 1);
            std::optional<std::string>* slot = name == "--sysfs-root"     ? &o.root
                                             : name == "--debugfs-root" ? &o.debugfs_root
                                             : name == "--interval"     ? &o.interval
                                             : name == "--count"        ? &o.count
                                             : name == "--textfile"     ? &o.textfile
                                                                        : nullptr;
            if (slot) {
                if (inline_value)
                    *slot = *inline_value;
                else if (!need_value(i, name, *slot))
                    return std::nullopt;
                continue;
            }
            bool* flag = name == "--json"      ? &o.json
                       : name == "--pretty"    ? &o.pretty
                       : name == "--help"      ? &o.help
                       : name == "--version"   ? &o.version
                                               : nullptr;
            if (!flag) {
                error = "unknown option " + name;
                return std::nullopt;
            }
            if (inline_value) {
                error = "option " + name + " takes no value";
                return std::nullopt;
            }
            *flag = true;
            continue;
        }
        // A bundle of short options: -jp, -i0.5, -i 0.5, -c3.
        for (std::size_t k = 1; k < a.size(); ++k) {
            char c = a[k];
            if (c == 'i' || c == 'c') {
                auto& slot = c == 'i' ? o.interval : o.count;
                if (k + 1 < a.size())
                    slot = a.substr(k + 1);
                else if (!need_value(i, std::string("-") + c, slot))
                    return std::nullopt;
                break;
            }
            bool* flag = c == 'j' ? &o.json
                       : c == 'p' ? &o.pretty
                       : c == 'h' ? &o.help
                       : c == 'V' ? &o.version
                                  : nullptr;
            if (!flag) {
                error = std::string("unknown option -") + c;
                return std::nullopt;
            }
            *flag = true;
        }
    }
    if (o.pretty) o.json = true;
    return o;
}

std::optional<double> parse_interval(const std::string& s) {
    if (s.empty()) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(s.c_str(), &end);
    if (errno || *end || !std::isfinite(v) || v <= 0 || v > 86400) return std::nullopt;
    return v;
}

std::optional<long> parse_count(const std::string& s) {
    if (s.empty() || s[0] < '0' || s[0] > '9') return std::nullopt;
    char* end = nullptr;
    errno = 0;
    long v = std::strtol(s.c_str(), &end, 10);
    if (errno || *end || v < 1) return std::nullopt;
    return v;
}

int usage_error(const Io& io, const std::string& message, const std::string& command = "") {
    io.err << "rtrs-srv: " << message << '\n';
    auto h = command.empty() ? std::nullopt : help::command(command);
    std::string usage = h ? h->substr(0, h->find('\n') + 1) : help::usage_line();
    io.err << usage << "Try 'rtrs-srv --help' for more information.\n";
    return exit_usage;
}

}  // namespace

int run(const std::vector<std::string>& args, const Io& io) {
    std::string error;
    auto parsed = parse_options(args, error);
    if (!parsed) return usage_error(io, error);
    Options& o = *parsed;

    if (o.version) {
        io.out << "rtrs-srv " RTRS_SRV_VERSION "\n";
        return exit_ok;
    }
    const std::string cmd = o.words.empty() ? "" : o.words[0];
    if (!cmd.empty() && !help::command(cmd)) return usage_error(io, "unknown command \"" + cmd + "\"");
    if (o.help || cmd == "help") {
        // "help X": X's; "help": the tool's; "help --help": help's own.
        std::string topic = cmd != "help"       ? cmd
                            : o.words.size() > 1 ? o.words[1]
                            : o.help            ? "help"
                                                : "";
        if (cmd == "help" && o.words.size() > 2) return usage_error(io, "too many arguments", "help");
        if (topic.empty()) {
            io.out << help::tool();
            return exit_ok;
        }
        auto h = help::command(topic);
        if (!h) return usage_error(io, "unknown command \"" + topic + "\"");
        io.out << *h;
        return exit_ok;
    }
    if (cmd.empty()) return usage_error(io, "no command given");

    const std::size_t nargs = o.words.size() - 1;
    auto arity = [&](std::size_t min, std::size_t max) -> std::optional<int> {
        if (nargs < min) return usage_error(io, "missing argument to " + cmd, cmd);
        if (nargs > max) return usage_error(io, "too many arguments to " + cmd, cmd);
        return std::nullopt;
    };
    if (o.json && cmd != "list" && cmd != "show")
        return usage_error(io, "-j/--json and -p/--pretty apply to list and show only", cmd);
    if ((o.interval || o.count) && cmd != "watch")
        return usage_error(io, "-i/--interval and -c/--count apply to watch only", cmd);
    if (o.textfile && cmd != "metrics")
        return usage_error(io, "--textfile applies to metrics only", cmd);
    if (o.textfile && o.textfile->empty()) return usage_error(io, "--textfile needs a folder", cmd);

    std::string root = default_sysfs_root;
    if (o.root) {
        root = *o.root;
    } else if (io.getenv) {
        const char* env = io.getenv("RTRS_SRV_SYSFS");
        if (env && *env) root = env;
    }
    if (root.empty()) return usage_error(io, "--sysfs-root needs a folder");

    std::string debugfs = default_debugfs_root;
    if (o.debugfs_root) {
        debugfs = *o.debugfs_root;
    } else if (io.getenv) {
        const char* env = io.getenv("RTRS_SRV_DEBUGFS");
        if (env && *env) debugfs = env;
    }
    if (debugfs.empty()) return usage_error(io, "--debugfs-root needs a folder");

    Context ctx(root, io.out, io.err);
    ctx.reader.debugfs_root = debugfs;
    ctx.json = o.json;
    ctx.pretty = o.pretty;
    ctx.tty = io.stdout_tty;
    ctx.now = io.now;
    ctx.sleep = io.sleep;

    if (cmd == "list") {
        if (auto rc = arity(0, 0)) return *rc;
        return cmd::list(ctx);
    }
    if (cmd == "show") {
        if (auto rc = arity(1, 1)) return *rc;
        return cmd::show(ctx, o.words[1]);
    }
    if (cmd == "metrics") {
        if (auto rc = arity(0, 0)) return *rc;
        return cmd::metrics(ctx, o.textfile);
    }
    if (cmd == "disconnect") {
        if (auto rc = arity(2, 2)) return *rc;
        return cmd::disconnect(ctx, o.words[1], o.words[2]);
    }
    if (cmd == "reset-stats") {
        if (auto rc = arity(1, 2)) return *rc;
        std::optional<std::string> path;
        if (nargs == 2) path = o.words[2];
        return cmd::reset_stats(ctx, o.words[1], path);
    }
    // watch
    if (auto rc = arity(0, 0)) return *rc;
    cmd::WatchOptions w;
    if (o.interval) {
        auto v = parse_interval(*o.interval);
        if (!v) return usage_error(io, "bad interval \"" + *o.interval + "\": seconds, more than 0, at most 86400", cmd);
        w.interval = *v;
    }
    if (o.count) {
        auto v = parse_count(*o.count);
        if (!v) return usage_error(io, "bad count \"" + *o.count + "\": a whole number, at least 1", cmd);
        w.count = *v;
    }
    return cmd::watch(ctx, w);
}

}  // namespace rtrs_srv
