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

// The I/O path below runs per request: its hot functions log nothing
// themselves (a log line's buffer would give each of them a large stack
// frame with its canary); what goes wrong is told by the cold functions
// at the end of the file.

// Completion context: an immediate on connection c.
void Path::on_imm(Connection& c, rt::u32 imm) {
    const wire::Imm t = wire::imm_decode(imm);
    const bool io = t.is(wire::ImmType::IoReq);
    // A request's arrival, for its latency: read outside the lock.
    const rt::u64 now = kLatencyOn && io ? rtrs_env_now_ns() : 0;
    Request* go = nullptr;
    {
        Guard g(c.lock());
        if (__builtin_expect(c.io() != ConIo::Up, 0)) {
            // Before our answer to the info request, a client has nothing
            // to send: the ULP has not been told of the path yet.
            const bool early = c.io() == ConIo::Idle;
            g.unlock();
            if (early) early_imm(c);
            return;  // closing: the drain takes the rest
        }
        c.heard();
        if (int err = rtrs_env_post_recv_imm(c.env(), &c.recv_cqe)) {
            g.unlock();
            io_failed("cannot post a receive", err);
            return;
        }
        if (io) {
            go = arrive_locked(c, t.payload, now);
        } else if (t.is(wire::ImmType::HbMsg)) {
            hb_ack_locked(c);
        } else if (!t.is(wire::ImmType::HbAck)) {
            g.unlock();
            unknown_imm(t.type);
            return;
        }
    }
    if (go) dispatch(c, *go);
}

// A request is done with: its chunk may take the next one. (Only on this
// path: a client that failed a closing path's requests over sends them
// again on another path, on chunks the closing path's ULP may still hold,
// and upstream's does; so a chunk busy on one path is no error on another.)
// Nothing touches the request after this: another connection may claim
// it at once.
void Path::release_locked(Request& r) { r.set(ReqState::Free); }

// A request arrived on its chunk. Returns it when it is to be read and
// handed to the ULP now (the caller does that without the lock).
Request* Path::arrive_locked(Connection& c, rt::u32 payload, rt::u64 now_ns) {
    const wire::IoReqAddr where = wire::io_req_decode_at(payload, offset_bits_);
    if (__builtin_expect(where.chunk_id >= queue_depth_ || where.offset >= chunk_size_, 0)) {
        bad_imm(payload);
        return nullptr;
    }
    Request& r = chunks_.req(where.chunk_id);
    if (__builtin_expect(!r.claim(always_inval_ ? ReqState::Invalidating : ReqState::WithUlp), 0)) {
        // A correct client reuses a chunk only once its response came; a
        // second request would overwrite the first one's data under it.
        busy_chunk(r);
        return nullptr;
    }
    r.con = &c;
    r.arrived_ns = now_ns;
    r.hdr_off = where.offset;
    r.dir = kDirWrite;
    r.answer = 0;
    r.type = wire::MsgType::Write;  // until dispatch() reads the header
    r.has_desc = false;
    r.need_inval = false;
    if (always_inval_) {
        invalidate_locked(c, r);
        return nullptr;
    }
    c.inflight_up();
    return &r;
}

// The chunk's registration is invalidated before the chunk is read, so that
// the client cannot write it while the ULP works on it.
void Path::invalidate_locked(Connection& c, Request& r) {
    if (!c.room(1) || !c.pending.empty()) {
        r.pending = Pending::Invalidate;
        c.pending.push_back(r);
        return;
    }
    if (!post_invalidate_locked(c, r)) {
        release_locked(r);
        request_close(CloseReason::Transport);
    }
}

bool Path::post_invalidate_locked(Connection& c, Request& r) {
    int err = c.post_local_inv(r.mr->info.rkey, &r.inv_cqe);
    if (__builtin_expect(err != 0, 0)) {
        io_error("cannot post a local invalidation", err);
        return false;
    }
    return true;
}

