// SPDX-License-Identifier: GPL-2.0
#include "path.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace rc {

namespace {

constexpr int kResolveTimeoutMs = 5000;
// As long as the reference client waits for a connection or an answer.
constexpr int kConnectTimeoutMs = 30000;
// Queue sizes of a connection without I/O; with I/O they grow with the
// depth (Path::Path).
constexpr uint32_t kSendWr = 32;
constexpr uint32_t kRecvWr = 32;
constexpr size_t kRecvSlots = 16;
constexpr size_t kSmallSlot = 64;
constexpr size_t kSendBufSize = 512;

enum : uint64_t { kWrRecv = 1, kWrSend = 2, kWrWriteImm = 3, kWrIo = 4 };
constexpr uint64_t wr_id(uint64_t kind, uint64_t slot) { return (kind << 56) | slot; }
constexpr uint64_t wr_kind(uint64_t id) { return id >> 56; }
constexpr uint64_t wr_slot(uint64_t id) { return id & ((uint64_t{1} << 56) - 1); }

// The IB CM reject reason of a reject sent by the peer's consumer.
constexpr int kCmRejConsumerDefined = 28;

const char* cm_reject_reason(int status) {
    switch (status) {
        case 8: return "invalid service ID: nobody listens on that port";
        case kCmRejConsumerDefined: return "consumer defined";
        default: return "see the IB CM reject reasons";
    }
}

rt::Bytes bytes_of(const void* p, size_t n) { return rt::Bytes(static_cast<const uint8_t*>(p), n); }

}  // namespace

// --- Con ---------------------------------------------------------------------

void Con::fail(Status s) {
    if (state_ == State::Failed) return;
    failure_ = std::move(s);
    state_ = State::Failed;
    path_.log("con %u: %s", cid_, failure_.msg().c_str());
}

Status Con::start(std::vector<uint8_t> private_data) {
    private_data_ = std::move(private_data);
    auto id = make_cm_id(path_.loop_.channel(), this);
    if (!id.ok()) return id.status();
    id_ = std::move(id.value());
    int one = 1;
    if (rdma_set_option(id_.get(), RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)))
        return sys_error(errno, "rdma_set_option(REUSEADDR)");
    if (uint8_t t = path_.cfg_.ack_timeout;
        t && rdma_set_option(id_.get(), RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof(t)))
        return sys_error(errno, "rdma_set_option(ACK_TIMEOUT)");
    Addr dst = path_.cfg_.dst;
    dst.set_port(path_.cfg_.port);
    std::optional<Addr> src = path_.cfg_.src;
    if (src) src->set_port(0);
    if (rdma_resolve_addr(id_.get(), src ? src->sa() : nullptr, dst.sa(), kResolveTimeoutMs))
        return sys_error(errno, "rdma_resolve_addr");
    state_ = State::Resolving;
    return {};
}

Status Con::on_addr_resolved() {
    if (Status s = path_.ensure_device(id_->verbs); !s.ok()) return s;
    auto cq = make_cq(id_->verbs, static_cast<int>(path_.send_wr_ + path_.recv_wr_), this,
                      path_.comp_.get());
    if (!cq.ok()) return cq.status();
    cq_ = std::move(cq.value());
    ibv_qp_init_attr attr{};
    attr.send_cq = cq_.get();
    attr.recv_cq = cq_.get();
    attr.qp_type = IBV_QPT_RC;
    attr.sq_sig_all = 1;
    attr.cap.max_send_wr = path_.send_wr_;
    attr.cap.max_recv_wr = path_.recv_wr_;
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    if (rdma_create_qp(id_.get(), path_.pd_.get(), &attr))
        return sys_error(errno, "rdma_create_qp");
    if (cid_ == 0 && path_.name_.empty())
        path_.name_ = format_addr(rdma_get_local_addr(id_.get())) + "@" +
                      format_addr(rdma_get_peer_addr(id_.get()));
    if (rdma_resolve_route(id_.get(), kResolveTimeoutMs))
        return sys_error(errno, "rdma_resolve_route");
    return {};
}

