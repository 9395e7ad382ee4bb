// SPDX-License-Identifier: GPL-2.0
#include "io.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace rc {

uint8_t data_pattern(uint64_t seq, size_t i) {
    return static_cast<uint8_t>((seq * 131 + i * 7 + (i >> 8)) & 0xff);
}

uint8_t usr_pattern(size_t i) { return static_cast<uint8_t>(0xC0 | (i & 0x3f)); }

IoEngine::IoEngine(Path& path) : path_(path) {}

IoEngine::~IoEngine() { path_.set_io_sink(nullptr); }

void IoEngine::problem(const char* fmt, ...) {
    ++problems_;
    va_list ap;
    va_start(ap, fmt);
    char buf[512];
    std::vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    // Protocol violations are printed even with --quiet: they fail the run.
    std::fprintf(stderr, "[%s] protocol violation: %s\n", path_.name().c_str(), buf);
}

Status IoEngine::init(unsigned slots, size_t send_bytes, size_t read_bytes, bool need_inval) {
    if (!path_.up()) return Status::error(ENOTCONN, "the path is not up");
    if (slots == 0) return Status::error(EINVAL, "no request slots");
    const wire::ConnRspFields& p = path_.params();
    queue_depth_ = p.queue_depth;
    const uint64_t chunk = p.chunk_size();
    if (chunk == 0 || chunk > UINT32_MAX || queue_depth_ == 0)
        return Status::error(EINVAL, "the connection response has no usable chunk size");
    chunk_size_ = static_cast<uint32_t>(chunk);
    chunk_bits_ = wire::chunk_bits(queue_depth_);
    new_rkey_ = (p.flags & wire::kMsgNewRkey) != 0;
    if (path_.chunks().size() != queue_depth_)
        return Status::error(EPROTO, strf("%zu chunks described for queue depth %u",
                                          path_.chunks().size(), queue_depth_));
    // 64-byte aligned areas: [send][read + guard] per slot.
    auto align = [](size_t n) { return (n + 63) & ~size_t{63}; };
    send_cap_ = align(send_bytes ? send_bytes : 1);
    read_cap_ = align(read_bytes + kReadGuard) - kReadGuard;
    auto buf = RegBuf::make(
        path_.pd(), slots * (send_cap_ + read_cap_ + kReadGuard),
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | (need_inval ? IBV_ACCESS_MW_BIND : 0));
    if (!buf.ok()) return buf.status();
    buf_ = std::move(buf.value());
    need_inval_ = need_inval;
    mws_.clear();
    mw_rkey_.assign(need_inval ? slots : 0, 0);
    mw_bound_.assign(need_inval ? slots : 0, false);
    for (unsigned i = 0; need_inval && i < slots; ++i) {
        Mw mw(ibv_alloc_mw(path_.pd(), IBV_MW_TYPE_2));
        if (!mw) return sys_error(errno, "ibv_alloc_mw(type 2): --need-inval needs memory windows");
        mw_rkey_[i] = mw->rkey;
        mws_.push_back(std::move(mw));
    }
    slots_.assign(slots, Slot{});
    by_chunk_.assign(queue_depth_, -1);
    busy_ = 0;
    path_.set_io_sink(this);
    return {};
}

uint8_t* IoEngine::send_area(unsigned slot) {
    return buf_->data() + size_t{slot} * (send_cap_ + read_cap_ + kReadGuard);
}

uint8_t* IoEngine::read_area(unsigned slot) { return send_area(slot) + send_cap_; }

wire::SgDescFields IoEngine::read_desc(unsigned slot, uint32_t len) const {
    wire::SgDescFields d;
    d.addr = buf_->addr(size_t{slot} * (send_cap_ + read_cap_ + kReadGuard) + send_cap_);
    d.key = buf_->rkey();
    d.len = len;
    return d;
}

uint32_t IoEngine::req_imm(uint32_t chunk, uint32_t off) const {
    return wire::imm_encode(wire::ImmType::IoReq, wire::io_req_payload(chunk, off, chunk_bits_));
}

uint32_t IoEngine::next_mw_rkey(unsigned slot) const { return ibv_inc_rkey(mw_rkey_.at(slot)); }

Status IoEngine::renew_mw(unsigned slot) {
    Mw mw(ibv_alloc_mw(path_.pd(), IBV_MW_TYPE_2));
    if (!mw) return sys_error(errno, "ibv_alloc_mw(type 2)");
    mw_rkey_[slot] = mw->rkey;
    mws_[slot] = std::move(mw);  // deallocating a bound window unbinds it
    mw_bound_[slot] = false;
    return {};
}