// The chunk's invalidation completed: the request goes to the ULP.
void Path::on_inv_ok(Connection& c, Request& r) {
    Request* go = nullptr;
    {
        Guard g(c.lock());
        c.signaled_done();
        if (r.st() == ReqState::Invalidating) {
            if (__builtin_expect(c.io() != ConIo::Up, 0)) {
                release_locked(r);
            } else {
                r.set(ReqState::WithUlp);
                c.inflight_up();
                go = &r;
            }
        }
        if (!c.pending.empty()) run_pending(c);
    }
    if (go) dispatch(c, *go);
}

void Path::on_inv_failed(Connection& c, Request& r, const rtrs_core_wc& wc) {
    {
        Guard g(c.lock());
        if (r.st() == ReqState::Invalidating) release_locked(r);
    }
    if (!wc.flushed) io_error("local invalidation failed", 0, wc.status);
    request_close(CloseReason::Transport);
}

// c's completion context, no lock: the request is read from its chunk and
// handed to the ULP.
void Path::dispatch(Connection& c, Request& r) {
    const rt::u32 id = r.id();
    rtrs_env_dma_sync_for_cpu(dev_->env(), chunk_dma(id), chunk_size_);
    rt::u8* chunk = static_cast<rt::u8*>(sess_->chunk(id));
    wire::IoReq q;
    const int err = wire::parse_io_req_into(rt::Bytes(chunk, chunk_size_), r.hdr_off,
                                            wire::kMaxReadDesc, &q);
    if (__builtin_expect(err != 0, 0)) {
        bad_request(c, r, err);
        return;
    }
    r.type = q.type;
    r.data_len = q.data_len;
    r.usr_len = q.usr_len;
    r.need_inval = q.need_inval();
    r.has_desc = q.desc.count() != 0;
    r.desc = q.first;
    const bool read = q.type == wire::MsgType::Read;
    r.dir = read ? kDirRead : kDirWrite;
    // What the stats count: data and user header, as upstream does.
    c.count(read, rt::u64{q.hdr_off});
    int ulp_err = rtrs_env_ulp_rdma_ev(server().ulp(), sess_, sess_->priv(), r.op(),
                                       read ? RTRS_CORE_DIR_READ : RTRS_CORE_DIR_WRITE, chunk,
                                       q.data_len, chunk + q.usr_off, q.usr_len);
    if (__builtin_expect(ulp_err != 0, 0)) ulp_failed(r, ulp_err);
}

// Any context: the ULP's answer, on the connection the request came on.
void Path::on_answer(Request& r, int status) {
    const rt::u64 now = kLatencyOn ? rtrs_env_now_ns() : 0;
    Connection& c = r.conn();
    Guard g(c.lock());
    if (__builtin_expect(r.st() != ReqState::WithUlp, 0)) {
        rtrs_env_warn("rtrs core: an answer for a request the upper layer does not hold");
        return;
    }
    if (kLatencyOn) {
        c.lat_ulp.record_span(r.arrived_ns, now);
        r.answered_ns = now;
    }
    if (__builtin_expect(status != 0, 0))
        rtrs_env_trace_io_error(sess_name(), name_, r.id(), status, r.dir == kDirRead);
    r.answer = status;
    if (__builtin_expect(c.io() != ConIo::Up, 0)) {
        release_locked(r);  // closing: nothing more is posted
    } else {
        respond_locked(c, r);
    }
    answered_locked(c);
}

// One answer less to wait for; the teardown goes on after the last one. The
// state is read without the io lock: the teardown sets AwaitingAnswers,
// then reads each connection's count under its lock, and this reads the
// state after its count went down under the same lock; so either the
// teardown sees the count at zero or this sees AwaitingAnswers
// (path_close.cpp).
void Path::answered_locked(Connection& c) {
    if (__builtin_expect(!c.inflight_down(), 0)) {
        rtrs_env_warn("rtrs core: more answers than requests");
        return;
    }
    if (__builtin_expect(c.inflight_locked() == 0, 0) && state_unlocked() == PathState::AwaitingAnswers)
        rtrs_env_work_queue(close_work_, 0);
}