void Con::on_cm_event(const rdma_cm_event& ev) {
    switch (ev.event) {
        case RDMA_CM_EVENT_ADDR_RESOLVED:
            if (Status s = on_addr_resolved(); !s.ok()) fail(std::move(s));
            break;
        case RDMA_CM_EVENT_ROUTE_RESOLVED: {
            rdma_conn_param param{};
            param.private_data = private_data_.data();
            param.private_data_len = static_cast<uint8_t>(private_data_.size());
            param.retry_count = 7;
            param.rnr_retry_count = 7;
            if (rdma_connect(id_.get(), &param)) {
                fail(sys_error(
                    errno, strf("rdma_connect (%zu bytes of private data)", private_data_.size())));
                break;
            }
            state_ = State::Connecting;
            break;
        }
        case RDMA_CM_EVENT_ESTABLISHED: {
            state_ = State::Established;
            auto rsp = wire::parse_conn_rsp(
                bytes_of(ev.param.conn.private_data, ev.param.conn.private_data_len));
            if (!rsp.ok()) {
                fail(Status::error(ECONNRESET,
                                   strf("accepted, but the connection response is invalid "
                                        "(%u bytes of private data)",
                                        ev.param.conn.private_data_len)));
                disconnect();
                break;
            }
            if (rsp.value().err != 0) {
                fail(Status::error(ECONNRESET, strf("accepted, but the response carries errno %d",
                                                    -rsp.value().err)));
                disconnect();
                break;
            }
            outcome_.kind = ConnOutcome::Kind::Accepted;
            outcome_.rsp = rsp.value();
            outcome_.text = "accepted";
            break;
        }
        case RDMA_CM_EVENT_REJECTED: {
            if (state_ == State::Established) {
                // The server ended a connection its CM had not yet seen
                // established (our RTU not yet processed there): its CM
                // cannot send a disconnect request in that state, and the
                // destroy answers with a reject, which our CM hands up on
                // an established connection. For this side that is the
                // server closing the connection (seen: a path refused on
                // an info request that came just after the accept).
                path_.log("con %u: rejected after it was established (status %d): "
                    "the server closed it",
                    cid_, ev.status);
                state_ = State::Disconnected;
                path_.on_con_closed(*this);
                break;
            }
            state_ = State::Rejected;
            outcome_.kind = ConnOutcome::Kind::Rejected;
            outcome_.cm_status = ev.status;
            const uint8_t len = ev.param.conn.private_data_len;
            // As the reference client: the errno is read from any reject
            // carrying a whole response, without judging magic or version.
            wire::ConnRsp m;
            if (ev.param.conn.private_data && len >= sizeof(m))
                std::memcpy(&m, ev.param.conn.private_data, sizeof(m));
            // The CM's own rejects (nobody listening, ...) carry zeroed private
            // data: an RTRS answer is a consumer reject, or has the magic.
            if (ev.param.conn.private_data && len >= sizeof(m) &&
                (ev.status == kCmRejConsumerDefined || m.magic.get() == wire::kMagic)) {
                outcome_.has_rtrs_data = true;
                outcome_.server_errno = static_cast<int16_t>(m.neg_errno.get());
                outcome_.text = strf("rejected: errno %d (%s)", outcome_.server_errno,
                                     errno_name(outcome_.server_errno).c_str());
            } else {
                outcome_.text = strf("rejected by the CM: status %d (%s), no RTRS response",
                                     ev.status, cm_reject_reason(ev.status));
            }
            break;
        }
        case RDMA_CM_EVENT_ADDR_ERROR:
        case RDMA_CM_EVENT_ROUTE_ERROR:
        case RDMA_CM_EVENT_UNREACHABLE:
        case RDMA_CM_EVENT_CONNECT_ERROR: {
            const int err = ev.status < 0 ? -ev.status : (ev.status ? ev.status : EIO);
            // A connect error comes after the server's answer: the server
            // ended the connection while it was being established (as when
            // it cannot post its receives), which is a close, not a
            // failure of the client's own.
            const Failure kind = ev.event == RDMA_CM_EVENT_CONNECT_ERROR ? Failure::Closed : Failure::Local;
            fail(Status::error(err, strf("%s (status %d: %s)", rdma_event_str(ev.event), ev.status,
                                         ev.status < 0 ? std::strerror(-ev.status) : "?"), kind));
            break;
        }
        case RDMA_CM_EVENT_DISCONNECTED:
            if (state_ != State::Failed) state_ = State::Disconnected;
            path_.on_con_closed(*this);
            break;
        case RDMA_CM_EVENT_DEVICE_REMOVAL:
        case RDMA_CM_EVENT_ADDR_CHANGE:
            path_.lose(strf("con %u: %s", cid_, rdma_event_str(ev.event)));
            // A connection still being set up fails at once: its device
            // waits for this process to let go of it (rdma link delete).
            if (state_ < State::Established)
                fail(Status::error(ENODEV, strf("%s while connecting", rdma_event_str(ev.event)),
                                   Failure::Closed));
            break;
        default:  // TIMEWAIT_EXIT and the like
            break;
    }
}

