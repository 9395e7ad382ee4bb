// SPDX-License-Identifier: GPL-2.0
#include "session.h"

#include <cstdio>
#include <vector>

#include "uuid.h"

namespace rc {

Session::Session(Loop& loop, SessionConfig cfg)
    : loop_(loop), cfg_(std::move(cfg)), paths_uuid_(cfg_.paths_uuid ? *cfg_.paths_uuid : random_uuid()) {}

Status Session::open() {
    for (size_t i = 0; i < cfg_.paths.size(); ++i) {
        PathConfig pc;
        pc.src = cfg_.paths[i].src;
        pc.dst = cfg_.paths[i].dst;
        pc.port = cfg_.port;
        pc.session = cfg_.name;
        pc.paths_uuid = paths_uuid_;
        pc.sess_uuid = cfg_.paths[i].uuid ? *cfg_.paths[i].uuid : random_uuid();
        pc.cid_num = cfg_.cons;
        // The reference client marks the first path of a new session; the
        // later ones find the session the first one created (Path sets the
        // flag again after their connection 0, as the reference does).
        pc.first_conn = i == 0;
        pc.answer_hb = cfg_.heartbeat;
        pc.send_hb = cfg_.heartbeat;
        pc.verbose = cfg_.verbose;
        pc.io_depth = cfg_.io_depth;
        pc.ack_timeout = cfg_.ack_timeout;
        paths_.push_back(std::make_unique<Path>(loop_, pc));
        if (cfg_.verbose)
            std::fprintf(
                stderr,
                "opening path %zu of session '%s' (paths uuid %s, path uuid %s, %u connections)\n",
                i, cfg_.name.c_str(), format_uuid(paths_uuid_).c_str(),
                format_uuid(pc.sess_uuid).c_str(), pc.cid_num);
        Path& p = *paths_.back();
        if (cfg_.no_info) {
            // Connections, but no info request: the server sees a handshake
            // that stalls; the client holds what it has.
            if (cfg_.window || cfg_.interval_ms) {
                if (Status s = p.connect_paced(cfg_.only_cons, cfg_.window, cfg_.interval_ms, true);
                    !s.ok())
                    return s;
            } else if (Status s = p.connect_all(cfg_.only_cons); !s.ok()) {
                return s;
            }
            const unsigned made =
                cfg_.only_cons && cfg_.only_cons < pc.cid_num ? cfg_.only_cons : pc.cid_num;
            std::printf("path %s connecting: %u of %u connections, no info request\n",
                        p.name().c_str(), made, pc.cid_num);
            continue;
        }
        if (Status s = p.open(); !s.ok()) return s;
        std::printf("%s\n", p.summary().c_str());
    }
    return {};
}

bool Session::report_lost() {
    reported_.resize(paths_.size(), false);
    bool all = true;
    for (size_t i = 0; i < paths_.size(); ++i) {
        if (!paths_[i]->lost()) {
            all = false;
            continue;
        }
        if (!reported_[i]) {
            reported_[i] = true;
            std::printf("path %s lost: %s\n", paths_[i]->name().c_str(),
                        paths_[i]->lost_reason().c_str());
            std::fflush(stdout);
        }
    }
    return all;
}

// Holds while any path is up, as a multipath client does: a path the server
// closes is reported (one stdout line) and the others carry on. Ends with
// an error once every path is gone.
Status Session::hold(int seconds) { return hold_all(loop_, {this}, seconds); }

Status hold_all(Loop& loop, const std::vector<Session*>& sessions, int seconds) {
    auto some_all_lost = [&sessions] {
        bool any = false;
        for (Session* s : sessions) any = s->report_lost() || any;
        return any;
    };
    Status s = loop.wait_for(some_all_lost, seconds < 0 ? -1 : seconds * 1000,
                             "the end of the hold time");
    if (some_all_lost())
        return Status::error(ECONNRESET, "every path of a session was lost", Failure::Closed);
    if (s.err() == ETIMEDOUT || s.err() == EINTR) return {};
    return s;
}

void Session::close() {
    for (auto& p : paths_) {
        p->close();
        if (cfg_.verbose) {
            const auto& hb = p->hb_stats();
            std::fprintf(stderr,
                         "[%s] closed; heartbeats: sent %u, acked %u, received %u, answered %u\n",
                         p->name().c_str(), hb.sent, hb.acked, hb.received, hb.answered);
        }
    }
}

}  // namespace rc