// Work requests of a response: [data write] [re-registration] [remote
// invalidation] and the message with the immediate.
rt::u32 Path::response_wrs(const Request& r) const NO_THREAD_SAFETY_ANALYSIS {
    const bool read = r.type == wire::MsgType::Read && r.has_desc;
    return 1 + (read && r.answer == 0) + always_inval_ + (read && r.need_inval);
}

void Path::respond_locked(Connection& c, Request& r) {
    const rt::u32 n = response_wrs(r);
    if (!c.room(n) || !c.pending.empty()) {
        r.pending = Pending::Respond;
        r.set(ReqState::Queued);
        c.pending.push_back(r);
        return;
    }
    r.pending = Pending::None;
    if (!post_response_locked(c, r, n)) {
        release_locked(r);
        request_close(CloseReason::Transport);
    }
}

// The response of n work requests (response_wrs()), in one chain. None of
// it is signaled unless the send queue's accounting wants it
// (connection.h); a failure completes on the connection's send_cqe all the
// same. The request is done once posted: the client reuses the chunk only
// after the immediate reached it, which the queue pair sends after
// everything before it.
bool Path::post_response_locked(Connection& c, Request& r, rt::u32 n) {
    const rt::u32 id = r.id();
    const bool read = r.type == wire::MsgType::Read && r.has_desc;
    const bool need_inval = read && r.need_inval;
    // What never changes in it is there already (request.h).
    rtrs_env_resp& rsp = r.rsp;
    rsp.cqe = &c.send_cqe;
    rsp.remote_addr = r.desc.addr;
    rsp.rkey = r.desc.key;
    rsp.data_len = read && r.answer == 0 ? r.desc.len : 0;
    rsp.send_inv = need_inval;
    rsp.inv_rkey = r.desc.key;
    rsp.imm = wire::io_rsp_imm(id, r.answer, need_inval);
    if (rsp.mr) {
        // always_invalidate: the chunk's registration under its next key,
        // and the key in the message that carries the immediate.
        Mr& m = *r.mr;
        const rt::u32 rkey = next_rkey(m.info.rkey);
        m.info.rkey = rkey;
        rsp.mr_key = rkey;
        wire::RkeyRsp msg;
        msg.type.set(static_cast<rt::u16>(wire::MsgType::RkeyRsp));
        msg.buf_id.set(static_cast<rt::u16>(id));
        msg.rkey.set(rkey);
        __builtin_memcpy(m.rkey_msg.cpu, &msg, sizeof(msg));
    }
    // If signaled, its completion is a sample of the transport latency.
    int err = c.post_resp(rsp, n, kLatencyOn ? &r.answered_ns : nullptr);
    if (__builtin_expect(err != 0, 0)) {
        response_failed(r, err);
        return false;
    }
    release_locked(r);
    return true;
}

// c's lock held: posts what waits on c, in order, while it fits.
void Path::run_pending(Connection& c) {
    if (c.io() != ConIo::Up) return;
    while (Request* r = c.pending.front()) {
        const Pending what = r->pending;
        const rt::u32 n = what == Pending::Invalidate ? 1 : response_wrs(*r);
        if (!c.room(n)) return;
        c.pending.pop_front();
        r->pending = Pending::None;
        bool ok = what == Pending::Invalidate ? post_invalidate_locked(c, *r) : post_response_locked(c, *r, n);
        if (!ok) {
            release_locked(*r);
            request_close(CloseReason::Transport);
            return;
        }
    }
}

// The answer to a client's heartbeat (out of on_imm()'s way: its work
// request on the stack would cost every immediate a stack canary).
void Path::hb_ack_locked(Connection& c) {
    if (!c.room(1)) return;  // an ack that does not fit is not missed
    rtrs_env_wr wr{};
    wr.op = RTRS_ENV_WR_RDMA_WRITE_IMM;
    wr.imm = wire::imm_encode(wire::ImmType::HbAck, 0);
    wr.signaled = 1;
    wr.cqe = &c.send_cqe;
    if (c.post(&wr, 1)) request_close(CloseReason::Transport);
}

