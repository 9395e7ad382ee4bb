// SPDX-License-Identifier: GPL-2.0
// Connections: queue sizes, and the send queue's accounting.
#include "core/connection.h"

#include "core/module.h"
#include "core/path.h"
#include "core/request.h"
#include "rt/errno.h"

namespace core {

namespace {
// Work requests of one response, at most: data write, re-registration,
// remote invalidation, the message with the immediate.
constexpr rt::u32 kMaxChainWrs = 4;
// The smallest send queue that still works (one response, or one batch of
// registrations, at a time).
constexpr rt::u32 kMinSendWr = RTRS_ENV_MAX_CHAIN + 1;
// The drain's own work request on each queue (ib_drain_qp).
constexpr rt::u32 kDrainWrs = 1;
}  // namespace

rt::Result<rtrs_env_con_sizes> Connection::sizes(rt::u16 cid, const rtrs_env_dev_attrs& dev,
                                                 rt::u32 queue_depth, rt::u32 mrs_num,
                                                 bool always_invalidate, const char** why) {
    rtrs_env_con_sizes s{};
    rt::u64 send, recv;
    if (cid == 0) {
        // Service traffic: the info exchange (a registration per region,
        // then the answer) and heartbeats with their acks.
        recv = wire::kServiceConQueueDepth + 1;
        send = rt::u64{wire::kServiceConQueueDepth} * 2 + 2 + mrs_num + 1;
    } else {
        // One receive per chunk (the client may use them all on one
        // connection); per request a local invalidation and a response.
        recv = rt::u64{queue_depth} + 1;
        send = rt::u64{queue_depth} * ((always_invalidate ? 1 : 0) + kMaxChainWrs) + 1;
    }
    // ib_drain_qp() posts one work request of its own on each queue, and
    // each completes in the CQ: the queues are made one larger than what
    // we post, and the device must hold that.
    recv += kDrainWrs;
    if (recv > dev.max_qp_wr) {
        *why = "the device has fewer receive work requests per queue than sess_queue_depth needs";
        return rt::err(rt::errc::nospc);
    }
    send += kDrainWrs;
    // More than the device holds is not needed: what does not fit waits.
    if (send > dev.max_qp_wr) send = dev.max_qp_wr;
    if (send + recv > dev.max_cqe) send = dev.max_cqe > recv ? dev.max_cqe - recv : 0;
    if (send < kMinSendWr + kDrainWrs) {
        *why = "the device's queues are too small for a connection";
        return rt::err(rt::errc::nospc);
    }
    s.max_send_wr = static_cast<rt::u32>(send);
    s.max_recv_wr = static_cast<rt::u32>(recv);
    s.cq_size = static_cast<rt::u32>(send + recv);
    s.comp_vector = dev.num_comp_vectors ? cid % dev.num_comp_vectors : 0;
    return s;
}

rt::u64 Connection::cost(const rtrs_env_con_sizes& sizes) {
    // A send queue entry with its scatter list, a receive entry, a CQ
    // entry (soft-RoCE: about 200, 100 and 80 bytes), and ours per send,
    // with room for the rest (its QP and CQ objects, their rounding): a
    // flood of connections measured 1348 KiB each at the default queue
    // depth on 6.1 (MemAvailable); this says 1421.
    constexpr rt::u64 kSendEntry = 320, kRecvEntry = 160, kCqEntry = 160;
    return rt::u64{sizes.max_send_wr} * (kSendEntry + sizeof(End)) +
           rt::u64{sizes.max_recv_wr} * kRecvEntry + rt::u64{sizes.cq_size} * kCqEntry +
           sizeof(Connection);
}

rt::Result<void> Connection::create(rtrs_env_cm* cm, const rtrs_env_con_sizes& sizes,
                                    rt::u32 signal_interval) {
    // What we may post: all but the drain's work request.
    sq_size_ = sizes.max_send_wr - kDrainWrs;
    ends_ = RT_TRY(rt::Array<End>::make(rt::Gfp::kernel, sq_size_));
    interval_ = signal_interval;  // 0 acts as 1: every post signaled
    // Less than half the queue: see the header. The queue holds at least
    // kMinSendWr, so a chain of kMaxChainWrs still fits beside the tail.
    tail_max_ = sq_size_ / 2;
    recv_cqe.owner = this;
    recv_cqe.kind = kCqeRecv;
    send_cqe.owner = this;
    send_cqe.kind = kCqeSend;
    if (!lock_.init(RTRS_ENV_LOCK_CON_IO)) return rt::err(rt::errc::nomem);
    env_ = rtrs_env_con_create(cm, path_->dev().env(), &sizes, lock_.raw(), this);
    if (!env_) return rt::err(rt::errc::nomem);
    return {};
}

Connection::~Connection() {
    if (!pending.empty()) rtrs_env_warn("rtrs core: connection freed with requests waiting");
    if (charged) module()->release_chunk_mem(charged);
    free_buffers();
    if (lock_) rtrs_env_lock_free(lock_.raw());
}

void Connection::free_buffers() {
    if (info_buf.cpu) rtrs_env_buf_free(path_->dev().env(), &info_buf);
    info_buf.cpu = nullptr;
}

void Connection::start_io() {
    Guard g(lock_);
    if (io_ == ConIo::Idle) io_ = ConIo::Up;
}

void Connection::stop_io() {
    Guard g(lock_);
    io_ = ConIo::Stopped;
}

void Connection::add_stats_to(Stats& sum) const {
    sum.read_cnt += __atomic_load_n(&stats_.read_cnt, __ATOMIC_RELAXED);
    sum.read_bytes += __atomic_load_n(&stats_.read_bytes, __ATOMIC_RELAXED);
    sum.write_cnt += __atomic_load_n(&stats_.write_cnt, __ATOMIC_RELAXED);
    sum.write_bytes += __atomic_load_n(&stats_.write_bytes, __ATOMIC_RELAXED);
}

void Connection::reset_stats() {
    __atomic_store_n(&stats_.read_cnt, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&stats_.read_bytes, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&stats_.write_cnt, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&stats_.write_bytes, 0, __ATOMIC_RELAXED);
    Guard g(lock_);
    lat_ulp.reset();
    lat_net.reset();
}

int Connection::post(rtrs_env_wr* wrs, rt::u32 n, const rt::u64* stamp) {
    if (n == 0) {
        rtrs_env_warn("rtrs core: a post of no work requests");
        return -rt::errc::inval;
    }
    if (!room(n)) {
        rtrs_env_warn("rtrs core: post without room in the send queue");
        return -rt::errc::nobufs;
    }
    rtrs_env_wr& last = wrs[n - 1];
    if (!last.signaled && must_signal(n)) last.signaled = 1;
    int err = rtrs_env_post_send(env_, wrs, n);
    if (err) return err;
    posted(n, last.signaled, stamp);
    return 0;
}

}  // namespace core
