// SPDX-License-Identifier: GPL-2.0
#include "cli.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "admission.h"
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
    bool persist = false;
    bool close_refused = false;
    std::optional<std::string> root;
    std::optional<std::string> interval;
    std::optional<std::string> count;
    std::optional<std::string> debugfs_root;
    std::optional<std::string> textfile;
    std::optional<std::string> params_dir;
    std::optional<std::string> modprobe_dir;
    std::optional<std::string> file;
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
                                             : name == "--params-dir"   ? &o.params_dir
                                             : name == "--modprobe-dir" ? &o.modprobe_dir
                                             : name == "--file"         ? &o.file
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
                       : name == "--persist"   ? &o.persist
                       : name == "--close-refused" ? &o.close_refused
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
        // A bundle of short options: -jp, -i0.5, -i 0.5, -c3, -f FILE.
        for (std::size_t k = 1; k < a.size(); ++k) {
            char c = a[k];
            if (c == 'i' || c == 'c' || c == 'f') {
                auto& slot = c == 'i' ? o.interval : c == 'c' ? o.count : o.file;
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
    // The command's usage: its help's first line, and the lines that go on
    // with it (indented under "Usage: ").
    std::string usage = help::usage_line();
    if (h) {
        std::size_t end = h->find('\n') + 1;
        while (h->compare(end, 7, "       ") == 0) end = h->find('\n', end) + 1;
        usage = h->substr(0, end);
    }
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
    // admission's own command: show (the default), set or close-refused.
    const std::string sub = cmd == "admission" && nargs > 0 ? o.words[1] : "";
    if (cmd == "admission" && !sub.empty() && sub != "show" && sub != "set" && sub != "close-refused")
        return usage_error(io, "unknown admission command \"" + sub + "\" (show, set or close-refused)", cmd);
    const bool admission_set = cmd == "admission" && sub == "set";
    if (o.json && cmd != "list" && cmd != "show" && !(cmd == "admission" && (sub.empty() || sub == "show")))
        return usage_error(io, "-j/--json and -p/--pretty apply to list, show and admission show only", cmd);
    if ((o.persist || o.close_refused || o.file) && !admission_set)
        return usage_error(io, "--persist, --close-refused and -f/--file apply to admission set only", cmd);
    if (o.modprobe_dir && !admission_set)
        return usage_error(io, "--modprobe-dir applies to admission set only", cmd);
    if (o.params_dir && cmd != "admission" && cmd != "metrics")
        return usage_error(io, "--params-dir applies to admission and metrics only", cmd);
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

    auto folder = [&](const std::optional<std::string>& given, const char* env_name,
                      const char* fallback) -> std::string {
        if (given) return *given;
        if (io.getenv) {
            const char* env = io.getenv(env_name);
            if (env && *env) return env;
        }
        return fallback;
    };
    const std::string params = folder(o.params_dir, "RTRS_SRV_PARAMS", admission::default_params_dir);
    if (params.empty()) return usage_error(io, "--params-dir needs a folder");
    const std::string modprobe =
        folder(o.modprobe_dir, "RTRS_SRV_MODPROBE_DIR", admission::default_modprobe_dir);
    if (modprobe.empty()) return usage_error(io, "--modprobe-dir needs a folder");

    Context ctx(root, io.out, io.err);
    ctx.reader.debugfs_root = debugfs;
    ctx.json = o.json;
    ctx.pretty = o.pretty;
    ctx.tty = io.stdout_tty;
    ctx.now = io.now;
    ctx.sleep = io.sleep;
    ctx.params_dir = params;
    ctx.modprobe_dir = modprobe;
    ctx.in = io.in;

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
    if (cmd == "admission") {
        if (sub.empty() || sub == "show") {
            if (auto rc = arity(0, 1)) return *rc;
            return cmd::admission_show(ctx);
        }
        if (sub == "close-refused") {
            if (auto rc = arity(1, 1)) return *rc;
            return cmd::admission_close_refused(ctx);
        }
        // set: RULES... (one text), -f FILE, or "-" (standard input).
        cmd::AdmissionSet set;
        set.persist = o.persist;
        set.close_refused = o.close_refused;
        std::vector<std::string> rules(o.words.begin() + 2, o.words.end());
        if (o.file) {
            if (!rules.empty())
                return usage_error(io, "admission set takes rules or -f FILE, not both", cmd);
            if (o.file->empty()) return usage_error(io, "-f/--file needs a file", cmd);
            set.file = *o.file;
        } else if (rules.size() == 1 && rules[0] == "-") {
            set.file = "-";
        } else if (rules.empty()) {
            return usage_error(io, "admission set needs rules, -f FILE or - (standard input); "
                                   "'' sets the default (no rules)", cmd);
        } else {
            for (const auto& w : rules) set.text += (set.text.empty() ? "" : " ") + w;
        }
        return cmd::admission_set(ctx, set);
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
