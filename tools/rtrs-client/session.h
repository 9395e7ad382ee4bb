// SPDX-License-Identifier: GPL-2.0
// A client session: one or more paths sharing one paths uuid, opened one
// after the other as the reference client opens them (the first path with
// first_conn set, the others joining the session it created).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "addr.h"
#include "loop.h"
#include "path.h"

namespace rc {

struct SessionConfig {
    std::string name;
    struct Ends {
        std::optional<Addr> src;
        Addr dst;
        std::optional<wire::Uuid> uuid;  // the path's uuid; random if not given
    };
    std::vector<Ends> paths;
    uint16_t port = 1234;
    uint16_t cons = 2;
    bool heartbeat = true;
    bool verbose = true;
    uint32_t io_depth = 0;  // see PathConfig::io_depth
    uint8_t ack_timeout = 0;  // see PathConfig::ack_timeout
    std::optional<wire::Uuid> paths_uuid;  // the session's; random if not given
    // A handshake that stops half-way: each path makes only its first
    // only_cons connections (0: all of them) and sends no info request.
    bool no_info = false;
    uint16_t only_cons = 0;
    // With no_info (FAILURES.md row 27): up to window connection requests
    // in flight at once, or interval_ms between connections; either prints
    // a line for each accepted connection (Path::connect_paced).
    unsigned window = 0;
    int interval_ms = 0;
};

class Session {
public:
    Session(Loop& loop, SessionConfig cfg);

    // Opens every path; prints "path ... up: ..." on stdout for each (with
    // no_info: "path ... connecting: K of M connections, no info request").
    Status open();
    // Keeps the paths up for this many seconds (negative: until SIGINT or
    // SIGTERM), answering heartbeats. Fails (kind Closed) when the server
    // drops a path.
    Status hold(int seconds);
    // Prints one stdout line for each path lost since the last call; true
    // once every path is lost.
    bool report_lost();
    void close();
    const std::vector<std::unique_ptr<Path>>& paths() const { return paths_; }
    const wire::Uuid& paths_uuid() const { return paths_uuid_; }
    const std::string& name() const { return cfg_.name; }

private:
    Loop& loop_;
    SessionConfig cfg_;
    wire::Uuid paths_uuid_;
    std::vector<std::unique_ptr<Path>> paths_;
    std::vector<bool> reported_;  // report_lost(): lost paths already printed
};

// Holds several sessions at once (see Session::hold): ends after seconds
// (negative: at SIGINT or SIGTERM), or with kind Closed once every path of
// some session is lost.
Status hold_all(Loop& loop, const std::vector<Session*>& sessions, int seconds);

}  // namespace rc
