// SPDX-License-Identifier: GPL-2.0
// The protocol half of the glue interface (core/rtrs_core.h): plain C in,
// plain C out, everything checked by the codecs of core/wire.h.

#include "core/rtrs_core.h"
#include "core/wire.h"
#include "rt/errno.h"
#include "rt/strbuf.h"

namespace {

rt::Bytes bytes(const void* p, rt::usize n) { return rt::Bytes(static_cast<const rt::u8*>(p), n); }
rt::MutBytes mut_bytes(void* p, rt::usize n) { return rt::MutBytes(static_cast<rt::u8*>(p), n); }

void say(char* buf, rt::usize cap, const char* a, const char* b = nullptr) {
    rt::StrBuf out(buf, cap);
    out.put(a);
    if (b) out.put(": ").put(b);
}

}  // namespace

extern "C" int rtrs_core_parse_conn_req(const void* data, rt::usize len, rtrs_core_conn_req* req,
                                        char* why, rt::usize why_len) {
    const char* reason = "malformed";
    auto r = wire::parse_conn_req(bytes(data, data ? len : 0), &reason);
    if (!r.ok()) {
        rt::StrBuf out(why, why_len);
        out.put(reason).put(" (").dec(static_cast<rt::u64>(len)).put(" bytes of private data)");
        return -r.error();
    }
    const wire::ConnReqFields& f = r.value();
    req->version = f.version;
    req->cid = f.cid;
    req->cid_num = f.cid_num;
    req->recon_cnt = f.recon_cnt;
    __builtin_memcpy(req->sess_uuid, f.sess_uuid.b, sizeof(req->sess_uuid));
    __builtin_memcpy(req->paths_uuid, f.paths_uuid.b, sizeof(req->paths_uuid));
    req->first_conn = f.first_conn ? 1 : 0;
    return 0;
}

extern "C" rt::usize rtrs_core_conn_rsp_size(void) { return sizeof(wire::ConnRsp); }

extern "C" void rtrs_core_build_conn_rsp(void* buf, int errno_value, rt::u16 queue_depth,
                                         rt::u32 max_io_size, rt::u32 max_hdr_size, rt::u32 flags) {
    wire::ConnRspFields f;
    f.err = errno_value < 0 ? -errno_value : errno_value;
    f.queue_depth = queue_depth;
    f.max_io_size = max_io_size;
    f.max_hdr_size = max_hdr_size;
    f.flags = flags;
    auto r = wire::encode_conn_rsp(mut_bytes(buf, sizeof(wire::ConnRsp)), f);
    if (!r.ok()) rtrs_env_fatal("rtrs_core_build_conn_rsp: encoding failed");
}

extern "C" rt::usize rtrs_core_info_req_size(void) { return sizeof(wire::InfoReq); }

extern "C" int rtrs_core_parse_info_req(const void* data, rt::usize len, char* name,
                                        rt::usize name_cap, char* why, rt::usize why_len) {
    const char* reason = "malformed";
    auto r = wire::parse_info_req(bytes(data, data ? len : 0), &reason);
    if (!r.ok()) {
        say(why, why_len, reason);
        return -r.error();
    }
    rt::Bytes n = r.value().name;
    if (!wire::valid_session_name(n)) {
        say(why, why_len, "session name contains '/' or '.'");
        return -rt::errc::inval;
    }
    if (n.size() + 1 > name_cap) {
        say(why, why_len, "session name too long");
        return -rt::errc::nametoolong;
    }
    __builtin_memcpy(name, n.data(), n.size());
    name[n.size()] = '\0';
    return 0;
}

extern "C" rt::usize rtrs_core_info_rsp_size(unsigned int sg_cnt) {
    return wire::info_rsp_size(sg_cnt);
}

extern "C" void rtrs_core_build_info_rsp(void* buf, unsigned int sg_cnt) {
    wire::InfoRspHdr h;
    __builtin_memset(&h, 0, sizeof(h));
    h.type.set(static_cast<rt::u16>(wire::MsgType::InfoRsp));
    h.sg_cnt.set(static_cast<rt::u16>(sg_cnt));
    __builtin_memcpy(buf, &h, sizeof(h));
}

extern "C" void rtrs_core_info_rsp_set_desc(void* buf, unsigned int i, rt::u64 addr, rt::u32 key,
                                            rt::u32 len) {
    wire::SgDesc d = wire::encode_sg_desc(wire::SgDescFields{addr, key, len});
    __builtin_memcpy(static_cast<rt::u8*>(buf) + sizeof(wire::InfoRspHdr) + i * sizeof(wire::SgDesc),
                     &d, sizeof(d));
}

