// SPDX-License-Identifier: GPL-2.0
// A path's clock: its timer work and what the timer decides by. While the
// path connects, the handshake's deadline, counted from its first
// connection; once it is up, the heartbeat periods that went by without a
// word from the client.
//
// The path decides what follows (path_timer.cpp: the state, the log lines,
// the close, the heartbeat's post); this class keeps the timer's own state
// and its rules:
//
//   the missed periods (heard_locked(), hb_tick_locked()): under the
//     path's io lock, which the annotations name
//   the first connection's time (start()): written by the path's setup(),
//     before the path is known and before the timer is queued, then only
//     read by the timer: not guarded
//   the work item (make_work(), free_work()): made by setup(), freed by the
//     path's destructor, the pointer unchanged in between: not guarded.
//     Once the path is known it is queued under the io lock only
//     (rearm_locked(), heartbeats_locked()): the teardown sets the state
//     under it, then cancels (cancel_sync(), without it: the cancel waits
//     for a running timer, which takes it).
#pragma once

#include "core/env.h"
#include "core/lock.h"
#include "rt/types.h"

namespace core {

class PathClock {
public:
    // A handshake's deadline, from the path's first connection request:
    // well within the 30 s after which upstream lets a reconnect replace a
    // stalled path (a live client makes its connections in milliseconds).
    static constexpr rt::u32 kStallMs = 25000;

    // What a heartbeat period's end calls for: a heartbeat, nothing (wait
    // for the next), or the close (the client is gone).
    enum class Hb { Send, Wait, Dead };

    explicit PathClock(PathIoLock& path) : path_(&path) {}
    PathClock(const PathClock&) = delete;
    PathClock& operator=(const PathClock&) = delete;

    // Path::setup(): the timer's work item (owner and kind as
    // rtrs_env_work_new() takes them); false without memory.
    bool make_work(void* owner, unsigned int kind);
    // The path's destructor: frees it (if make_work() made it).
    void free_work();

    // The end of setup(): the path's first connection is now; the timer
    // runs at the handshake's deadline.
    void start(rt::u64 now_ms);
    // Connecting: true when the handshake's deadline has passed at now;
    // *age is the time since the first connection, and when it returns
    // false, *left_ms the time until the deadline.
    bool handshake_due(rt::u64 now_ms, rt::u64* age, rt::u32* left_ms) const;

    // Traffic from the client: no period missed.
    void heard_locked() REQUIRES(path_->io_lock()) { hb_missed_ = 0; }
    // Up: one heartbeat period passed; the missed count is of periods
    // without traffic from the client. A heartbeat goes out after a period
    // that saw traffic, a silent one only counts, past wire::kHbMissedMax
    // the client is gone. *silent: the periods gone by without a word from the
    // client, this one included (the miss trace event's count).
    Hb hb_tick_locked(rt::u32* silent) REQUIRES(path_->io_lock());

    // The timer's next run, delay_ms from now.
    void rearm_locked(rt::u32 delay_ms) REQUIRES(path_->io_lock());
    // The handshake is done: the deadline's run is replaced by the
    // heartbeats' (every wire::kHbIntervalMs).
    void heartbeats_locked() REQUIRES(path_->io_lock());
    // Cancels the timer and waits for a run in progress (nothing if
    // make_work() made none). (EXCLUDES states the rule more than it
    // checks it: without the analysis' precise setting, a call under the
    // path's Guard(io_lock_) is not caught. The REQUIRES above are
    // checked: a call with no io lock held fails.)
    void cancel_sync() EXCLUDES(path_->io_lock());

private:
    PathIoLock* path_;
    rtrs_env_work* work_ = nullptr;  // (not guarded: see above)
    rt::u64 first_conn_ms_ = 0;      // (not guarded: see above)
    rt::u32 hb_missed_ GUARDED_BY(path_->io_lock()) = 0;
};

}  // namespace core
