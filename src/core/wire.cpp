// SPDX-License-Identifier: GPL-2.0
// Codecs of the RTRS wire structures that the server needs (see wire.h for
// the rules each follows); wire_client.cpp has the client's.
// Received bytes are only ever read through rt::Bytes::sub() and copied into
// a local structure; nothing is overlaid on network memory.

#include "core/wire.h"

#include "core/wire_detail.h"
#include "rt/errno.h"

namespace wire {

using namespace detail;

// --- immediates ------------------------------------------------------------------

rt::Result<IoReqAddr> io_req_locate(u32 payload, u32 queue_depth, u32 chunk_size) {
    const IoReqAddr a = io_req_decode(payload, chunk_bits(queue_depth));
    if (a.chunk_id >= queue_depth || a.offset >= chunk_size) return rt::err(rt::errc::range);
    return a;
}

// --- connection establishment ------------------------------------------------------

rt::Result<ConnReqFields> parse_conn_req(rt::Bytes private_data, const char** why) {
    auto refuse = [why](const char* reason) {
        if (why) *why = reason;
        return rt::err(rt::errc::connreset);
    };
    ConnReq m;
    if (!load(private_data, 0, &m)) return refuse("private data too short");
    if (m.magic.get() != kMagic) return refuse("wrong magic");
    ConnReqFields f;
    f.version = m.version.get();
    if (version_major(f.version) != kProtoMajor) return refuse("unsupported major version");
    f.cid = m.cid.get();
    f.cid_num = m.cid_num.get();
    if (f.cid_num > kMaxCidNum) return refuse("too many connections (cid_num)");
    if (f.cid >= f.cid_num) return refuse("cid not below cid_num");
    f.recon_cnt = m.recon_cnt.get();
    f.sess_uuid = m.sess_uuid;
    f.paths_uuid = m.paths_uuid;
    f.first_conn = (m.first_conn & kFirstConn) != 0;
    return f;
}

rt::Result<usize> encode_conn_rsp(rt::MutBytes out, const ConnRspFields& f) {
    if (f.err < 0 || f.err > 32768) return rt::err(rt::errc::inval);
    ConnRsp m;
    zero(&m);
    m.magic.set(kMagic);
    m.version.set(f.version);
    // -err in 16-bit two's complement: 0 stays 0, 104 becomes 0xff98.
    m.neg_errno.set(static_cast<u16>(0u - static_cast<u32>(f.err)));
    m.queue_depth.set(f.queue_depth);
    m.max_io_size.set(f.max_io_size);
    m.max_hdr_size.set(f.max_hdr_size);
    m.flags.set(f.flags);
    if (!store(out, 0, m)) return rt::err(rt::errc::nobufs);
    return sizeof(m);
}

// --- session info ------------------------------------------------------------------

rt::Result<InfoReqView> parse_info_req(rt::Bytes msg, const char** why) {
    auto refuse = [why](int code, const char* reason) {
        if (why) *why = reason;
        return rt::err(code);
    };
    InfoReq m;
    if (!load(msg, 0, &m)) return refuse(rt::errc::badmsg, "info request too short");
    if (m.type.get() != raw(MsgType::InfoReq))
        return refuse(rt::errc::proto, "not an info request (message type)");
    usize len = 0;
    while (len < kNameMax && m.pathname[len] != 0) ++len;
    if (len == kNameMax) return refuse(rt::errc::nametoolong, "session name not terminated");
    if (len == 0) return refuse(rt::errc::inval, "empty session name");
    InfoReqView v;
    if (!msg.sub(__builtin_offsetof(InfoReq, pathname), len, &v.name))
        return refuse(rt::errc::badmsg, "info request too short");  // cannot happen
    return v;
}

bool valid_session_name(rt::Bytes name) {
    if (name.empty()) return false;
    for (u8 c : name)
        if (c == '/' || c == '.') return false;
    return true;
}

rt::Result<void> check_session_name(rt::Bytes name) {
    if (!valid_session_name(name)) return rt::err(rt::errc::inval);
    return {};
}

SgDescFields decode_sg_desc(const SgDesc& d) {
    SgDescFields f;
    f.addr = d.addr.get();
    f.key = d.key.get();
    f.len = d.len.get();
    return f;
}

SgDesc encode_sg_desc(const SgDescFields& f) {
    SgDesc d;
    d.addr.set(f.addr);
    d.key.set(f.key);
    d.len.set(f.len);
    return d;
}

SgDescFields SgDescList::at(usize i) const {
    SgDesc d;
    if (i >= count_ || !load(bytes_, i * sizeof(SgDesc), &d)) return SgDescFields{};
    return decode_sg_desc(d);
}

rt::Result<usize> encode_info_rsp(rt::MutBytes out, rt::Span<const SgDescFields> descs) {
    if (descs.size() > 0xffff) return rt::err(rt::errc::inval);
    const usize total = info_rsp_size(descs.size());
    if (out.size() < total) return rt::err(rt::errc::nobufs);
    InfoRspHdr h;
    zero(&h);
    h.type.set(raw(MsgType::InfoRsp));
    h.sg_cnt.set(static_cast<u16>(descs.size()));
    if (!store(out, 0, h)) return rt::err(rt::errc::nobufs);
    store_descs(out, sizeof(h), descs);
    return total;
}

rt::Result<usize> encode_rkey_rsp(rt::MutBytes out, const RkeyRspFields& f) {
    RkeyRsp m;
    m.type.set(raw(MsgType::RkeyRsp));
    m.buf_id.set(f.buf_id);
    m.rkey.set(f.rkey);
    if (!store(out, 0, m)) return rt::err(rt::errc::nobufs);
    return sizeof(m);
}

rt::Result<u16> parse_msg_type(rt::Bytes msg) {
    MsgHdr h;
    if (!load(msg, 0, &h)) return rt::err(rt::errc::badmsg);
    return h.type.get();
}

// --- I/O requests ----------------------------------------------------------------

namespace {
rt::Result<IoReq> as_result(int e, const IoReq& r) {
    if (e) return rt::err(e);
    return r;
}
}  // namespace

rt::Result<IoReq> parse_rdma_write(rt::Bytes chunk, u32 off) {
    IoReq r;
    const int e = parse_rdma_write_into(chunk, off, &r);
    return as_result(e, r);
}

rt::Result<IoReq> parse_rdma_read(rt::Bytes chunk, u32 off, u32 max_desc) {
    IoReq r;
    const int e = parse_rdma_read_into(chunk, off, max_desc, &r);
    return as_result(e, r);
}

rt::Result<IoReq> parse_io_req(rt::Bytes chunk, u32 off, u32 max_desc) {
    IoReq r;
    const int e = parse_io_req_into(chunk, off, max_desc, &r);
    return as_result(e, r);
}

}  // namespace wire