Status Con::post_recv(size_t slot) {
    ibv_sge sge{};
    sge.addr = recv_buf_->addr(slot * slot_size_);
    sge.length = static_cast<uint32_t>(slot_size_);
    sge.lkey = recv_buf_->lkey();
    ibv_recv_wr wr{};
    wr.wr_id = wr_id(kWrRecv, slot);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    if (int ret = ibv_post_recv(id_->qp, &wr, &bad))
        return sys_error(ret, strf("con %u: ibv_post_recv", cid_));
    return {};
}

Status Con::post_receives(size_t slots, size_t slot_size) {
    auto buf = RegBuf::make(path_.pd_.get(), slots * slot_size);
    if (!buf.ok()) return buf.status();
    recv_buf_ = std::move(buf.value());
    slot_size_ = slot_size;
    for (size_t i = 0; i < slots; ++i)
        if (Status s = post_recv(i); !s.ok()) return s;
    return {};
}

Status Con::post_send(const uint8_t* msg, size_t len) {
    if (state_ != State::Established)
        return Status::error(ENOTCONN, strf("con %u is not connected", cid_));
    if (sends_in_flight_ >= static_cast<int>(path_.send_wr_))
        return Status::error(EAGAIN, "send queue full");
    if (!send_buf_) {
        auto buf = RegBuf::make(path_.pd_.get(), kSendBufSize);
        if (!buf.ok()) return buf.status();
        send_buf_ = std::move(buf.value());
    }
    if (len > send_buf_->size()) return Status::error(EMSGSIZE, "message too long");
    std::memcpy(send_buf_->data(), msg, len);
    ibv_sge sge{};
    sge.addr = send_buf_->addr(0);
    sge.length = static_cast<uint32_t>(len);
    sge.lkey = send_buf_->lkey();
    ibv_send_wr wr{};
    wr.wr_id = wr_id(kWrSend, 0);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    if (int ret = ibv_post_send(id_->qp, &wr, &bad))
        return sys_error(ret, strf("con %u: ibv_post_send", cid_));
    ++sends_in_flight_;
    return {};
}

Status Con::post_write_imm(uint32_t imm) {
    if (state_ != State::Established)
        return Status::error(ENOTCONN, strf("con %u is not connected", cid_));
    if (sends_in_flight_ >= static_cast<int>(path_.send_wr_))
        return Status::error(EAGAIN, "send queue full");
    // Zero bytes: no local buffer, and the remote address and key are not
    // looked at.
    ibv_send_wr wr{};
    wr.wr_id = wr_id(kWrWriteImm, 0);
    wr.num_sge = 0;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(imm);
    ibv_send_wr* bad = nullptr;
    if (int ret = ibv_post_send(id_->qp, &wr, &bad))
        return sys_error(ret, strf("con %u: ibv_post_send(RDMA_WRITE_WITH_IMM)", cid_));
    ++sends_in_flight_;
    return {};
}