Status IoEngine::post(unsigned slot, uint16_t cid, uint32_t chunk, uint32_t remote_off,
                      uint32_t len, uint32_t imm, uint32_t bind_len) {
    if (slot >= slots_.size()) return Status::error(EINVAL, strf("no slot %u", slot));
    Slot& s = slots_[slot];
    if (s.busy) return Status::error(EBUSY, strf("slot %u is busy", slot));
    if (chunk >= queue_depth_) return Status::error(EINVAL, strf("no chunk %u", chunk));
    if (by_chunk_[chunk] >= 0) return Status::error(EBUSY, strf("chunk %u is busy", chunk));
    if (len > send_cap_) return Status::error(EMSGSIZE, strf("%u bytes do not fit a slot", len));
    if (uint64_t{remote_off} + len > chunk_size_)
        return Status::error(EINVAL,
                             strf("%u bytes at offset %u leave chunk %u", len, remote_off, chunk));
    if (bind_len && (!need_inval_ || bind_len > read_cap_))
        return Status::error(EINVAL, strf("cannot bind a window over %u bytes", bind_len));
    if (bind_len && mw_bound_[slot])
        return Status::error(EBUSY, strf("the window of slot %u is still bound", slot));
    Con* con = path_.con(cid);
    if (!con) return Status::error(ENOTCONN, strf("connection %u is not connected", cid));
    if (bind_len) {
        // On the request's connection, before it: a type 2 window belongs
        // to the QP it is bound on, and the server writes through that QP.
        ibv_send_wr wr{};
        wr.opcode = IBV_WR_BIND_MW;
        wr.bind_mw.mw = mws_[slot].get();
        wr.bind_mw.rkey = next_mw_rkey(slot);
        wr.bind_mw.bind_info.mr = buf_->mr();
        wr.bind_mw.bind_info.addr = reinterpret_cast<uintptr_t>(read_area(slot));
        wr.bind_mw.bind_info.length = bind_len;
        wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
        if (Status st = con->post_io_wr(wr, tag(kTagBind, slot)); !st.ok()) return st;
        mw_rkey_[slot] = wr.bind_mw.rkey;
        mw_bound_[slot] = true;
    }
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uintptr_t>(send_area(slot));
    sge.length = len;
    sge.lkey = buf_->lkey();
    const Path::RemoteChunk& rc = path_.chunks()[chunk];
    if (chase_imm_) {
        ibv_send_wr first{}, second{};
        first.sg_list = len ? &sge : nullptr;
        first.num_sge = len ? 1 : 0;
        first.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        first.imm_data = htonl(imm);
        first.wr.rdma.remote_addr = rc.addr + remote_off;
        first.wr.rdma.rkey = rc.rkey;
        second.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        second.imm_data = htonl(*chase_imm_);
        second.wr.rdma.remote_addr = rc.addr;
        second.wr.rdma.rkey = rc.rkey;
        chase_imm_.reset();
        if (Status st = con->post_io_wr2(first, tag(kTagReq, slot), second, tag(kTagChase, slot));
            !st.ok())
            return st;
    } else if (Status st = con->post_io_write(len ? &sge : nullptr, rc.addr + remote_off, rc.rkey,
                                              imm, tag(kTagReq, slot));
               !st.ok()) {
        return st;
    }
    s = Slot{};
    s.busy = true;
    s.need_inval = bind_len != 0;
    s.bind_done = bind_len == 0;
    s.out.chunk = chunk;
    s.out.cid = cid;
    by_chunk_[chunk] = static_cast<int>(slot);
    ++busy_;
    return {};
}

Status IoEngine::post_request(unsigned slot, uint16_t cid, uint32_t chunk, uint32_t data_len,
                              bool with_data, uint16_t usr_len, rt::Bytes hdr, uint32_t bind_len) {
    if (slot >= slots_.size()) return Status::error(EINVAL, strf("no slot %u", slot));
    const uint64_t off = uint64_t{data_len} + usr_len;
    const uint64_t start = with_data ? 0 : data_len;
    const uint64_t len = off + hdr.size() - start;
    if (off + hdr.size() > chunk_size_)
        return Status::error(EMSGSIZE,
                             strf("%llu bytes of request do not fit a chunk of %u",
                                  static_cast<unsigned long long>(off + hdr.size()), chunk_size_));
    if (len > send_cap_) return Status::error(EMSGSIZE, "request too big for a slot");
    uint8_t* p = send_area(slot);
    // The data, if sent, is already in place (post_write fills it).
    uint8_t* usr = p + (off - usr_len - start);
    for (size_t i = 0; i < usr_len; ++i) usr[i] = usr_pattern(i);
    std::memcpy(p + (off - start), hdr.data(), hdr.size());
    return post(slot, cid, chunk, static_cast<uint32_t>(start), static_cast<uint32_t>(len),
                req_imm(chunk, static_cast<uint32_t>(off)), bind_len);
}

