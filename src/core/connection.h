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
// `pending`, in order, for it. All of it under the path's io lock.
#pragma once

#include "core/env.h"
#include "core/lock.h"
#include "core/path.h"
#include "core/request.h"
#include "rt/array.h"
#include "rt/errno.h"
#include "rt/list.h"
#include "rt/result.h"
#include "rt/types.h"

namespace core {

class Path;
// (request.h may be the one being read: path.h includes this header.)
class Request;
struct PendingTag;

class Connection {
public:
    Connection(Path& path, rt::u16 cid) : path_(&path), cid_(cid) {}
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

    // Send queue (io lock held).
    bool room(rt::u32 n) const REQUIRES(path_->io_lock()) { return sq_size_ - static_cast<rt::u32>(posted_ - done_) >= n; }
    // Posts n work requests and counts them. The last one is signaled when
    // the caller set it so, or when the accounting above wants it; *stamp
    // comes back from signaled_done() if it was.
    int post(rtrs_env_wr* wrs, rt::u32 n, const rt::u64* stamp = nullptr) REQUIRES(path_->io_lock());
    // The I/O path's posts (rtrs_env_post_resp(), rtrs_env_post_local_inv()),
    // counted the same way. A response of n work requests: r.signaled is
    // set here (the accounting's choice); the invalidation is signaled.
    int post_resp(rtrs_env_resp& r, rt::u32 n, const rt::u64* stamp) REQUIRES(path_->io_lock());
    int post_local_inv(rt::u32 rkey, rtrs_core_cqe* cqe) REQUIRES(path_->io_lock());
    // A signaled work request completed: its post and all before are done.
    // True, with *stamp set, if that post had a stamp.
    bool signaled_done(rt::u64* stamp = nullptr) REQUIRES(path_->io_lock());
    rt::u32 sq_size() const { return sq_size_; }
    rt::u32 sq_used() const REQUIRES(path_->io_lock()) { return static_cast<rt::u32>(posted_ - done_); }

    rt::List<Request, PendingTag> pending GUARDED_BY(path_->io_lock());

    rtrs_core_cqe recv_cqe{};
    rtrs_core_cqe send_cqe{};
    // Connection 0: the buffer the info request arrives in.
    rtrs_env_buf info_buf{};

    // Under the server lock: the CM said it is established; the CM said
    // it ended (disconnected, failed, or its device goes away), after
    // which the CM tells its cm_id nothing more.
    bool established GUARDED_BY(path_->server().lock()) = false;
    bool cm_ended GUARDED_BY(path_->server().lock()) = false;

    // Charged to the module's memory budget (given back when freed).
    rt::u64 charged = 0;

private:
    // Whether a post of n work requests that asked for no completion gets
    // one (see the header); counts it.
    bool must_signal(rt::u32 n) REQUIRES(path_->io_lock());
    // n work requests were posted, the last one signaled or not.
    void posted(rt::u32 n, bool signaled, const rt::u64* stamp) REQUIRES(path_->io_lock());

    Path* path_;
    rt::u16 cid_;
    rtrs_env_con* env_ = nullptr;
    // Set by create() (before any post), then read only: sq_size_,
    // interval_, tail_max_, ends_ (whose entries are under the io lock).
    rt::u32 sq_size_ = 0;
    rt::u64 posted_ GUARDED_BY(path_->io_lock()) = 0;
    rt::u64 done_ GUARDED_BY(path_->io_lock()) = 0;
    rt::u32 interval_ = 1;      // signal one post in this many
    rt::u32 tail_max_ = 0;      // unsignaled work requests allowed after a signaled one
    rt::u32 unasked_ GUARDED_BY(path_->io_lock()) = 0;  // posts without a completion asked, modulo interval_
    rt::u32 tail_ GUARDED_BY(path_->io_lock()) = 0;     // work requests since the last signaled one
    // Where each outstanding signaled post ended, and its stamp, oldest first.
    struct End {
        rt::u64 end;
        rt::u64 stamp;
        bool stamped;
    };
    rt::Array<End> ends_;
    rt::u32 ends_head_ GUARDED_BY(path_->io_lock()) = 0;
    rt::u32 ends_count_ GUARDED_BY(path_->io_lock()) = 0;
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