Status Con::post_io_wr(ibv_send_wr& wr, uint64_t tag) {
    if (state_ != State::Established)
        return Status::error(ENOTCONN, strf("con %u is not connected", cid_));
    if (sends_in_flight_ >= static_cast<int>(path_.send_wr_))
        return Status::error(EAGAIN, "send queue full");
    wr.wr_id = wr_id(kWrIo, tag);
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.next = nullptr;
    ibv_send_wr* bad = nullptr;
    if (int ret = ibv_post_send(id_->qp, &wr, &bad))
        return sys_error(ret, strf("con %u: ibv_post_send(opcode %d)", cid_, wr.opcode));
    ++sends_in_flight_;
    return {};
}

Status Con::post_io_wr2(ibv_send_wr& first, uint64_t tag1, ibv_send_wr& second, uint64_t tag2) {
    if (state_ != State::Established)
        return Status::error(ENOTCONN, strf("con %u is not connected", cid_));
    if (sends_in_flight_ + 2 > static_cast<int>(path_.send_wr_))
        return Status::error(EAGAIN, "send queue full");
    first.wr_id = wr_id(kWrIo, tag1);
    first.send_flags = IBV_SEND_SIGNALED;
    first.next = &second;
    second.wr_id = wr_id(kWrIo, tag2);
    second.send_flags = IBV_SEND_SIGNALED;
    second.next = nullptr;
    ibv_send_wr* bad = nullptr;
    if (int ret = ibv_post_send(id_->qp, &first, &bad))
        return sys_error(ret, strf("con %u: ibv_post_send(two requests)", cid_));
    sends_in_flight_ += 2;
    return {};
}

Status Con::post_io_write(const ibv_sge* sge, uint64_t raddr, uint32_t rkey, uint32_t imm,
                          uint64_t tag) {
    ibv_sge local{};
    if (sge) local = *sge;
    ibv_send_wr wr{};
    wr.sg_list = sge ? &local : nullptr;
    wr.num_sge = sge ? 1 : 0;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.imm_data = htonl(imm);
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    return post_io_wr(wr, tag);
}

void Con::disconnect() {
    if (disconnect_requested_ || !id_ || state_ < State::Connecting) return;
    disconnect_requested_ = true;
    if (rdma_disconnect(id_.get()) && errno != EINVAL)
        path_.log("con %u: rdma_disconnect: %s", cid_, std::strerror(errno));
}

void Con::on_wc(const ibv_wc& wc) {
    const uint64_t kind = wr_kind(wc.wr_id);
    if (kind != kWrRecv) --sends_in_flight_;
    if (wc.status != IBV_WC_SUCCESS) {
        if (wc.status != IBV_WC_WR_FLUSH_ERR)
            path_.lose(
                strf("con %u: work completion failed: %s", cid_, ibv_wc_status_str(wc.status)));
        return;
    }
    if (kind == kWrIo) {
        if (path_.io_sink_) path_.io_sink_->on_io_sent(*this, wr_slot(wc.wr_id), wc);
        return;
    }
    if (kind == kWrWriteImm) {
        path_.on_imm_acked(cid_);
        return;
    }
    if (kind != kWrRecv) return;
    const size_t slot = wr_slot(wc.wr_id);
    path_.on_recv(*this, wc, recv_buf_->data() + slot * slot_size_);
    if (state_ == State::Established && !disconnect_requested_)
        if (Status s = post_recv(slot); !s.ok()) path_.lose(s.msg());
}

// --- Path --------------------------------------------------------------------