Status IoEngine::post_write(unsigned slot, uint16_t cid, uint32_t chunk, uint32_t size,
                            uint16_t usr_len, uint64_t seq) {
    if (slot >= slots_.size()) return Status::error(EINVAL, strf("no slot %u", slot));
    if (size > send_cap_) return Status::error(EMSGSIZE, "write too big for a slot");
    uint8_t* p = send_area(slot);
    for (size_t i = 0; i < size; ++i) p[i] = data_pattern(seq, i);
    wire::RdmaWrite h;
    auto n =
        wire::encode_rdma_write(rt::MutBytes(reinterpret_cast<uint8_t*>(&h), sizeof(h)), usr_len);
    if (!n.ok()) return Status::error(n.error(), "encode_rdma_write");
    return post_request(slot, cid, chunk, size, true, usr_len,
                        rt::Bytes(reinterpret_cast<const uint8_t*>(&h), sizeof(h)));
}

Status IoEngine::post_read(unsigned slot, uint16_t cid, uint32_t chunk, uint32_t size,
                           uint16_t usr_len) {
    if (slot >= slots_.size()) return Status::error(EINVAL, strf("no slot %u", slot));
    if (size > read_cap_) return Status::error(EMSGSIZE, "read too big for a slot");
    std::memset(read_area(slot), kReadFill, size + kReadGuard);
    // As the reference client: a descriptor (and NEED_INVAL) only with data.
    const bool inval = need_inval_ && size > 0;
    wire::SgDescFields desc = read_desc(slot, size);
    if (inval) desc.key = next_mw_rkey(slot);
    uint8_t hdr[sizeof(wire::RdmaReadHdr) + sizeof(wire::SgDesc)];
    auto n = wire::encode_rdma_read(rt::MutBytes(hdr, sizeof(hdr)), usr_len,
                                    inval ? wire::kMsgNeedInval : 0,
                                    rt::Span<const wire::SgDescFields>(&desc, size ? 1 : 0));
    if (!n.ok()) return Status::error(n.error(), "encode_rdma_read");
    return post_request(slot, cid, chunk, size, false, usr_len, rt::Bytes(hdr, n.value()),
                        inval ? size : 0);
}

size_t IoEngine::first_not(unsigned slot, size_t from, size_t to, uint8_t want) {
    const uint8_t* p = read_area(slot);
    if (to > read_cap_ + kReadGuard) to = read_cap_ + kReadGuard;
    for (size_t i = from; i < to; ++i)
        if (p[i] != want) return i;
    return SIZE_MAX;
}

void IoEngine::maybe_done(unsigned slot) {
    Slot& s = slots_[slot];
    if (!s.busy || !s.sent || !s.answered || !s.bind_done) return;
    s.busy = false;
    --busy_;
    const IoOutcome out = s.out;
    if (on_done) on_done(slot, out);
}

void IoEngine::on_io_sent(Con& con, uint64_t tag, const ibv_wc& wc) {
    (void)wc;
    const uint64_t kind = tag >> 32;
    const uint64_t slot = tag & 0xffffffffu;
    if (kind == kTagChase) return;  // see chase_next_with()
    if (slot >= slots_.size() || !slots_[slot].busy) {
        problem("con %u: a completion (kind %llu) for idle slot %llu", con.cid(),
                static_cast<unsigned long long>(kind), static_cast<unsigned long long>(slot));
        return;
    }
    Slot& s = slots_[slot];
    switch (kind) {
        case kTagReq: s.sent = true; break;
        case kTagBind: s.bind_done = true; break;
        default: break;
    }
    maybe_done(static_cast<unsigned>(slot));
}