extern "C" rt::u32 rtrs_core_imm(rt::u32 type, rt::u32 payload) {
    return wire::imm_encode(static_cast<wire::ImmType>(type), payload);
}
extern "C" rt::u32 rtrs_core_imm_type(rt::u32 imm) { return wire::imm_decode(imm).type; }
extern "C" rt::u32 rtrs_core_imm_payload(rt::u32 imm) { return wire::imm_decode(imm).payload; }

extern "C" unsigned int rtrs_core_chunk_bits(int queue_depth) {
    return wire::chunk_bits(queue_depth > 0 ? static_cast<rt::u32>(queue_depth) : 1u);
}

// As the reference does it: a heartbeat goes out when the previous period
// saw traffic; a silent period only counts; past kHbMissedMax the path is dead.
extern "C" rtrs_core_hb_action rtrs_core_hb_tick(unsigned int* missed) {
    if (*missed > wire::kHbMissedMax) return RTRS_CORE_HB_DEAD;
    if ((*missed)++ != 0) return RTRS_CORE_HB_WAIT;
    return RTRS_CORE_HB_SEND;
}

// sysfs_streq(buf, "1"): "1" with at most one trailing newline.
extern "C" int rtrs_core_parse_one(const char* buf, rt::usize len) {
    if (len > 0 && buf[len - 1] == '\n') --len;
    return (len == 1 && buf[0] == '1') ? 0 : -rt::errc::inval;
}

extern "C" int rtrs_core_format_rdma_stats(char* buf, rt::usize cap, rt::u64 read_cnt,
                                           rt::u64 read_bytes, rt::u64 write_cnt,
                                           rt::u64 write_bytes, int inflight) {
    rt::StrBuf out(buf, cap);
    out.dec(read_cnt).put(' ').dec(read_bytes).put(' ').dec(write_cnt).put(' ').dec(write_bytes)
        .put(' ').dec(inflight).put('\n');
    return static_cast<int>(out.len());
}

extern "C" int rtrs_core_locate_io(rt::u32 payload, int queue_depth, rt::u32 chunk_size,
                                   rt::u32* chunk_id, rt::u32* offset) {
    if (queue_depth <= 0) return -rt::errc::range;
    auto r = wire::io_req_locate(payload, static_cast<rt::u32>(queue_depth), chunk_size);
    if (!r.ok()) return -r.error();
    *chunk_id = r.value().chunk_id;
    *offset = r.value().offset;
    return 0;
}

extern "C" int rtrs_core_parse_io_req(const void* chunk, rt::usize chunk_size, rt::u32 off,
                                      rtrs_core_io_req* req, char* why, rt::usize why_len) {
    auto r = wire::parse_io_req(bytes(chunk, chunk_size), off, wire::kMaxReadDesc);
    if (!r.ok()) {
        rt::StrBuf out(why, why_len);
        switch (r.error()) {
        case rt::errc::proto: out.put("unknown message type"); break;
        case rt::errc::badmsg: out.put("request header runs past the chunk"); break;
        default: out.put("invalid request (user header or descriptor)"); break;
        }
        out.put(" at offset ").dec(off);
        return -r.error();
    }
    const wire::IoReq& io = r.value();
    *req = rtrs_core_io_req{};
    req->type = io.type == wire::MsgType::Read ? RTRS_CORE_IO_READ : RTRS_CORE_IO_WRITE;
    req->data_len = io.data_len;
    req->usr_len = io.usr_len;
    req->bytes = io.hdr_off;
    req->need_inval = io.need_inval() ? 1 : 0;
    req->sg_cnt = static_cast<unsigned char>(io.desc.count());
    if (io.desc.count()) {
        wire::SgDescFields d = io.desc.at(0);
        req->addr = d.addr;
        req->key = d.key;
        req->len = d.len;
    }
    return 0;
}

extern "C" rt::u32 rtrs_core_io_rsp_imm(rt::u32 msg_id, int err, int with_inval) {
    return wire::io_rsp_imm(msg_id, err, with_inval != 0);
}

extern "C" rt::usize rtrs_core_rkey_rsp_size(void) { return sizeof(wire::RkeyRsp); }

extern "C" void rtrs_core_build_rkey_rsp(void* buf, rt::u16 buf_id, rt::u32 rkey) {
    auto r = wire::encode_rkey_rsp(mut_bytes(buf, sizeof(wire::RkeyRsp)),
                                   wire::RkeyRspFields{buf_id, rkey});
    if (!r.ok()) rtrs_env_fatal("rtrs_core_build_rkey_rsp: encoding failed");
}