Path::Path(Loop& loop, PathConfig cfg) : loop_(loop), cfg_(std::move(cfg)) {
    const uint32_t io_wr = cfg_.io_depth ? 2 * cfg_.io_depth + 8 : 0;
    send_wr_ = io_wr > kSendWr ? io_wr : kSendWr;
    recv_wr_ = io_wr > kRecvWr ? io_wr : kRecvWr;
}

Path::~Path() {
    loop_.remove(this);
    cons_.clear();
}

void Path::log(const char* fmt, ...) const {
    if (!cfg_.verbose) return;
    va_list ap;
    va_start(ap, fmt);
    char buf[512];
    std::vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "[%s] %s\n",
                 name_.empty() ? format_addr(cfg_.dst.sa()).c_str() : name_.c_str(), buf);
}

Status Path::ensure_device(ibv_context* verbs) {
    if (verbs_) {
        if (verbs != verbs_)
            return Status::error(EXDEV,
                                 "the connections of one path resolved to different RDMA devices");
        return {};
    }
    auto comp = make_comp_channel(verbs);
    if (!comp.ok()) return comp.status();
    auto pd = make_pd(verbs);
    if (!pd.ok()) return pd.status();
    comp_ = std::move(comp.value());
    pd_ = std::move(pd.value());
    verbs_ = verbs;
    loop_.add(comp_->fd, this);
    return {};
}

std::vector<uint8_t> Path::conn_req(uint16_t cid) const {
    wire::ConnReqFields f;
    f.cid = cid;
    f.cid_num = cfg_.cid_num;
    f.recon_cnt = cfg_.recon_cnt;
    f.sess_uuid = cfg_.sess_uuid;
    f.paths_uuid = cfg_.paths_uuid;
    f.first_conn = cfg_.first_conn;
    std::vector<uint8_t> out(sizeof(wire::ConnReq));
    auto n = wire::encode_conn_req(rt::MutBytes(out.data(), out.size()), f);
    if (!n.ok()) out.clear();  // cannot happen: the buffer has the size
    return out;
}

Expected<ConnOutcome> Path::connect(uint16_t cid, std::vector<uint8_t> private_data) {
    cons_.push_back(std::make_unique<Con>(*this, cid));
    Con& con = *cons_.back();
    if (Status s = con.start(std::move(private_data)); !s.ok()) return s;
    Status s = loop_.wait_for([&con] { return con.settled(); }, kConnectTimeoutMs,
                              strf("connection %u", cid).c_str());
    if (!s.ok()) return s;
    return settle(con);
}

Expected<ConnOutcome> Path::settle(Con& con) {
    const uint16_t cid = con.cid();
    if (con.state() == Con::State::Failed) return con.failure();
    if (con.outcome().kind == ConnOutcome::Kind::Accepted) {
        if (cid == 0 || !have_params_) {
            params_ = con.outcome().rsp;
            have_params_ = true;
        }
        // The reference client sets first_conn for good once the service
        // connection of a path is up (so that reconnects may recreate the
        // session): the later connections of every path carry it.
        if (cid == 0) cfg_.first_conn = true;
        // Connection 0 receives the info response (one descriptor per
        // chunk at most) and heartbeats; the others heartbeats or nothing,
        // and with I/O the responses: RDMA writes with immediate (no data),
        // sends with invalidate (no data) and sends with immediate carrying
        // an RkeyRsp (kSmallSlot holds one), up to two per request.
        static_assert(kSmallSlot >= sizeof(wire::RkeyRsp));
        const size_t slot =
            cid == 0 ? wire::info_rsp_size(con.outcome().rsp.queue_depth) : kSmallSlot;
        const size_t slots = cid != 0 && cfg_.io_depth ? recv_wr_ : kRecvSlots;
        if (Status p = con.post_receives(slots, slot < kSmallSlot ? kSmallSlot : slot); !p.ok())
            return p;
        log("con %u/%u accepted", cid, cfg_.cid_num);
    } else {
        log("con %u/%u %s", cid, cfg_.cid_num, con.outcome().text.c_str());
    }
    return con.outcome();
}

