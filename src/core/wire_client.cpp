// SPDX-License-Identifier: GPL-2.0
// Codecs only a client needs (the userspace test client, the tests): not
// linked into the module. See wire.h for the rules each follows.

#include "core/wire.h"
#include "core/wire_detail.h"
#include "rt/errno.h"

namespace wire {

using namespace detail;

rt::Result<usize> encode_conn_req(rt::MutBytes out, const ConnReqFields& f) {
    ConnReq m;
    zero(&m);
    m.magic.set(kMagic);
    m.version.set(f.version);
    m.cid.set(f.cid);
    m.cid_num.set(f.cid_num);
    m.recon_cnt.set(f.recon_cnt);
    m.sess_uuid = f.sess_uuid;
    m.paths_uuid = f.paths_uuid;
    m.first_conn = f.first_conn ? kFirstConn : 0;
    if (!store(out, 0, m)) return rt::err(rt::errc::nobufs);
    return sizeof(m);
}

rt::Result<ConnRspFields> parse_conn_rsp(rt::Bytes private_data) {
    ConnRsp m;
    if (!load(private_data, 0, &m)) return rt::err(rt::errc::connreset);
    if (m.magic.get() != kMagic) return rt::err(rt::errc::connreset);
    ConnRspFields f;
    f.version = m.version.get();
    if (version_major(f.version) != kProtoMajor) return rt::err(rt::errc::connreset);
    f.err = -static_cast<int>(static_cast<i16>(m.neg_errno.get()));
    f.queue_depth = m.queue_depth.get();
    f.max_io_size = m.max_io_size.get();
    f.max_hdr_size = m.max_hdr_size.get();
    f.flags = m.flags.get();
    return f;
}

rt::Result<usize> encode_info_req(rt::MutBytes out, rt::Bytes name) {
    if (name.empty()) return rt::err(rt::errc::inval);
    if (name.size() >= kNameMax) return rt::err(rt::errc::nametoolong);
    for (u8 c : name)
        if (c == 0) return rt::err(rt::errc::inval);
    InfoReq m;
    zero(&m);
    m.type.set(raw(MsgType::InfoReq));
    __builtin_memcpy(m.pathname, name.data(), name.size());
    if (!store(out, 0, m)) return rt::err(rt::errc::nobufs);
    return sizeof(m);
}

rt::Result<SgDescList> parse_info_rsp(rt::Bytes msg) {
    InfoRspHdr h;
    if (!load(msg, 0, &h)) return rt::err(rt::errc::badmsg);
    if (h.type.get() != raw(MsgType::InfoRsp)) return rt::err(rt::errc::proto);
    const u16 n = h.sg_cnt.get();
    if (n == 0) return rt::err(rt::errc::inval);
    rt::Bytes descs;
    if (!msg.sub(sizeof(h), usize{n} * sizeof(SgDesc), &descs)) return rt::err(rt::errc::badmsg);
    return SgDescList(descs, n);
}

rt::Result<void> check_info_rsp(const SgDescList& descs, u32 queue_depth, u32 chunk_size) {
    const u32 n = descs.count();
    if (n == 0 || chunk_size == 0 || queue_depth % n != 0) return rt::err(rt::errc::inval);
    if (rt::bits_for(n) + rt::bits_for(chunk_size) > kImmPayloadBits)
        return rt::err(rt::errc::inval);
    u64 chunks = 0;
    for (usize i = 0; i < n; ++i) {
        const u32 len = descs.at(i).len;
        if (len == 0 || len % chunk_size != 0) return rt::err(rt::errc::inval);
        chunks += len / chunk_size;
    }
    if (chunks != queue_depth) return rt::err(rt::errc::inval);
    return {};
}

rt::Result<RkeyRspFields> parse_rkey_rsp(rt::Bytes msg) {
    RkeyRsp m;
    if (!load(msg, 0, &m)) return rt::err(rt::errc::badmsg);
    if (m.type.get() != raw(MsgType::RkeyRsp)) return rt::err(rt::errc::proto);
    RkeyRspFields f;
    f.buf_id = m.buf_id.get();
    f.rkey = m.rkey.get();
    return f;
}

rt::Result<usize> encode_rdma_write(rt::MutBytes out, u16 usr_len) {
    RdmaWrite m;
    m.type.set(raw(MsgType::Write));
    m.usr_len.set(usr_len);
    if (!store(out, 0, m)) return rt::err(rt::errc::nobufs);
    return sizeof(m);
}

rt::Result<usize> encode_rdma_read(rt::MutBytes out, u16 usr_len, u16 flags,
                                   rt::Span<const SgDescFields> descs) {
    if (descs.size() > 0xffff) return rt::err(rt::errc::inval);
    const usize total = sizeof(RdmaReadHdr) + descs.size() * sizeof(SgDesc);
    if (out.size() < total) return rt::err(rt::errc::nobufs);
    RdmaReadHdr m;
    m.type.set(raw(MsgType::Read));
    m.usr_len.set(usr_len);
    m.flags.set(flags);
    m.sg_cnt.set(static_cast<u16>(descs.size()));
    if (!store(out, 0, m)) return rt::err(rt::errc::nobufs);
    store_descs(out, sizeof(m), descs);
    return total;
}

}  // namespace wire
