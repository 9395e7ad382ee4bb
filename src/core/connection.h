// SPDX-License-Identifier: GPL-2.0
// One RDMA CM connection of a path: its queue pair, what its send queue
// holds, and what waits for room there.
//
// Send queue accounting: every post counts its work requests. A signaled
// completion means everything posted before it completed too (a queue pair
// completes in order), so `done` moves up to where that post ended. Only
// some posts are signaled: those whose completion their caller needs; of
// the others (responses), one in `signal_interval`, and any after which
// the unsignaled tail would reach half the queue. So when a post finds no
// room, a signaled completion is still to come (the tail is less than
// half, the queue more than half used), and what does not fit waits in
// `pending`, in order, for it. All of it under the connection's own lock.
//
// Ownership on the I/O path (doc/design.md, "The I/O path's ownership"):
// a request arrives on a connection and is answered on it; while it is in
// flight it, its send queue's accounting, its statistics and latency
// histograms are the connection's. Nothing on the way from the arrival to
// the response's completion takes a lock or writes a cache line that
// another connection of the path takes or writes:
//   lock_       the connection's lock (CON_IO): its send queue, what
//               waits for room, whether it may post (io_), the requests it
//               holds (inflight_), the histograms; taken once per event
//               (an arrival, an invalidation's completion, an answer, a
//               signaled send's completion), from its CQ's context or the
//               ULP's answer on any CPU
//   cq_         its completion context (lock.h: CqContext): the
//               statistics, written by dispatch() in that context only
//   heard_      written by its completion context, taken by the timer
// The path keeps what is shared and rarely written: its state (set under
// its io lock, read without it where a stale value is harmless), the
// chunks and their registrations (unchanged while it is up).
//
// io_ is what makes posting without the path's lock safe: Idle until the
// path comes up, Up while it serves I/O, Stopped from the teardown's first
// step on (stop_io(), under this lock, before the disconnect and the
// drain). Every post checks it under the same lock, so none begins after
// stop_io() returned, and the drain that follows is the last thing that
// touches the queue pair: no post can follow the drain's own work request,
// and no completion comes after it.
#pragma once

#include "core/env.h"
#include "core/histogram.h"
#include "core/lock.h"
#include "core/server.h"
#include "rt/array.h"
#include "rt/errno.h"
#include "rt/list.h"
#include "rt/result.h"
#include "rt/types.h"

namespace core {

// Defined before Path (path.h includes this header first), so that Path's
// functions can name a connection's lock in their annotations.
class Path;
class Request;
struct PendingTag;

// Whether a connection may post I/O (see the header).
enum class ConIo : rt::u8 { Idle, Up, Stopped };

// Read and write counts of requests and their bytes (data and user
// header, as upstream counts them).
struct Stats {
    rt::u64 read_cnt = 0;
    rt::u64 read_bytes = 0;
    rt::u64 write_cnt = 0;
    rt::u64 write_bytes = 0;
};

class Connection {
public:
    Connection(Path& path, Server& server, rt::u16 cid) : path_(&path), server_(&server), cid_(cid) {}
    ~Connection();
    // Its buffers on the device (before the path lets the device go).
    void free_buffers();

    // Queue sizes for connection cid of a path on a device: ENOSPC with
    // the reason when the device cannot hold what the session needs.
    static rt::Result<rtrs_env_con_sizes> sizes(rt::u16 cid, const rtrs_env_dev_attrs& dev,
                                                rt::u32 queue_depth, rt::u32 mrs_num,
                                                bool always_invalidate, const char** why);
    // What a connection of these sizes makes the kernel allocate, about:
    // the budget's estimate (soft-RoCE's queue entries, the largest seen).
    static rt::u64 cost(const rtrs_env_con_sizes& sizes);
    // The QP and CQ on the cm_id of its connection request; one response
    // post in signal_interval is signaled.
    rt::Result<void> create(rtrs_env_cm* cm, const rtrs_env_con_sizes& sizes,
                            rt::u32 signal_interval);

    Path& path() const { return *path_; }
    rt::u16 cid() const { return cid_; }
    rtrs_env_con* env() const { return env_; }
    bool created() const { return env_ != nullptr; }

    Lock& lock() RETURN_CAPABILITY(lock_) { return lock_; }
    CqContext& cq() RETURN_CAPABILITY(cq_) { return cq_; }

