// SPDX-License-Identifier: GPL-2.0
// The client's single-threaded event loop: RDMA CM events, completion
// channels, SIGINT/SIGTERM (through a signalfd) and periodic ticks, all
// waited for with poll(2).
#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include "rdma.h"
#include "status.h"

namespace rc {

using Clock = std::chrono::steady_clock;

// What an rdma_cm_id's context points to.
class CmHandler {
public:
    // The event is acknowledged right after this returns: copy what is kept.
    virtual void on_cm_event(const rdma_cm_event& ev) = 0;

protected:
    ~CmHandler() = default;
};

// Owner of a completion channel (and the CQs on it).
class CqHandler {
public:
    virtual void on_cq_ready() = 0;
    // Called on every turn of the loop (heartbeat timers).
    virtual void tick(Clock::time_point now) = 0;

protected:
    ~CqHandler() = default;
};

class Loop {
public:
    // Blocks SIGINT and SIGTERM for the process and reads them from a
    // signalfd instead.
    static Expected<std::unique_ptr<Loop>> create();
    ~Loop();

    rdma_event_channel* channel() const { return ch_.get(); }
    void add(int fd, CqHandler* h);
    void remove(CqHandler* h);

    // Runs the loop until done() holds (ok), the timeout expires (ETIMEDOUT,
    // message: "timed out waiting for <what>"), or a signal arrives (EINTR).
    // A negative timeout waits without limit.
    Status wait_for(const std::function<bool()>& done, int timeout_ms, const char* what);
    // Runs the loop for this long, or until a signal (EINTR) or stop().
    Status run_for(int timeout_ms);
    bool interrupted() const { return interrupted_; }
    // Makes run_for / wait_for return at their next turn (done() true).
    void stop() { stopped_ = true; }

private:
    Loop() = default;
    void turn(int max_wait_ms);

    EventChannel ch_;
    int sigfd_ = -1;
    struct Source {
        int fd;
        CqHandler* handler;
    };
    std::vector<Source> sources_;
    bool interrupted_ = false;
    bool stopped_ = false;
};

}  // namespace rc
