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
    };
    std::vector<Ends> paths;
    uint16_t port = 1234;
    uint16_t cons = 2;
    bool heartbeat = true;
    bool verbose = true;
    uint32_t io_depth = 0;  // see PathConfig::io_depth
};

class Session {
public:
    Session(Loop& loop, SessionConfig cfg);

    // Opens every path; prints "path ... up: ..." on stdout for each.
    Status open();
    // Keeps the paths up for this many seconds (negative: until SIGINT or
    // SIGTERM), answering heartbeats. Fails (kind Closed) when the server
    // drops a path.
    Status hold(int seconds);
    void close();
    const std::vector<std::unique_ptr<Path>>& paths() const { return paths_; }

private:
    Loop& loop_;
    SessionConfig cfg_;
    wire::Uuid paths_uuid_;
    std::vector<std::unique_ptr<Path>> paths_;
};

}  // namespace rc