Expected<InfoOutcome> Path::info_exchange(const std::vector<uint8_t>& req, int timeout_ms) {
    Con* con0 = nullptr;
    for (auto& c : cons_)
        if (c->cid() == 0 && c->state() == Con::State::Established) con0 = c.get();
    if (!con0) {
        // Gone since connect_all(): the server closed the path (seen when
        // its receives could not be posted at join).
        if (lost()) return Status::error(ECONNRESET, lost_reason_, Failure::Closed);
        return Status::error(ENOTCONN, "connection 0 is not connected");
    }
    info_rsp_.reset();
    if (Status s = con0->post_send(req.data(), req.size()); !s.ok()) return s;
    Status s = loop_.wait_for([this] { return info_rsp_.has_value() || lost(); }, timeout_ms,
                              "the info response");
    InfoOutcome out;
    if (info_rsp_) {
        out.kind = InfoOutcome::Kind::Answered;
        out.rsp = *info_rsp_;
    } else if (lost()) {
        out.kind = InfoOutcome::Kind::Closed;
    } else if (s.err() == ETIMEDOUT) {
        out.kind = InfoOutcome::Kind::Timeout;
    } else {
        return s;
    }
    return out;
}

Status Path::open() {
    if (Status s = connect_all(); !s.ok()) return s;
    return join();
}

Status Path::connect_all(uint16_t count) {
    if (count == 0 || count > cfg_.cid_num) count = cfg_.cid_num;
    for (uint16_t cid = 0; cid < count; ++cid) {
        auto out = connect(cid, conn_req(cid));
        if (!out.ok()) return out.status();
        if (out->kind == ConnOutcome::Kind::Rejected) {
            Status s = Status::error(ECONNREFUSED, out->text, Failure::Rejected);
            s.with_server_errno(out->server_errno);
            return s;
        }
        if (lost()) return Status::error(ECONNRESET, lost_reason_, Failure::Closed);
    }
    return {};
}

Status Path::connect_paced(uint16_t count, unsigned window, int interval_ms, bool progress) {
    if (count == 0 || count > cfg_.cid_num) count = cfg_.cid_num;
    if (window == 0) window = 1;
    std::vector<Con*> pending;
    uint16_t next = 0, made = 0;
    while (made < count) {
        while (next < count && pending.size() < window) {
            if (interval_ms > 0 && next > 0) {
                // The trickle: the path is held meanwhile; a close ends it.
                Status w = loop_.wait_for([this] { return lost(); }, interval_ms, "the next connection");
                if (w.ok()) return Status::error(ECONNRESET, lost_reason_, Failure::Closed);
                if (w.err() != ETIMEDOUT) return w;
            }
            cons_.push_back(std::make_unique<Con>(*this, next));
            Con& con = *cons_.back();
            if (Status s = con.start(conn_req(next)); !s.ok()) return s;
            pending.push_back(&con);
            ++next;
        }
        auto any_settled = [&pending, this] {
            if (lost()) return true;
            for (Con* c : pending)
                if (c->settled()) return true;
            return false;
        };
        if (Status s = loop_.wait_for(any_settled, kConnectTimeoutMs, "a connection"); !s.ok())
            return s;
        if (lost()) return Status::error(ECONNRESET, lost_reason_, Failure::Closed);
        for (size_t i = 0; i < pending.size();) {
            Con& con = *pending[i];
            if (!con.settled()) {
                ++i;
                continue;
            }
            pending.erase(pending.begin() + static_cast<long>(i));
            auto out = settle(con);
            if (!out.ok()) return out.status();
            if (out->kind == ConnOutcome::Kind::Rejected) {
                Status s = Status::error(ECONNREFUSED, strf("connection %u: ", con.cid()) + out->text,
                                         Failure::Rejected);
                s.with_server_errno(out->server_errno);
                return s;
            }
            ++made;
            if (progress)
                std::printf("path %s: connection %u of %u accepted (%u made)\n", name_.c_str(),
                            con.cid(), cfg_.cid_num, made);
        }
    }
    return {};
}

