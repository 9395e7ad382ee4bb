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
#include "uuid.h"

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
                 "                      [--paths-uuid UUID] [--path-uuid UUID (after its --server)]\n"
                 "                      [--no-info | --only-cons K] [--cycles N | --sessions K]\n"
                 "                      [--retry-for SECONDS] [--ack-timeout N]\n"
                 "                      [--window W | --con-interval-ms MS] (with --no-info/--only-cons)\n"
                 "  rtrs-client io --session NAME --server ADDR [--src ADDR] [--server ADDR [--src ADDR]]...\n"
                 "                 [--port 1234]\n"
                 "                 [--cons M] --reads N --writes N --size BYTES [--usr-len U]\n"
                 "                 [--qd D] [--verify-zero] [--need-inval] [--hold SECONDS]\n"
                 "                 [--duration SECONDS] [--ack-timeout N]\n"
                 "                 [--quiet]\n"
                 "  rtrs-client bad CASE --server ADDR [--src ADDR] [--server ADDR [--src ADDR]] [--port 1234]\n"
                 "                  [--session NAME] [--hold SECONDS] [--quiet]\n"
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
    // connect: pinned uuids, a stalled handshake, repetitions
    std::optional<wire::Uuid> paths_uuid;
    std::vector<std::pair<size_t, wire::Uuid>> path_uuids;  // (path index, uuid)
    bool no_info = false;
    unsigned long only_cons = 0, cycles = 1, sessions = 1, retry_for = 0, duration = 0;
    unsigned long ack_timeout = 0;
    unsigned long window = 0, con_interval_ms = 0;
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
        } else if (opt == "--no-info") {
            a->no_info = true;
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
        } else if (opt == "--paths-uuid" || opt == "--path-uuid") {
            wire::Uuid u;
            if (!rc::parse_uuid(v, &u)) return usage_error(opt + ": not a UUID (32 hex digits)");
            if (opt == "--paths-uuid") {
                a->paths_uuid = u;
            } else {
                if (a->servers.empty()) return usage_error("--path-uuid before any --server");
                a->path_uuids.push_back({a->servers.size() - 1, u});
            }
        } else if (opt == "--only-cons") {
            if (!parse_uint(v, 4096, &n) || n == 0) return usage_error("--only-cons must be 1..4096");
            a->only_cons = n;
            a->no_info = true;
        } else if (opt == "--window") {
            if (!parse_uint(v, 4096, &n) || n == 0) return usage_error("--window must be 1..4096");
            a->window = n;
        } else if (opt == "--con-interval-ms") {
            if (!parse_uint(v, 3600000, &n) || n == 0) return usage_error("bad --con-interval-ms");
            a->con_interval_ms = n;
        } else if (opt == "--ack-timeout") {
            if (!parse_uint(v, 31, &n) || n == 0) return usage_error("--ack-timeout must be 1..31");
            a->ack_timeout = n;
        } else if (opt == "--duration") {
            if (!parse_uint(v, 86400 * 365, &n) || n == 0) return usage_error("bad --duration");
            a->duration = n;
        } else if (opt == "--retry-for") {
            if (!parse_uint(v, 86400, &n)) return usage_error("bad --retry-for");
            a->retry_for = n;
        } else if (opt == "--cycles" || opt == "--sessions") {
            if (!parse_uint(v, 100000000, &n) || n == 0) return usage_error(opt + " must be at least 1");
            (opt == "--cycles" ? a->cycles : a->sessions) = n;
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

// The reject line goes to stdout too: tests read it there.
void print_failure(const rc::Status& s, const std::string& prefix = "") {
    if (s.kind() == rc::Failure::Rejected) std::printf("%s%s\n", prefix.c_str(), s.msg().c_str());
    std::fprintf(stderr, "rtrs-client: %s%s\n", prefix.c_str(), s.msg().c_str());
}

// --cycles N: open the session and close it again, N times, each time as a
// new session (new uuids, unless pinned). Stops at the first failure.
int connect_cycles(const Args& a, rc::Loop& loop, const rc::SessionConfig& cfg) {
    unsigned long done = 0;
    rc::Status failed;
    for (unsigned long i = 0; i < a.cycles; ++i) {
        rc::Session session(loop, cfg);
        rc::Status s = session.open();
        session.close();
        if (!s.ok()) {
            failed = s;
            print_failure(s, rc::strf("cycle %lu: ", i + 1));
            break;
        }
        ++done;
        if (loop.interrupted()) break;
    }
    std::printf("cycles: %lu of %lu opened and closed\n", done, a.cycles);
    if (!failed.ok()) return exit_status(failed);
    return done == a.cycles ? kExitOk : kExitFailed;
}

int cmd_connect(const Args& a) {
    if (a.duration) return usage_error("--duration is an option of io");
    if (!a.session_given || a.session.empty()) return usage_error("connect needs --session NAME");
    if (a.servers.empty()) return usage_error("connect needs --server ADDR");
    if (a.paths && a.paths != a.servers.size())
        return usage_error(
            rc::strf("--paths %lu but %zu --server given", a.paths, a.servers.size()));
    if (a.exit_after_up && a.hold >= 0)
        return usage_error("--hold and --exit-after-up exclude each other");
    if (a.cycles > 1 && a.sessions > 1)
        return usage_error("--cycles and --sessions exclude each other");
    if (a.cycles > 1 && (a.hold >= 0 || a.no_info))
        return usage_error("--cycles closes each session at once: no --hold, --no-info or --only-cons");
    if (a.retry_for && (a.cycles > 1 || a.sessions > 1))
        return usage_error("--retry-for is for one session");
    if (a.sessions > 1 && (a.paths_uuid || !a.path_uuids.empty()))
        return usage_error("--sessions makes sessions of their own: no pinned uuids");
    if (a.only_cons > a.cons)
        return usage_error(rc::strf("--only-cons %lu is more than --cons %lu", a.only_cons, a.cons));
    if ((a.window || a.con_interval_ms) && !a.no_info)
        return usage_error("--window and --con-interval-ms go with --no-info or --only-cons");
    if (a.window && a.con_interval_ms)
        return usage_error("--window and --con-interval-ms exclude each other");
    rc::SessionConfig cfg;
    cfg.name = a.session;
    cfg.window = static_cast<unsigned>(a.window);
    cfg.interval_ms = static_cast<int>(a.con_interval_ms);
    cfg.port = static_cast<uint16_t>(a.port);
    cfg.cons = static_cast<uint16_t>(a.cons);
    cfg.heartbeat = !a.no_hb;
    cfg.verbose = !a.quiet;
    cfg.paths_uuid = a.paths_uuid;
    cfg.no_info = a.no_info;
    cfg.ack_timeout = static_cast<uint8_t>(a.ack_timeout);
    cfg.only_cons = static_cast<uint16_t>(a.only_cons);
    for (const auto& s : a.servers) {
        auto dst = rc::parse_addr(s);
        if (!dst.ok()) return usage_error(dst.status().msg());
        cfg.paths.push_back({std::nullopt, dst.value(), std::nullopt});
    }
    for (const auto& [idx, s] : a.srcs) {
        auto src = rc::parse_addr(s);
        if (!src.ok()) return usage_error(src.status().msg());
        if (cfg.paths[idx].src) return usage_error("two --src for one --server");
        cfg.paths[idx].src = src.value();
    }
    for (const auto& [idx, u] : a.path_uuids) {
        if (cfg.paths[idx].uuid) return usage_error("two --path-uuid for one --server");
        cfg.paths[idx].uuid = u;
    }
    auto loop = rc::Loop::create();
    if (!loop.ok()) {
        std::fprintf(stderr, "rtrs-client: %s\n", loop.status().msg().c_str());
        return kExitFailed;
    }
    if (a.cycles > 1) return connect_cycles(a, *loop.value(), cfg);

    // One session, or --sessions K of them (NAME-0 .. NAME-K-1), opened one
    // after the other until one fails; those that came up are held.
    std::vector<std::unique_ptr<rc::Session>> sessions;
    rc::Status s;
    for (unsigned long k = 0; k < a.sessions; ++k) {
        rc::SessionConfig c = cfg;
        if (a.sessions > 1) c.name = rc::strf("%s-%lu", a.session.c_str(), k);
        sessions.push_back(std::make_unique<rc::Session>(*loop.value(), c));
        s = sessions.back()->open();
        // --retry-for: a refused or closed open is tried again, as a client
        // reconnecting would (the same session, new path uuids unless pinned).
        const auto until = rc::Clock::now() + std::chrono::seconds(a.retry_for);
        unsigned attempts = 1;
        while (!s.ok() && a.retry_for &&
               (s.kind() == rc::Failure::Rejected || s.kind() == rc::Failure::Closed) &&
               rc::Clock::now() < until && !loop.value()->interrupted()) {
            if (!a.quiet) std::fprintf(stderr, "attempt %u: %s; retrying\n", attempts, s.msg().c_str());
            sessions.back()->close();
            sessions.pop_back();
            if (rc::Status w = loop.value()->run_for(500); !w.ok()) break;
            sessions.push_back(std::make_unique<rc::Session>(*loop.value(), c));
            s = sessions.back()->open();
            ++attempts;
        }
        if (a.retry_for && s.ok()) std::printf("accepted at attempt %u\n", attempts);
        if (!s.ok()) {
            if (a.sessions > 1) {
                print_failure(s, "session " + c.name + ": ");
                sessions.back()->close();
                sessions.pop_back();
            }
            break;
        }
    }
    if (a.sessions > 1) std::printf("sessions: %zu of %lu up\n", sessions.size(), a.sessions);
    rc::Status held;
    if ((s.ok() || a.sessions > 1) && !sessions.empty() && !a.exit_after_up) {
        if (!a.quiet)
            std::fprintf(
                stderr, "holding %s %s\n", sessions.size() > 1 ? "the sessions" : "the session",
                a.hold < 0 ? "until SIGINT/SIGTERM" : rc::strf("for %ld s", a.hold).c_str());
        std::vector<rc::Session*> ptrs;
        for (auto& p : sessions) ptrs.push_back(p.get());
        held = rc::hold_all(*loop.value(), ptrs, static_cast<int>(a.hold));
    }
    for (auto& p : sessions) p->close();
    if (a.sessions == 1 && !s.ok()) {
        print_failure(s);
        return exit_status(s);
    }
    if (!held.ok()) {
        std::fprintf(stderr, "rtrs-client: %s\n", held.msg().c_str());
        return exit_status(held);
    }
    // --sessions: a refused session is the result (its line is printed).
    if (!s.ok()) return exit_status(s);
    if (!a.quiet)
        for (auto& p : sessions) std::printf("session %s closed\n", p->name().c_str());
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

// The options only connect takes.
int connect_only(const Args& a) {
    if (a.duration && a.cmd != "io") return usage_error("--duration is an option of io");
    if (a.paths_uuid || !a.path_uuids.empty() || a.no_info || a.cycles > 1 || a.sessions > 1 ||
        a.window || a.con_interval_ms)
        return usage_error("--paths-uuid, --path-uuid, --no-info, --only-cons, --cycles and "
                           "--sessions are options of connect");
    return 0;
}

int cmd_io(const Args& a) {
    if (int err = connect_only(a)) return err;
    if (!a.session_given || a.session.empty()) return usage_error("io needs --session NAME");
    if (a.servers.empty()) return usage_error("io needs --server ADDR");
    if (a.paths && a.paths != a.servers.size())
        return usage_error(
            rc::strf("--paths %lu but %zu --server given", a.paths, a.servers.size()));
    if (a.reads < 0 || a.writes < 0 || a.size < 0)
        return usage_error("io needs --reads N, --writes N and --size BYTES");
    if (a.exit_after_up) return usage_error("io does not take --exit-after-up");
    if (a.cons < 2) return usage_error("io needs --cons 2 or more (connection 0 carries no I/O)");
    rc::IoCmdConfig cfg;
    cfg.session = a.session;
    for (const auto& d : a.servers) {
        auto dst = rc::parse_addr(d);
        if (!dst.ok()) return usage_error(dst.status().msg());
        cfg.paths.push_back({std::nullopt, dst.value()});
    }
    for (const auto& [idx, sa] : a.srcs) {
        auto src = rc::parse_addr(sa);
        if (!src.ok()) return usage_error(src.status().msg());
        if (cfg.paths[idx].src) return usage_error("two --src for one --server");
        cfg.paths[idx].src = src.value();
    }
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
    cfg.duration = static_cast<long>(a.duration);
    cfg.ack_timeout = static_cast<uint8_t>(a.ack_timeout);
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
    if (int err = connect_only(a)) return err;
    // A second --server (and its --src): the second path of the cases that
    // need two (io-before-info-rejoin).
    if (a.servers.empty() || a.servers.size() > 2)
        return usage_error("bad needs one --server ADDR (two for the cases of two paths)");
    rc::BadConfig cfg;
    cfg.which = a.which;
    if (int err = one_path_addrs(a, &cfg.dst, &cfg.src)) return err;
    if (a.servers.size() == 2) {
        auto d = rc::parse_addr(a.servers[1]);
        if (!d.ok()) return usage_error(d.status().msg());
        cfg.dst2 = d.value();
        for (const auto& [idx, sa] : a.srcs) {
            if (idx != 1) continue;
            auto src = rc::parse_addr(sa);
            if (!src.ok()) return usage_error(src.status().msg());
            cfg.src2 = src.value();
        }
    }
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
