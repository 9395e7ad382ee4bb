// SPDX-License-Identifier: GPL-2.0
// The data plane. A client RDMA-writes data, its ULP header and the RTRS
// request into one of the session's chunks and signals with an immediate
// (chunk and offset of the request header). We hand data and header to the
// ULP; when it answers, a read's data is RDMA-written into the client's
// buffer, then the response immediate goes out. With always_invalidate the
// chunk's registration is invalidated on arrival and registered again,
// under a new key that travels with the response.
#include "core/lock.h"
#include "core/log.h"
#include "core/path.h"
#include "core/server.h"
#include "core/session.h"
#include "rt/errno.h"

namespace core {

void Request::init(Path& path, rt::u32 id) {
    path_ = &path;
    msg_id = id;
    dir = kDirWrite;
    inv_cqe.owner = this;
    inv_cqe.kind = kCqeInv;
}

namespace {

// Work requests a request's pending action needs.
rt::u32 wrs_needed(const Request& r, bool always_inval) REQUIRES(r.path().io_lock()) {
    if (r.pending == Pending::Invalidate) return 1;
    rt::u32 n = 1;  // the immediate
    const bool read = r.type == wire::MsgType::Read && r.has_desc;
    if (read && r.answer == 0) ++n;
    if (always_inval) ++n;
    if (read && r.need_inval) ++n;
    return n;
}

}  // namespace

// Completion context: an immediate on connection c.
void Path::on_imm(Connection& c, rt::u32 imm) {
    const wire::Imm t = wire::imm_decode(imm);
    // A request's arrival, for its latency: read outside the lock.
    const rt::u64 now = kLatencyOn && t.is(wire::ImmType::IoReq) ? rtrs_env_now_ns() : 0;
    Request* go = nullptr;
    {
        Guard g(io_lock_);
        if (state_ != PathState::Up) {
            // Before our answer to the info request, a client has nothing
            // to send: the ULP has not been told of the path yet.
            if (state_ < PathState::Up) {
                Log(kErr, log_gate_).who(sess_name(), name_).put(": connection ").dec(rt::u64{c.cid()})
                    .put(": an immediate before the path is up; closing the path");
                close_locked(CloseReason::Protocol);
            }
            return;  // closing: the drain takes the rest
        }
        clock_.heard_locked();
        if (int err = rtrs_env_post_recv(c.env(), nullptr, &c.recv_cqe, 1)) {
            Log(kErr, log_gate_).who(sess_name(), name_).put(": cannot post a receive: ").dec(err);
            close_locked(CloseReason::Transport);
            return;
        }
        if (t.is(wire::ImmType::IoReq)) {
            go = arrive_locked(c, t.payload, now);
        } else if (t.is(wire::ImmType::HbMsg)) {
            if (c.room(1)) {  // an ack that does not fit is not missed
                rtrs_env_wr wr{};
                wr.op = RTRS_ENV_WR_RDMA_WRITE_IMM;
                wr.imm = wire::imm_encode(wire::ImmType::HbAck, 0);
                wr.signaled = 1;
                wr.cqe = &c.send_cqe;
                if (c.post(&wr, 1)) close_locked(CloseReason::Transport);
            }
        } else if (!t.is(wire::ImmType::HbAck)) {
            Log(kErr, log_gate_).who(sess_name(), name_).put(": unknown immediate type ").dec(rt::u64{t.type})
                .put("; closing the path");
            close_locked(CloseReason::Protocol);
        }
    }
    if (go) dispatch(*go);
}

// A request is done with: its chunk may take the next one. (Only on this
// path: a client that failed a closing path's requests over sends them
// again on another path, on chunks the closing path's ULP may still hold,
// and upstream's does; so a chunk busy on one path is no error on another.)
void Path::release_locked(Request& r) { r.state = ReqState::Free; }

// A request arrived on its chunk. Returns it when it is to be read and
// handed to the ULP now (the caller does that without the lock).
Request* Path::arrive_locked(Connection& c, rt::u32 payload, rt::u64 now_ns) {
    auto where = wire::io_req_locate(payload, queue_depth_, chunk_size_);
    if (!where.ok()) {
        Log(kErr, log_gate_).who(sess_name(), name_).put(": I/O immediate 0x").hex(payload)
            .put(" names no chunk of the session; closing the path");
        close_locked(CloseReason::Protocol);
        return nullptr;
    }
    Request& r = chunks_.req(where.value().chunk_id);
    if (r.state == ReqState::Invalidating || r.state == ReqState::WithUlp ||
        r.state == ReqState::Queued) {
        // A correct client reuses a chunk only once its response came; a
        // second request would overwrite the first one's data under it.
        Log(kErr, log_gate_).who(sess_name(), name_).put(": chunk ").dec(rt::u64{r.id()})
            .put(": a new request while the previous one is in flight; closing the path");
        close_locked(CloseReason::Protocol);
        return nullptr;
    }
    r.con = &c;
    r.arrived_ns = now_ns;
    r.hdr_off = where.value().offset;
    r.dir = kDirWrite;
    r.answer = 0;
    r.type = wire::MsgType::Write;  // until dispatch() reads the header
    r.has_desc = false;
    r.need_inval = false;
    if (always_inval_) {
        r.state = ReqState::Invalidating;
        invalidate_locked(r);
        return nullptr;
    }
    r.state = ReqState::WithUlp;
    ++inflight_;
    return &r;
}

// The chunk's registration is invalidated before the chunk is read, so that
// the client cannot write it while the ULP works on it.
void Path::invalidate_locked(Request& r) {
    Connection& c = r.conn();
    if (!c.room(1) || !c.pending.empty()) {
        r.pending = Pending::Invalidate;
        c.pending.push_back(r);
        return;
    }
    if (!post_invalidate_locked(r)) {
        release_locked(r);
        close_locked(CloseReason::Transport);
    }
}

bool Path::post_invalidate_locked(Request& r) {
    rtrs_env_wr wr{};
    wr.op = RTRS_ENV_WR_LOCAL_INV;
    wr.inv_rkey = mr_of_chunk(r.id()).info.rkey;
    wr.signaled = 1;
    wr.cqe = &r.inv_cqe;
    int err = r.conn().post(&wr, 1);
    if (err) Log(kErr, log_gate_).who(sess_name(), name_).put(": cannot post a local invalidation: ").dec(err);
    return err == 0;
}

void Path::on_inv_done(Connection& c, Request& r, const rtrs_core_wc& wc) {
    Request* go = nullptr;
    {
        Guard g(io_lock_);
        if (r.state == ReqState::Invalidating && (!wc.ok || state_ != PathState::Up))
            release_locked(r);
        if (!wc.ok) {
            if (!wc.flushed)
                Log(kErr, log_gate_).who(sess_name(), name_).put(": local invalidation failed: ").put(wc.status);
            close_locked(CloseReason::Transport);
            return;
        }
        c.signaled_done();
        if (r.state == ReqState::Invalidating) {
            r.state = ReqState::WithUlp;
            ++inflight_;
            go = &r;
        }
        run_pending(c);
    }
    if (go) dispatch(*go);
}

// No lock: the request is read from its chunk and handed to the ULP.
void Path::dispatch(Request& r) {
    rtrs_env_dma_sync_for_cpu(dev_->env(), chunk_dma(r.id()), chunk_size_);
    rt::u8* chunk = static_cast<rt::u8*>(sess_->chunk(r.id()));
    auto io = wire::parse_io_req(rt::Bytes(chunk, chunk_size_), r.hdr_off, wire::kMaxReadDesc);
    if (!io.ok()) {
        const int err = io.error();
        Log l(kErr, log_gate_);
        l.who(sess_name(), name_).put(": chunk ").dec(rt::u64{r.id()}).put(": ");
        switch (err) {
        case rt::errc::proto: l.put("unknown message type"); break;
        case rt::errc::badmsg: l.put("request header runs past the chunk"); break;
        default: l.put("invalid request (user header or descriptor)"); break;
        }
        l.put(" at offset ").dec(rt::u64{r.hdr_off});
        if (err == rt::errc::proto) {
            // Not a request at all: nothing to answer, the path is broken.
            l.put("; closing the path");
            Guard g(io_lock_);
            release_locked(r);
            answered_locked();
            close_locked(CloseReason::Protocol);
            return;
        }
        // A request we cannot read is failed, not guessed at.
        l.put("; failing the request");
        on_answer(r, -err);
        return;
    }
    const wire::IoReq& q = io.value();
    r.type = q.type;
    r.data_len = q.data_len;
    r.usr_len = q.usr_len;
    r.need_inval = q.need_inval();
    r.has_desc = q.desc.count() != 0;
    if (r.has_desc) r.desc = q.desc.at(0);
    const bool read = q.type == wire::MsgType::Read;
    r.dir = read ? kDirRead : kDirWrite;
    // What the stats count: data and user header, as upstream does.
    if (read) {
        __atomic_add_fetch(&stats_.read_cnt, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&stats_.read_bytes, rt::u64{q.hdr_off}, __ATOMIC_RELAXED);
    } else {
        __atomic_add_fetch(&stats_.write_cnt, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&stats_.write_bytes, rt::u64{q.hdr_off}, __ATOMIC_RELAXED);
    }
    int err = rtrs_env_ulp_rdma_ev(server().ulp(), sess_, sess_->priv(), r.op(),
                                   read ? RTRS_CORE_DIR_READ : RTRS_CORE_DIR_WRITE, chunk,
                                   q.data_len, chunk + q.usr_off, q.usr_len);
    if (err) {
        Log(kErr, log_gate_).who(sess_name(), name_).put(": the upper layer failed request ").dec(rt::u64{r.id()})
            .put(": ").dec(err);
        on_answer(r, err);
    }
}

// Any context: the ULP's answer.
void Path::on_answer(Request& r, int status) {
    const rt::u64 now = kLatencyOn ? rtrs_env_now_ns() : 0;
    Guard g(io_lock_);
    if (r.state != ReqState::WithUlp) {
        rtrs_env_warn("rtrs core: an answer for a request the upper layer does not hold");
        return;
    }
    if (kLatencyOn) {
        lat_ulp_.record_span(r.arrived_ns, now);
        r.answered_ns = now;
    }
    if (status)
        rtrs_env_trace_io_error(sess_name(), name_, r.id(), status, r.dir == kDirRead);
    r.answer = status;
    if (state_ != PathState::Up) {
        release_locked(r);  // closing: nothing more is posted
    } else {
        respond_locked(r);
    }
    answered_locked();
}

// One answer less to wait for; the teardown goes on after the last one.
void Path::answered_locked() {
    if (inflight_ == 0) {
        rtrs_env_warn("rtrs core: more answers than requests");
        return;
    }
    if (--inflight_ == 0 && state_ == PathState::AwaitingAnswers) rtrs_env_work_queue(close_work_, 0);
}

void Path::respond_locked(Request& r) {
    Connection& c = r.conn();
    r.pending = Pending::Respond;
    if (!c.room(wrs_needed(r, always_inval_)) || !c.pending.empty()) {
        r.state = ReqState::Queued;
        c.pending.push_back(r);
        return;
    }
    r.pending = Pending::None;
    if (!post_response_locked(r)) {
        release_locked(r);
        close_locked(CloseReason::Transport);
    }
}

// The response: [data write] [new registration] [remote invalidation] and
// the immediate, in one chain. None of it is signaled unless the send
// queue's accounting wants it (connection.h); a failure completes on the
// connection's send_cqe all the same. The request is done once posted: the
// client reuses the chunk only after the immediate reached it, which the
// queue pair sends after everything before it.
bool Path::post_response_locked(Request& r) {
    Connection& c = r.conn();
    const bool read = r.type == wire::MsgType::Read && r.has_desc;
    const bool send_data = read && r.answer == 0;
    const bool need_inval = read && r.need_inval;
    rtrs_env_wr wrs[4] = {};
    for (rtrs_env_wr& w : wrs) w.cqe = &c.send_cqe;
    rt::u32 n = 0;
    if (send_data) {
        rtrs_env_wr& w = wrs[n++];
        rtrs_env_dma_sync_for_device(dev_->env(), chunk_dma(r.id()), r.desc.len);
        w.op = RTRS_ENV_WR_RDMA_WRITE;
        w.addr = chunk_dma(r.id());
        w.len = r.desc.len;
        w.remote_addr = r.desc.addr;
        w.rkey = r.desc.key;
    }
    Mr* m = nullptr;
    rt::u32 rkey = 0;
    if (always_inval_) {
        m = &mr_of_chunk(r.id());
        rkey = rtrs_env_mr_next_rkey(m->mr);
        m->info.rkey = rkey;
        rtrs_env_wr& w = wrs[n++];
        w.op = RTRS_ENV_WR_REG_MR;
        w.mr = m->mr;
        w.mr_key = rkey;
    }
    if (need_inval) {
        rtrs_env_wr& w = wrs[n++];
        w.op = RTRS_ENV_WR_SEND_INV;
        w.inv_rkey = r.desc.key;
    }
    rtrs_env_wr& imm = wrs[n++];
    imm.imm = wire::io_rsp_imm(r.id(), r.answer, need_inval);
    if (m) {
        auto len = wire::encode_rkey_rsp(
            rt::MutBytes(static_cast<rt::u8*>(m->rkey_msg.cpu), m->rkey_msg.len),
            wire::RkeyRspFields{static_cast<rt::u16>(r.id()), rkey});
        if (!len.ok()) return false;
        rtrs_env_buf_sync_for_device(dev_->env(), &m->rkey_msg);
        imm.op = RTRS_ENV_WR_SEND_IMM;
        imm.addr = m->rkey_msg.dma;
        imm.len = static_cast<rt::u32>(len.value());
    } else {
        imm.op = RTRS_ENV_WR_RDMA_WRITE_IMM;
    }
    // If signaled, its completion is a sample of the transport latency.
    int err = c.post(wrs, n, kLatencyOn ? &r.answered_ns : nullptr);
    if (err) {
        Log(kErr, log_gate_).who(sess_name(), name_).put(": cannot send the response of request ")
            .dec(rt::u64{r.id()}).put(": ").dec(err);
        return false;
    }
    release_locked(r);
    return true;
}

// Io lock held: posts what waits on c, in order, while it fits.
void Path::run_pending(Connection& c) {
    if (state_ != PathState::Up) return;
    while (Request* r = c.pending.front()) {
        if (!c.room(wrs_needed(*r, always_inval_))) return;
        c.pending.pop_front();
        const Pending what = r->pending;
        r->pending = Pending::None;
        bool ok = what == Pending::Invalidate ? post_invalidate_locked(*r) : post_response_locked(*r);
        if (!ok) {
            release_locked(*r);
            close_locked(CloseReason::Transport);
            return;
        }
    }
}

}  // namespace core