Status Path::send_info(const std::vector<uint8_t>& req) {
    Con* con0 = con(0);
    if (!con0) return Status::error(ENOTCONN, "connection 0 is not connected");
    info_rsp_.reset();
    return con0->post_send(req.data(), req.size());
}

Status Path::join() {
    std::vector<uint8_t> req(sizeof(wire::InfoReq));
    auto n = wire::encode_info_req(rt::MutBytes(req.data(), req.size()),
                                   bytes_of(cfg_.session.data(), cfg_.session.size()));
    if (!n.ok())
        return Status::error(n.error(),
                             strf("session name '%s' cannot be sent", cfg_.session.c_str()));
    auto info = info_exchange(req, kConnectTimeoutMs);
    if (!info.ok()) return info.status();
    if (info->kind == InfoOutcome::Kind::Closed)
        return Status::error(ECONNRESET,
                             "the server closed the path instead of answering the info request (" +
                                 lost_reason_ + ")",
                             Failure::Closed);
    if (info->kind == InfoOutcome::Kind::Timeout)
        return Status::error(ETIMEDOUT, "no info response from the server");
    const auto& rsp = info->rsp;
    auto descs = wire::parse_info_rsp(rt::Bytes(rsp.data(), rsp.size()));
    if (!descs.ok())
        return Status::error(descs.error(), strf("invalid info response (%zu bytes): %s",
                                                 rsp.size(), errno_name(descs.error()).c_str()));
    const uint64_t chunk = params_.chunk_size();
    if (chunk == 0 || chunk > UINT32_MAX)
        return Status::error(EINVAL, "invalid chunk size in the connection response");
    if (auto c =
            wire::check_info_rsp(descs.value(), params_.queue_depth, static_cast<uint32_t>(chunk));
        !c.ok())
        return Status::error(c.error(),
                             strf("info response does not describe %u chunks of %llu bytes",
                                  params_.queue_depth, static_cast<unsigned long long>(chunk)));
    regions_ = descs.value().count();
    chunks_ = 0;
    chunk_table_.clear();
    for (size_t i = 0; i < regions_; ++i) {
        const wire::SgDescFields d = descs.value().at(i);
        chunks_ += static_cast<unsigned>(d.len / chunk);
        for (uint64_t off = 0; off + chunk <= d.len; off += chunk)
            chunk_table_.push_back({d.addr + off, d.key});
    }
    up_ = true;
    next_hb_ = Clock::now() + std::chrono::milliseconds(wire::kHbIntervalMs);
    return {};
}

std::string Path::summary() const {
    return strf(
        "path %s up: queue_depth %u, max_io %u, chunks %u, regions %u, max_hdr %u, flags 0x%x",
        name_.c_str(), params_.queue_depth, params_.max_io_size, chunks_, regions_,
        params_.max_hdr_size, params_.flags);
}

Con* Path::con(uint16_t cid) const {
    for (auto& c : cons_)
        if (c->cid() == cid && c->state() == Con::State::Established) return c.get();
    return nullptr;
}

Status Path::send_imm(uint16_t cid, uint32_t imm) {
    for (auto& c : cons_)
        if (c->cid() == cid && c->state() == Con::State::Established) return c->post_write_imm(imm);
    return Status::error(ENOTCONN, strf("connection %u is not connected", cid));
}

void Path::on_imm_acked(uint16_t cid) {
    for (const auto& a : imm_acked_)
        if (a.first == cid) return;
    imm_acked_.emplace_back(cid, !info_answered());
}

std::optional<bool> Path::imm_acked_before_info(uint16_t cid) const {
    for (const auto& a : imm_acked_)
        if (a.first == cid) return a.second;
    return std::nullopt;
}