// --- what goes wrong, told out of the I/O path's way ----------------------------------

void Path::early_imm(Connection& c) {
    Log(kErr, log_gate_).who(sess_name(), name_).put(": connection ").dec(rt::u64{c.cid()})
        .put(": an immediate before the path is up; closing the path");
    request_close(CloseReason::Protocol);
}

void Path::unknown_imm(rt::u32 type) {
    Log(kErr, log_gate_).who(sess_name(), name_).put(": unknown immediate type ").dec(rt::u64{type})
        .put("; closing the path");
    request_close(CloseReason::Protocol);
}

void Path::bad_imm(rt::u32 payload) {
    Log(kErr, log_gate_).who(sess_name(), name_).put(": I/O immediate 0x").hex(payload)
        .put(" names no chunk of the session; closing the path");
    request_close(CloseReason::Protocol);
}

void Path::busy_chunk(Request& r) {
    Log(kErr, log_gate_).who(sess_name(), name_).put(": chunk ").dec(rt::u64{r.id()})
        .put(": a new request while the previous one is in flight; closing the path");
    request_close(CloseReason::Protocol);
}

void Path::io_failed(const char* what, int err) {
    io_error(what, err);
    request_close(CloseReason::Transport);
}

void Path::io_error(const char* what, int err, const char* status) {
    Log l(kErr, log_gate_);
    l.who(sess_name(), name_).put(": ").put(what).put(": ");
    if (status) {
        l.put(status);
    } else {
        l.dec(err);
    }
}

void Path::response_failed(Request& r, int err) {
    Log(kErr, log_gate_).who(sess_name(), name_).put(": cannot send the response of request ")
        .dec(rt::u64{r.id()}).put(": ").dec(err);
}

// A request whose header dispatch() could not read.
void Path::bad_request(Connection& c, Request& r, int err) {
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
        {
            Guard g(c.lock());
            release_locked(r);
            answered_locked(c);
        }
        request_close(CloseReason::Protocol);
        return;
    }
    // A request we cannot read is failed, not guessed at.
    l.put("; failing the request");
    rtrs_core_answer(r.op(), -err);
}

void Path::ulp_failed(Request& r, int err) {
    Log(kErr, log_gate_).who(sess_name(), name_).put(": the upper layer failed request ").dec(rt::u64{r.id()})
        .put(": ").dec(err);
    rtrs_core_answer(r.op(), err);
}

// The glue's short way for a send-queue work request that completed with
// success: what on_wc() does with such a completion.
void Path::on_send_done(Connection& c, rtrs_core_cqe& cqe) {
    switch (cqe.kind) {
    case kCqeSend:
        on_send_ok(c);
        return;
    case kCqeInv:
        on_inv_ok(c, *static_cast<Request*>(cqe.owner));
        return;
    default: {
        static constexpr rtrs_core_wc kSuccess = {1, 0, "success", RTRS_CORE_WC_SEND, 0, 0};
        on_wc(c, cqe, kSuccess);
        return;
    }
    }
}

void Path::imm_from_wc(Connection& c, rt::u32 imm) { on_imm(c, imm); }

}  // namespace core

// The I/O path's C entry points (core/rtrs_core.h), each its event inlined.
using core::Connection;
using core::CqScope;
using core::Request;

extern "C" void rtrs_core_answer(rtrs_srv_op* op, int status) {
    Request* r = Request::from_op(op);
    r->path().on_answer(*r, status);
}

extern "C" void rtrs_core_on_imm(void* core_con, rt::u32 imm) {
    Connection* c = static_cast<Connection*>(core_con);
    CqScope cq(c->cq());
    c->path().on_imm(*c, imm);
}

extern "C" void rtrs_core_on_send_done(void* core_con, rtrs_core_cqe* cqe) {
    Connection* c = static_cast<Connection*>(core_con);
    CqScope cq(c->cq());
    c->path().on_send_done(*c, *cqe);
}