    // Whether it may post (see the header). start_io(): the path comes up
    // (Idle -> Up; a Stopped connection stays so); stop_io(): the
    // teardown's first step, before the drain.
    ConIo io() const REQUIRES(lock_) { return io_; }
    void start_io() EXCLUDES(lock_);
    void stop_io() EXCLUDES(lock_);

    // Requests of this connection with the ULP: counted at the dispatch,
    // down at the answer; read without the lock by the stats.
    rt::u32 inflight() const { return __atomic_load_n(&inflight_, __ATOMIC_RELAXED); }
    // (Atomic adds: one instruction on the connection's own line; the
    // lock orders them with the teardown's reads.)
    void inflight_up() REQUIRES(lock_) { __atomic_add_fetch(&inflight_, 1, __ATOMIC_RELAXED); }
    // False when there was none.
    bool inflight_down() REQUIRES(lock_) {
        if (__builtin_expect(inflight_ == 0, 0)) return false;
        __atomic_sub_fetch(&inflight_, 1, __ATOMIC_RELAXED);
        return true;
    }
    rt::u32 inflight_locked() const REQUIRES(lock_) { return inflight_; }

    // Traffic from the client since the timer last looked: set by the
    // completion context, taken (and cleared) by the path's timer.
    void heard() { __atomic_store_n(&heard_, true, __ATOMIC_RELAXED); }
    bool take_heard() { return __atomic_exchange_n(&heard_, false, __ATOMIC_RELAXED); }

    // The statistics, written by dispatch() in the completion context;
    // read and reset without it. Relaxed atomic adds on the connection's
    // own counters (one instruction each; a plain load and store would be
    // three, and a reset racing one could be lost).
    void count(bool read, rt::u64 bytes) REQUIRES(cq_) {
        if (read) {
            __atomic_add_fetch(&stats_.read_cnt, 1, __ATOMIC_RELAXED);
            __atomic_add_fetch(&stats_.read_bytes, bytes, __ATOMIC_RELAXED);
        } else {
            __atomic_add_fetch(&stats_.write_cnt, 1, __ATOMIC_RELAXED);
            __atomic_add_fetch(&stats_.write_bytes, bytes, __ATOMIC_RELAXED);
        }
    }
    void add_stats_to(Stats& sum) const NO_THREAD_SAFETY_ANALYSIS;
    void reset_stats() NO_THREAD_SAFETY_ANALYSIS;

    // The latency histograms (core/path.h: format_latency()), recorded
    // under the lock.
    Histogram lat_ulp GUARDED_BY(lock_);
    Histogram lat_net GUARDED_BY(lock_);

    // Send queue (its lock held).
    bool room(rt::u32 n) const REQUIRES(lock_) { return sq_size_ - static_cast<rt::u32>(posted_ - done_) >= n; }
    // Posts n work requests and counts them. The last one is signaled when
    // the caller set it so, or when the accounting above wants it; *stamp
    // comes back from signaled_done() if it was.
    int post(rtrs_env_wr* wrs, rt::u32 n, const rt::u64* stamp = nullptr) REQUIRES(lock_);
    // The I/O path's posts (rtrs_env_post_resp(), rtrs_env_post_local_inv()),
    // counted the same way. A response of n work requests: r.signaled is
    // set here (the accounting's choice); the invalidation is signaled.
    int post_resp(rtrs_env_resp& r, rt::u32 n, const rt::u64* stamp) REQUIRES(lock_);
    int post_local_inv(rt::u32 rkey, rtrs_core_cqe* cqe) REQUIRES(lock_);
    // A signaled work request completed: its post and all before are done.
    // True, with *stamp set, if that post had a stamp.
    bool signaled_done(rt::u64* stamp = nullptr) REQUIRES(lock_);
    rt::u32 sq_size() const { return sq_size_; }
    rt::u32 sq_used() const REQUIRES(lock_) { return static_cast<rt::u32>(posted_ - done_); }

    rt::List<Request, PendingTag> pending GUARDED_BY(lock_);

    rtrs_core_cqe recv_cqe{};
    rtrs_core_cqe send_cqe{};
    // Connection 0: the buffer the info request arrives in.
    rtrs_env_buf info_buf{};

    // Under the server lock: the CM said it is established; the CM said
    // it ended (disconnected, failed, or its device goes away), after
    // which the CM tells its cm_id nothing more.
    bool established GUARDED_BY(server_->lock()) = false;
    bool cm_ended GUARDED_BY(server_->lock()) = false;