void Path::close(int timeout_ms) {
    if (closing_) return;
    closing_ = true;
    up_ = false;
    for (auto& c : cons_) c->disconnect();
    auto all_down = [this] {
        for (auto& c : cons_)
            if (c->state() == Con::State::Established || c->state() == Con::State::Connecting)
                return false;
        return true;
    };
    Status s = loop_.wait_for(all_down, timeout_ms, "the disconnections");
    if (!s.ok()) log("%s", s.msg().c_str());
}

void Path::lose(const std::string& why) {
    if (closing_ || !lost_reason_.empty()) return;
    lost_reason_ = why;
    log("%s", why.c_str());
}

void Path::on_con_closed(Con& con) {
    if (!closing_) lose(strf("the server closed connection %u", con.cid()));
}

void Path::on_recv(Con& con, const ibv_wc& wc, const uint8_t* data) {
    if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
        const wire::Imm imm = wire::imm_decode(ntohl(wc.imm_data));
        hb_missed_ = 0;
        if (imm.is(wire::ImmType::HbMsg)) {
            ++hb_.received;
            if (cfg_.answer_hb) {
                if (Status s = con.post_write_imm(wire::imm_encode(wire::ImmType::HbAck, 0));
                    !s.ok())
                    lose("cannot answer a heartbeat: " + s.msg());
                else
                    ++hb_.answered;
            }
        } else if (imm.is(wire::ImmType::HbAck)) {
            ++hb_.acked;
        } else if (io_sink_ &&
                   (imm.is(wire::ImmType::IoRsp) || imm.is(wire::ImmType::IoRspWithInv))) {
            io_sink_->on_io_recv(con, wc, data);
        } else {
            log("con %u: unexpected immediate: type %u payload 0x%x", con.cid(), imm.type,
                imm.payload);
        }
        return;
    }
    if (wc.opcode != IBV_WC_RECV) return;
    if (wc.wc_flags & IBV_WC_WITH_IMM) hb_missed_ = 0;
    auto type = wire::parse_msg_type(rt::Bytes(data, wc.byte_len));
    if (con.cid() == 0 && type.ok() &&
        type.value() == static_cast<uint16_t>(wire::MsgType::InfoRsp) && !info_rsp_) {
        info_rsp_.emplace(data, data + wc.byte_len);
        return;
    }
    // Sends with immediate (new rkeys) and with invalidate: I/O traffic.
    // Not told apart by wc_flags here: see IoEngine::on_io_recv.
    if (io_sink_) {
        io_sink_->on_io_recv(con, wc, data);
        return;
    }
    log("con %u: unexpected message of %u bytes (type %d)", con.cid(), wc.byte_len,
        type.ok() ? static_cast<int>(type.value()) : -1);
}

void Path::on_cq_ready() {
    ibv_cq* cq = nullptr;
    void* ctx = nullptr;
    while (ibv_get_cq_event(comp_.get(), &cq, &ctx) == 0) {
        ibv_ack_cq_events(cq, 1);
        if (int ret = ibv_req_notify_cq(cq, 0))
            lose(strf("ibv_req_notify_cq: %s", std::strerror(ret)));
        ibv_wc wc[16];
        int n;
        while ((n = ibv_poll_cq(cq, 16, wc)) > 0)
            for (int i = 0; i < n; ++i) static_cast<Con*>(ctx)->on_wc(wc[i]);
        if (n < 0) lose("ibv_poll_cq failed");
    }
}

void Path::tick(Clock::time_point now) {
    if (!up_ || closing_ || lost() || !cfg_.send_hb || now < next_hb_) return;
    next_hb_ += std::chrono::milliseconds(wire::kHbIntervalMs);
    if (hb_missed_ > wire::kHbMissedMax) {
        lose(strf("the server did not answer %u heartbeats", hb_missed_));
        return;
    }
    if (Status s = send_imm(0, wire::imm_encode(wire::ImmType::HbMsg, 0)); !s.ok()) {
        lose("cannot send a heartbeat: " + s.msg());
        return;
    }
    ++hb_.sent;
    ++hb_missed_;
}

}  // namespace rc