void IoEngine::on_io_recv(Con& con, const ibv_wc& wc, const uint8_t* data) {
    if (wc.opcode != IBV_WC_RECV && wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM) {
        problem("con %u: a receive completion with opcode %d", con.cid(), wc.opcode);
        return;
    }
    const bool send = wc.opcode == IBV_WC_RECV;
    if (send && !(wc.wc_flags & IBV_WC_WITH_IMM)) {
        // A send without immediate: only a send with invalidate is due
        // (zero bytes, need_inval reads). rxe reports its invalidation with
        // the kernel's IB_WC_WITH_INVALIDATE bit, 1 << 2, unchanged (which
        // libibverbs calls IBV_WC_IP_CSUM_OK, meaningless on an RC QP); other
        // providers with IBV_WC_WITH_INV.
        constexpr unsigned kKernelWithInvalidate = 1u << 2;
        if (wc.byte_len != 0 || !(wc.wc_flags & (IBV_WC_WITH_INV | kKernelWithInvalidate))) {
            problem("con %u: an unexpected send of %u bytes (wc_flags 0x%x)", con.cid(),
                    wc.byte_len, wc.wc_flags);
            return;
        }
        // The window must be that of a NEED_INVAL read of this connection
        // that awaits its response.
        for (unsigned i = 0; i < slots_.size(); ++i) {
            Slot& s = slots_[i];
            if (s.busy && s.need_inval && !s.answered && !s.out.remote_inval &&
                s.out.cid == con.cid() && mw_rkey_[i] == wc.invalidated_rkey) {
                s.out.remote_inval = true;
                mw_bound_[i] = false;
                return;
            }
        }
        problem(
            "con %u: a send with invalidate of rkey 0x%x, which no request in flight asked "
            "for",
            con.cid(), wc.invalidated_rkey);
        return;
    }
    const wire::Imm imm = wire::imm_decode(ntohl(wc.imm_data));
    if (!imm.is(wire::ImmType::IoRsp) && !imm.is(wire::ImmType::IoRspWithInv)) {
        problem("con %u: unexpected immediate type %u (payload 0x%x)%s", con.cid(), imm.type,
                imm.payload, send ? " in a send" : "");
        return;
    }
    const wire::IoRsp rsp = wire::io_rsp_decode(imm.payload);
    bool got_rkey = false;
    if (send) {
        auto r = wire::parse_rkey_rsp(rt::Bytes(data, wc.byte_len));
        if (!r.ok()) {
            problem(
                "con %u: the response of chunk %u came in a send of %u bytes that is no "
                "RkeyRsp (%s)",
                con.cid(), rsp.msg_id, wc.byte_len, errno_name(r.error()).c_str());
        } else {
            got_rkey = true;
            const wire::RkeyRspFields k = r.value();
            if (!new_rkey_)
                problem(
                    "con %u: a new rkey for chunk %u, but the connection response has no "
                    "kMsgNewRkey",
                    con.cid(), k.buf_id);
            if (k.buf_id >= queue_depth_)
                problem("con %u: a new rkey for chunk %u of %u", con.cid(), k.buf_id, queue_depth_);
            else
                path_.set_chunk_rkey(k.buf_id, k.rkey);
            if (k.buf_id != rsp.msg_id)
                problem("con %u: the new rkey is for chunk %u, the response for chunk %u",
                        con.cid(), k.buf_id, rsp.msg_id);
        }
    } else if (new_rkey_) {
        problem(
            "con %u: the response of chunk %u carries no new rkey, though the connection "
            "response has kMsgNewRkey",
            con.cid(), rsp.msg_id);
    }
    if (rsp.msg_id >= queue_depth_ || by_chunk_[rsp.msg_id] < 0) {
        problem("con %u: a response (errno %u) for chunk %u, which has no request in flight",
                con.cid(), rsp.err, rsp.msg_id);
        return;
    }
    const unsigned slot = static_cast<unsigned>(by_chunk_[rsp.msg_id]);
    by_chunk_[rsp.msg_id] = -1;
    Slot& s = slots_[slot];
    if (s.out.cid != con.cid())
        problem("the response of chunk %u came on connection %u, its request went on %u",
                rsp.msg_id, con.cid(), s.out.cid);
    s.answered = true;
    s.out.err = rsp.err;
    s.out.with_inval = imm.is(wire::ImmType::IoRspWithInv);
    s.out.new_rkey = got_rkey;
    if (!s.need_inval) {
        if (s.out.with_inval)
            problem("con %u: the response of chunk %u says an rkey was invalidated; none was to be",
                    con.cid(), rsp.msg_id);
    } else {
        if (!s.out.with_inval)
            problem(
                "con %u: the response of the NEED_INVAL read on chunk %u is no "
                "IoRspWithInv",
                con.cid(), rsp.msg_id);
        else if (!s.out.remote_inval)
            problem(
                "con %u: the response of chunk %u says IoRspWithInv, but no send with "
                "invalidate of rkey 0x%x came before it",
                con.cid(), rsp.msg_id, mw_rkey_[slot]);
        // A new window for the next read: see the class comment.
        if (Status st = renew_mw(slot); !st.ok())
            problem("con %u: cannot replace the window of chunk %u: %s", con.cid(), rsp.msg_id,
                    st.msg().c_str());
    }
    maybe_done(slot);
}

}  // namespace rc