    // Charged to the module's memory budget (given back when freed).
    rt::u64 charged = 0;

private:
    // Whether a post of n work requests that asked for no completion gets
    // one (see the header); counts it.
    bool must_signal(rt::u32 n) REQUIRES(lock_);
    // n work requests were posted, the last one signaled or not.
    void posted(rt::u32 n, bool signaled, const rt::u64* stamp) REQUIRES(lock_);

    Path* path_;
    Server* server_;  // the path's (for the annotations)
    rt::u16 cid_;
    rtrs_env_con* env_ = nullptr;
    Lock lock_;  // CON_IO
    CqContext cq_;
    ConIo io_ GUARDED_BY(lock_) = ConIo::Idle;
    rt::u32 inflight_ GUARDED_BY(lock_) = 0;
    bool heard_ = false;  // (atomic: heard(), take_heard())
    Stats stats_ GUARDED_BY(cq_);
    // Set by create() (before any post), then read only: sq_size_,
    // interval_, tail_max_, ends_ (whose entries are under the lock).
    rt::u32 sq_size_ = 0;
    rt::u64 posted_ GUARDED_BY(lock_) = 0;
    rt::u64 done_ GUARDED_BY(lock_) = 0;
    rt::u32 interval_ = 1;      // signal one post in this many
    rt::u32 tail_max_ = 0;      // unsignaled work requests allowed after a signaled one
    rt::u32 unasked_ GUARDED_BY(lock_) = 0;  // posts without a completion asked, modulo interval_
    rt::u32 tail_ GUARDED_BY(lock_) = 0;     // work requests since the last signaled one
    // Where each outstanding signaled post ended, and its stamp, oldest first.
    struct End {
        rt::u64 end;
        rt::u64 stamp;
        bool stamped;
    };
    rt::Array<End> ends_;
    rt::u32 ends_head_ GUARDED_BY(lock_) = 0;
    rt::u32 ends_count_ GUARDED_BY(lock_) = 0;
};

// The send queue's accounting, inline: the I/O path runs it per request.

inline bool Connection::must_signal(rt::u32 n) {
    // Posts the caller did not ask a completion for: one in interval_, and
    // any after which the unsignaled tail would reach half the queue.
    if (++unasked_ >= interval_) unasked_ = 0;
    return unasked_ == 0 || tail_ + n >= tail_max_;
}

inline void Connection::posted(rt::u32 n, bool signaled, const rt::u64* stamp) {
    posted_ += n;
    if (!signaled) {
        tail_ += n;
        return;
    }
    tail_ = 0;
    // The queue holds at most sq_size_ requests, so at most that many
    // signaled ones are outstanding.
    rt::u32 at = ends_head_ + ends_count_;
    if (at >= sq_size_) at -= sq_size_;
    End& e = ends_[at];
    e.end = posted_;
    e.stamp = stamp ? *stamp : 0;
    e.stamped = stamp != nullptr;
    ++ends_count_;
}

inline int Connection::post_resp(rtrs_env_resp& r, rt::u32 n, const rt::u64* stamp) {
    if (__builtin_expect(!room(n), 0)) {
        rtrs_env_warn("rtrs core: post without room in the send queue");
        return -rt::errc::nobufs;
    }
    r.signaled = must_signal(n);
    int err = rtrs_env_post_resp(env_, &r);
    if (__builtin_expect(err != 0, 0)) return err;
    posted(n, r.signaled, stamp);
    return 0;
}

inline int Connection::post_local_inv(rt::u32 rkey, rtrs_core_cqe* cqe) {
    if (__builtin_expect(!room(1), 0)) {
        rtrs_env_warn("rtrs core: post without room in the send queue");
        return -rt::errc::nobufs;
    }
    int err = rtrs_env_post_local_inv(env_, rkey, cqe);
    if (__builtin_expect(err != 0, 0)) return err;
    posted(1, true, nullptr);
    return 0;
}

inline bool Connection::signaled_done(rt::u64* stamp) {
    if (__builtin_expect(ends_count_ == 0, 0)) {
        rtrs_env_warn("rtrs core: a completion nobody posted");
        return false;
    }
    const End& e = ends_[ends_head_];
    done_ = e.end;
    const bool stamped = e.stamped;
    if (stamped && stamp) *stamp = e.stamp;
    if (++ends_head_ == sq_size_) ends_head_ = 0;
    --ends_count_;
    return stamped;
}

}  // namespace core
