// SPDX-License-Identifier: GPL-2.0
// The teardown of a path, step by step (see the states in path.h). It runs
// in the path's close work; it stops in AwaitingAnswers while the ULP still
// holds requests (the last answer queues it again), and in
// AwaitingDisconnect until the client answered every disconnect or the
// wait's deadline came (the last answer, or the deadline, queues it).
#include "core/lock.h"
#include "core/log.h"
#include "core/module.h"
#include "core/path.h"
#include "core/server.h"
#include "core/session.h"

namespace core {

void Path::close_locked(CloseReason why) {
    if (state_ >= PathState::Stopping) return;
    const bool was_up = state_ == PathState::Up;
    set_state_locked(PathState::Stopping);
    reason_ = why;
    Log(kInfo).put(sess_->named() ? sess_->name() : "(unnamed)").put(": closing path ").put(name_)
        .put(" (").put(reason_name(why)).put(')');
    rtrs_env_trace_path_down(sess_name(), name_, static_cast<int>(why), reason_name(why), was_up);
    rtrs_env_work_queue(close_work_, 0);
}

void Path::request_close(CloseReason why) {
    Guard g(io_lock_);
    close_locked(why);
}

void Path::close_work() {
    PathState st;
    {
        Guard g(io_lock_);
        st = state_;
    }
    if (st == PathState::Stopping) {
        // No new work: the info exchange and the timer are done with, and
        // cannot come back (both look at the state first).
        rtrs_env_work_cancel_sync(info_work_);
        clock_.cancel_sync();
        {
            // A connection request that got in before the state changed
            // finishes adding its connection first.
            Guard g(server().lock());
            Guard io(io_lock_);
            set_state_locked(PathState::Draining);
        }
        // Each connection stops posting (under its lock, where each of its
        // posts looks first: core/connection.h), before its drain: so the
        // drain's work request is the last one posted, and no completion
        // comes after it.
        for (Connection* c : cons_)
            if (c && c->created()) c->stop_io();
        for (Connection* c : cons_)
            if (c && c->created()) rtrs_env_con_disconnect(c->env());
        // No completion of the path runs after this.
        for (Connection* c : cons_)
            if (c && c->created()) rtrs_env_con_drain(c->env());
        drop_pending();
        {
            Guard io(io_lock_);
            set_state_locked(PathState::AwaitingAnswers);
        }
        // After the state: an answer that brings its connection's count to
        // zero reads the state after that, under the connection's lock
        // that all_answered() takes (request.cpp: answered_locked()).
        if (!all_answered()) return;  // the last answer queues us again
        Guard io(io_lock_);
        set_state_locked(PathState::Leaving);
    } else if (st == PathState::AwaitingAnswers) {
        if (!all_answered()) return;
        Guard io(io_lock_);
        if (state_ != PathState::AwaitingAnswers) return;  // (a second run)
        set_state_locked(PathState::Leaving);
    } else if (st == PathState::AwaitingDisconnect) {
        if (disconnects_waited()) destroy();
        return;
    } else {
        return;  // already past this (a second run of the work)
    }
    leave();
    {
        Guard g(server().lock());
        Guard io(io_lock_);
        set_state_locked(PathState::AwaitingDisconnect);
        disconnect_deadline_ms_ = rtrs_env_now_ms() + kDisconnectWaitMs;
    }
    if (disconnects_waited()) destroy();
}

// Leaving: out of sysfs first (the files' users drain there), then the ULP
// hears of it.
void Path::leave() {
    Server& srv = server();
    {
        Guard g(srv.lock());
        if (sysfs_) {
            // debugfs first: its files call into the path like sysfs's.
            rtrs_env_debugfs_path_del(debugfs_);
            debugfs_ = nullptr;
            rtrs_env_sysfs_path_del(sysfs_);
            sysfs_ = nullptr;
            if (__atomic_sub_fetch(&sess_->visible, 1, __ATOMIC_RELAXED) == 0) {
                rtrs_env_debugfs_sess_del(sess_->debugfs);
                sess_->debugfs = nullptr;
                rtrs_env_sysfs_sess_del(sess_->sysfs);
                sess_->sysfs = nullptr;
            }
        }
    }
    if (counted_up_) {
        counted_up_ = false;
        sess_->link_down(static_cast<int>(reason_), reason_name(reason_));
    }
}

// AwaitingDisconnect: true when it is over (every disconnect answered, or
// the time is up), the state then Destroying; else the work is queued for
// the deadline (an answer brings it sooner, on_cm_end()).
bool Path::disconnects_waited() {
    const rt::u64 now = rtrs_env_now_ms();
    Guard g(server().lock());
    Guard io(io_lock_);
    if (state_ != PathState::AwaitingDisconnect) return false;
    const bool done = disconnects_done_locked();
    if (!done && now < disconnect_deadline_ms_) {
        rtrs_env_work_requeue(close_work_, static_cast<unsigned int>(disconnect_deadline_ms_ - now));
        return false;
    }
    if (!done)
        Log(kInfo).put(sess_->named() ? sess_->name() : "(unnamed)").put(": path ").put(name_)
            .put(": the client did not answer the disconnect within ")
            .dec(rt::u64{kDisconnectWaitMs}).put(" ms");
    set_state_locked(PathState::Destroying);
    // Nothing queues the work from here on; a run still pending (the
    // deadline's) must not come after the path is freed.
    rtrs_env_work_cancel(close_work_);
    for (const Request& r : chunks_.reqs())
        if (r.st() != ReqState::Free) {
            rtrs_env_warn("rtrs core: a request not done at the end of its path");
            break;
        }
    return true;
}

// Destroying: QPs and CQs; then what hangs on the device (buffers,
// registrations, the chunks' mappings, the PD with the device's last
// path); then the cm_ids; the path leaves its session and is freed.
// The cm_ids go last: a device's removal, once our client's part returned
// (with the PD closed), goes on in rdma_cm, which waits until every cm_id
// on the device is destroyed and then lets the driver free the device:
// nothing of ours may be on it by then.
void Path::destroy() {
    Server& srv = server();
    for (Connection* c : cons_)
        if (c && c->created()) rtrs_env_con_destroy_qp(c->env());
    Log(kInfo).put(sess_->named() ? sess_->name() : "(unnamed)").put(": path ").put(name_)
        .put(" closed (").put(reason_name(reason_)).put(')');

    // The mappings of the session's chunks go while the path is still
    // listed (a session without paths frees its chunks). The connections
    // stay (their CM events may still come, until their cm_ids go).
    free_resources(true).reset();
    for (Connection* c : cons_)
        if (c && c->created()) rtrs_env_con_destroy(c->env());
    for (rt::usize i = 0; i < cons_.size(); ++i) {
        rt::destroy(cons_[i]);
        cons_[i] = nullptr;
    }
    Session* sess = sess_;
    rtrs_env_waiter* wake = nullptr;
    {
        Guard g(srv.lock());
        sess->paths.remove(*this);
        if (--sess->paths_num == 0) wake = srv.free_session_locked(*sess);
    }
    rt::destroy(this);
    // Last: the closer frees the server as soon as it wakes.
    if (wake) rtrs_env_waiter_done(wake);
}

// The queue pairs drained: what waited for room never goes.
void Path::drop_pending() {
    for (Connection* c : cons_) {
        if (!c) continue;
        Guard g(c->lock());
        while (Request* r = c->pending.pop_front()) {
            r->pending = Pending::None;
            release_locked(*r);  // (a queued answer was counted as answered)
        }
    }
}

bool Path::all_answered() {
    for (Connection* c : cons_) {
        if (!c) continue;
        Guard g(c->lock());
        if (c->inflight_locked() != 0) return false;
    }
    return true;
}

}  // namespace core
