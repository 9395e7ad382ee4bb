// SPDX-License-Identifier: GPL-2.0
// rtrs-client: a userspace RTRS 2.0 client (librdmacm + libibverbs) for
// testing RTRS servers. See usage() and README.md.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bad.h"
#include "io.h"
#include "loop.h"
#include "session.h"

namespace {

// Exit statuses.
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;    // the client itself failed
constexpr int kExitRejected = 2;  // the server rejected a connection
constexpr int kExitClosed = 3;    // the server closed a path (or stopped answering)
constexpr int kExitUsage = 64;

void usage(FILE* out) {
    std::fprintf(out,
                 "usage:\n"
                 "  rtrs-client connect --session NAME --server ADDR [--src ADDR]\n"
                 "                      [--server ADDR [--src ADDR]]... [--paths N] [--port 1234]\n"
                 "                      [--cons M] [--hold SECONDS | --exit-after-up]\n"
                 "                      [--no-heartbeat] [--quiet]\n"
                 "  rtrs-client io --session NAME --server ADDR [--src ADDR] [--port 1234]\n"
                 "                 [--cons M] --reads N --writes N --size BYTES [--usr-len U]\n"
                 "                 [--qd D] [--verify-zero] [--need-inval] [--hold SECONDS]\n"
                 "                 [--quiet]\n"
                 "  rtrs-client bad CASE --server ADDR [--src ADDR] [--port 1234] [--session NAME] "
                 "[--hold SECONDS] [--quiet]\n"
                 "  rtrs-client cases\n"
                 "Each --server starts a path; a --src that follows it is that path's source.\n"
                 "Exit status: 0 ok, 1 client failure, 2 rejected by the server,\n"
                 "3 path closed by the server / heartbeats lost, 64 usage.\n"
                 "io exits 1 if any request failed (its summary line says how many).\n"
                 "bad CASE prints one line 'result: ...' and exits 0 whatever the server did.\n");
}

int usage_error(const std::string& msg) {
    std::fprintf(stderr, "rtrs-client: %s\n", msg.c_str());
    usage(stderr);
    return kExitUsage;
}

bool parse_uint(const char* s, unsigned long max, unsigned long* out) {
    char* end = nullptr;
    errno = 0;
    const unsigned long v = std::strtoul(s, &end, 10);
    if (errno || !end || *end || end == s || v > max) return false;
    *out = v;
    return true;
}

int exit_status(const rc::Status& s) {
    switch (s.kind()) {
        case rc::Failure::Rejected: return kExitRejected;
        case rc::Failure::Closed: return kExitClosed;
        default: return kExitFailed;
    }
}

struct Args {
    std::string cmd, which, session;
    std::vector<std::string> servers;
    std::vector<std::pair<size_t, std::string>> srcs;  // (path index, addr)
    unsigned long port = 1234, paths = 0, cons = 2;
    long hold = -1;
    bool exit_after_up = false, no_hb = false, quiet = false, session_given = false;
    // io
    long reads = -1, writes = -1, size = -1;
    unsigned long usr_len = 16, qd = 1;
    bool verify_zero = false, need_inval = false;
};

int parse(int argc, char** argv, Args* a) {
    if (argc < 2) return usage_error("no command");
    a->cmd = argv[1];
    int i = 2;
    if (a->cmd == "bad") {
        if (argc < 3) return usage_error("bad: no CASE");
        a->which = argv[2];
        i = 3;
    } else if (a->cmd != "connect" && a->cmd != "cases" && a->cmd != "io") {
        if (a->cmd == "-h" || a->cmd == "--help") {
            usage(stdout);
            std::exit(kExitOk);
        }
        return usage_error("unknown command '" + a->cmd + "'");
    }
    for (; i < argc; ++i) {
        const std::string opt = argv[i];
        auto value = [&](const char** v) {
            if (i + 1 >= argc) return false;
            *v = argv[++i];
            return true;
        };
        const char* v = nullptr;
        unsigned long n = 0;
        if (opt == "--exit-after-up") {
            a->exit_after_up = true;
        } else if (opt == "--no-heartbeat") {
            a->no_hb = true;
        } else if (opt == "--quiet") {
            a->quiet = true;
        } else if (opt == "--verify-zero") {
            a->verify_zero = true;
        } else if (opt == "--need-inval") {
            a->need_inval = true;
        } else if (opt == "-h" || opt == "--help") {
            usage(stdout);
            std::exit(kExitOk);
        } else if (!value(&v)) {
            return usage_error(opt.rfind("--", 0) == 0 ? opt + " needs a value"
                                                       : "unexpected '" + opt + "'");
        } else if (opt == "--session") {
            a->session = v;
            a->session_given = true;
        } else if (opt == "--server") {
            a->servers.push_back(v);
        } else if (opt == "--src") {
            if (a->servers.empty()) {
                // --src before the first --server: the first path's.
                a->srcs.push_back({0, v});
            } else {
                a->srcs.push_back({a->servers.size() - 1, v});
            }
        } else if (opt == "--port") {
            if (!parse_uint(v, 65535, &n)) return usage_error("bad --port");
            a->port = n;
        } else if (opt == "--paths") {
            if (!parse_uint(v, 128, &n) || n == 0) return usage_error("--paths must be 1..128");
            a->paths = n;
        } else if (opt == "--cons") {
            if (!parse_uint(v, 4096, &n) || n == 0) return usage_error("--cons must be 1..4096");
            a->cons = n;
        } else if (opt == "--hold") {
            if (!parse_uint(v, 86400 * 365, &n)) return usage_error("bad --hold");
            a->hold = static_cast<long>(n);
        } else if (opt == "--reads" || opt == "--writes") {
            if (!parse_uint(v, 100000000, &n)) return usage_error("bad " + opt);
            (opt == "--reads" ? a->reads : a->writes) = static_cast<long>(n);
        } else if (opt == "--size") {
            if (!parse_uint(v, 1u << 28, &n)) return usage_error("bad --size");
            a->size = static_cast<long>(n);
        } else if (opt == "--usr-len") {
            if (!parse_uint(v, 65535, &n)) return usage_error("--usr-len must be 0..65535");
            a->usr_len = n;
        } else if (opt == "--qd") {
            if (!parse_uint(v, 65535, &n) || n == 0) return usage_error("--qd must be 1..65535");
            a->qd = n;
        } else {
            return usage_error("unknown option " + opt);
        }
    }
    return -1;
}

int cmd_connect(const Args& a) {
    if (!a.session_given || a.session.empty()) return usage_error("connect needs --session NAME");
    if (a.servers.empty()) return usage_error("connect needs --server ADDR");
    if (a.paths && a.paths != a.servers.size())
        return usage_error(
            rc::strf("--paths %lu but %zu --server given", a.paths, a.servers.size()));
    if (a.exit_after_up && a.hold >= 0)
        return usage_error("--hold and --exit-after-up exclude each other");
    rc::SessionConfig cfg;
    cfg.name = a.session;
    cfg.port = static_cast<uint16_t>(a.port);
    cfg.cons = static_cast<uint16_t>(a.cons);
    cfg.heartbeat = !a.no_hb;
    cfg.verbose = !a.quiet;
    for (const auto& s : a.servers) {
        auto dst = rc::parse_addr(s);
        if (!dst.ok()) return usage_error(dst.status().msg());
        cfg.paths.push_back({std::nullopt, dst.value()});
    }
    for (const auto& [idx, s] : a.srcs) {
        auto src = rc::parse_addr(s);
        if (!src.ok()) return usage_error(src.status().msg());
        if (cfg.paths[idx].src) return usage_error("two --src for one --server");
        cfg.paths[idx].src = src.value();
    }
    auto loop = rc::Loop::create();
    if (!loop.ok()) {
        std::fprintf(stderr, "rtrs-client: %s\n", loop.status().msg().c_str());
        return kExitFailed;
    }
    rc::Session session(*loop.value(), cfg);
    rc::Status s = session.open();
    if (s.ok() && !a.exit_after_up) {
        if (!a.quiet)
            std::fprintf(
                stderr, "holding the session %s\n",
                a.hold < 0 ? "until SIGINT/SIGTERM" : rc::strf("for %ld s", a.hold).c_str());
        s = session.hold(static_cast<int>(a.hold));
    }
    session.close();
    if (!s.ok()) {
        // The reject line goes to stdout too: tests read it there.
        if (s.kind() == rc::Failure::Rejected) std::printf("%s\n", s.msg().c_str());
        std::fprintf(stderr, "rtrs-client: %s\n", s.msg().c_str());
        return exit_status(s);
    }
    if (!a.quiet) std::printf("session %s closed\n", a.session.c_str());
    return kExitOk;
}

// The one path of io and bad: --server and an optional --src. Returns 0, or
// the usage error's exit status.
int one_path_addrs(const Args& a, rc::Addr* dst, std::optional<rc::Addr>* src) {
    auto d = rc::parse_addr(a.servers[0]);
    if (!d.ok()) return usage_error(d.status().msg());
    *dst = d.value();
    if (!a.srcs.empty()) {
        auto sa = rc::parse_addr(a.srcs[0].second);
        if (!sa.ok()) return usage_error(sa.status().msg());
        *src = sa.value();
    }
    return 0;
}

int cmd_io(const Args& a) {
    if (!a.session_given || a.session.empty()) return usage_error("io needs --session NAME");
    if (a.servers.size() != 1) return usage_error("io needs exactly one --server ADDR");
    if (a.reads < 0 || a.writes < 0 || a.size < 0)
        return usage_error("io needs --reads N, --writes N and --size BYTES");
    if (a.exit_after_up) return usage_error("io does not take --exit-after-up");
    if (a.cons < 2) return usage_error("io needs --cons 2 or more (connection 0 carries no I/O)");
    rc::IoCmdConfig cfg;
    cfg.session = a.session;
    if (int err = one_path_addrs(a, &cfg.dst, &cfg.src)) return err;
    cfg.port = static_cast<uint16_t>(a.port);
    cfg.cons = static_cast<uint16_t>(a.cons);
    cfg.reads = static_cast<uint32_t>(a.reads);
    cfg.writes = static_cast<uint32_t>(a.writes);
    cfg.size = static_cast<uint32_t>(a.size);
    cfg.usr_len = static_cast<uint16_t>(a.usr_len);
    cfg.depth = static_cast<uint32_t>(a.qd);
    cfg.verify_zero = a.verify_zero;
    cfg.need_inval = a.need_inval;
    cfg.hold = a.hold < 0 ? 0 : a.hold;
    cfg.verbose = !a.quiet;
    rc::Status s = rc::run_io(cfg);
    if (!s.ok()) {
        if (s.kind() == rc::Failure::Rejected) std::printf("%s\n", s.msg().c_str());
        std::fprintf(stderr, "rtrs-client: %s\n", s.msg().c_str());
        return exit_status(s);
    }
    return kExitOk;
}

int cmd_bad(const Args& a) {
    if (a.servers.size() != 1) return usage_error("bad needs exactly one --server ADDR");
    rc::BadConfig cfg;
    cfg.which = a.which;
    if (int err = one_path_addrs(a, &cfg.dst, &cfg.src)) return err;
    cfg.port = static_cast<uint16_t>(a.port);
    if (a.session_given) cfg.session = a.session;
    cfg.verbose = !a.quiet;
    cfg.hold = a.hold < 0 ? 0 : a.hold;
    rc::Status s = rc::run_bad_case(cfg);
    if (!s.ok()) {
        std::fprintf(stderr, "rtrs-client: bad %s: %s\n", a.which.c_str(), s.msg().c_str());
        return s.err() == EINVAL && s.msg().rfind("unknown case", 0) == 0 ? kExitUsage
                                                                          : kExitFailed;
    }
    return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
    // Line by line even into a pipe or file: tests wait for the "up" line.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    Args a;
    if (int r = parse(argc, argv, &a); r >= 0) return r;
    if (a.cmd == "cases") {
        for (const auto& name : rc::bad_case_names()) std::printf("%s\n", name.c_str());
        return kExitOk;
    }
    if (a.cmd == "connect") return cmd_connect(a);
    if (a.cmd == "io") return cmd_io(a);
    return cmd_bad(a);
}
