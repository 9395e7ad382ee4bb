// SPDX-License-Identifier: GPL-2.0
// I/O requests: the RTRS header a client writes into a chunk at an offset
// of its choice (parse_io_req with kMaxReadDesc, as the server calls it),
// and the immediates that name chunk and offset (io_req_locate) for any
// payload, queue depth and chunk size; the other immediates' codecs.
//
// Input: queue depth (le32), chunk size (le32), immediate (le32), header
// offset (le32), a byte choosing max_desc, then the chunk's bytes.
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/wire.h"
#include "fuzz_check.h"
#include "rt/errno.h"

using namespace wire;

namespace {

u32 le32_at(const u8* p) { return u32{p[0]} | (u32{p[1]} << 8) | (u32{p[2]} << 16) | (u32{p[3]} << 24); }

void check_parsed(rt::Bytes chunk, u32 off, u32 max_desc) {
    auto r = parse_io_req(chunk, off, max_desc);
    // The same as the parser of its type.
    auto t = parse_msg_type(chunk.size() > off ? rt::Bytes(chunk.data() + off, chunk.size() - off)
                                               : rt::Bytes());
    if (!r.ok()) {
        const int e = r.error();
        FUZZ_CHECK(e == rt::errc::badmsg || e == rt::errc::proto || e == rt::errc::inval);
        if (t.ok() && t.value() == static_cast<u16>(MsgType::Write))
            FUZZ_CHECK(parse_rdma_write(chunk, off).error() == e);
        else if (t.ok() && t.value() == static_cast<u16>(MsgType::Read))
            FUZZ_CHECK(parse_rdma_read(chunk, off, max_desc).error() == e);
        else
            FUZZ_CHECK(e == (t.ok() ? rt::errc::proto : rt::errc::badmsg));
        return;
    }
    const IoReq& q = r.value();
    FUZZ_CHECK(t.ok());
    FUZZ_CHECK(q.hdr_off == off);
    FUZZ_CHECK(q.usr_off + q.usr_len == off && q.data_len == q.usr_off);
    if (q.type == MsgType::Write) {
        FUZZ_CHECK(t.value() == static_cast<u16>(MsgType::Write));
        FUZZ_CHECK(u64{off} + sizeof(RdmaWrite) <= chunk.size());
        FUZZ_CHECK(q.desc.count() == 0 && q.flags == 0);
        // The client's encoding parses back the same.
        std::vector<u8> buf(u64{off} + sizeof(RdmaWrite));
        auto n = encode_rdma_write(rt::MutBytes(buf.data() + off, sizeof(RdmaWrite)),
                                   static_cast<u16>(q.usr_len));
        FUZZ_CHECK(n.ok());
        auto back = parse_io_req(rt::Bytes(buf.data(), buf.size()), off, max_desc);
        FUZZ_CHECK(back.ok() && back.value().type == MsgType::Write &&
                   back.value().usr_len == q.usr_len);
        return;
    }
    FUZZ_CHECK(q.type == MsgType::Read);
    FUZZ_CHECK(t.value() == static_cast<u16>(MsgType::Read));
    const u16 n = q.desc.count();
    FUZZ_CHECK(n <= max_desc);
    FUZZ_CHECK(u64{off} + sizeof(RdmaReadHdr) + u64{n} * sizeof(SgDesc) <= chunk.size());
    FUZZ_CHECK(q.desc.bytes().data() == chunk.data() + off + sizeof(RdmaReadHdr));
    FUZZ_CHECK(q.desc.bytes().size() == usize{n} * sizeof(SgDesc));
    std::vector<SgDescFields> d;
    for (u16 i = 0; i < n; ++i) {
        const SgDescFields f = q.desc.at(i);
        FUZZ_CHECK(f.len != 0 && f.len <= chunk.size());
        d.push_back(f);
    }
    std::vector<u8> buf(chunk.size());
    auto m = encode_rdma_read(rt::MutBytes(buf.data() + off, buf.size() - off),
                              static_cast<u16>(q.usr_len), q.flags,
                              rt::Span<const SgDescFields>(d.data(), d.size()));
    FUZZ_CHECK(m.ok());
    auto back = parse_io_req(rt::Bytes(buf.data(), buf.size()), off, max_desc);
    FUZZ_CHECK(back.ok() && back.value().type == MsgType::Read &&
               back.value().usr_len == q.usr_len && back.value().flags == q.flags &&
               back.value().need_inval() == q.need_inval() && back.value().desc.count() == n);
    for (u16 i = 0; i < n; ++i) FUZZ_CHECK(back.value().desc.at(i) == d[i]);
}

void immediates(u32 qd, u32 chunk_size, u32 imm) {
    // The 4 + 28 bit split.
    const Imm t = imm_decode(imm);
    FUZZ_CHECK(t.type < 16 && t.payload <= kImmPayloadMask);
    FUZZ_CHECK(imm_encode(static_cast<ImmType>(t.type), t.payload) == imm);

    // chunk_bits = ceil(log2(qd)).
    const u32 bits = chunk_bits(qd);
    if (qd > 1) FUZZ_CHECK(bits <= 32 && (u64{1} << bits) >= qd && (u64{1} << (bits - 1)) < qd);
    else FUZZ_CHECK(bits == 0);

    // Decoding and encoding an I/O payload are inverse.
    const IoReqAddr a = io_req_decode(t.payload, bits);
    FUZZ_CHECK(io_req_payload(a.chunk_id, a.offset, bits) == t.payload);
    const u32 ob = offset_bits(bits);
    FUZZ_CHECK(ob <= kImmPayloadBits);
    FUZZ_CHECK(ob == kImmPayloadBits || (u64{a.offset} >> ob) == 0);

    // The server's check: an id below the depth, an offset inside the chunk.
    auto loc = io_req_locate(t.payload, qd, chunk_size);
    if (loc.ok()) {
        FUZZ_CHECK(loc.value().chunk_id < qd && loc.value().offset < chunk_size);
        FUZZ_CHECK(loc.value().chunk_id == a.chunk_id && loc.value().offset == a.offset);
    } else {
        FUZZ_CHECK(loc.error() == rt::errc::range);
        FUZZ_CHECK(a.chunk_id >= qd || a.offset >= chunk_size);
    }
    // The payload of a chunk and offset that fit decodes to them.
    if (qd != 0 && chunk_size != 0 && bits <= kImmPayloadBits) {
        const u32 id = imm % qd;
        const u32 off = ob == 0 ? 0 : (imm >> 3) & ((1u << ob) - 1);
        if (off < chunk_size) {
            auto back = io_req_locate(io_req_payload(id, off, bits), qd, chunk_size);
            FUZZ_CHECK(back.ok() && back.value().chunk_id == id && back.value().offset == off);
        }
    }

    // Responses: msg id and errno magnitude in 19 + 9 bits.
    const int err = static_cast<int>(chunk_size);
    const IoRsp rsp = io_rsp_decode(io_rsp_payload(qd, err));
    const u32 mag = err < 0 ? 0u - static_cast<u32>(err) : static_cast<u32>(err);
    FUZZ_CHECK(rsp.msg_id == (qd & kIoRspMsgIdMask) && rsp.err == (mag & kIoRspErrnoMask));
    const Imm ri = imm_decode(io_rsp_imm(qd, err, imm & 1));
    FUZZ_CHECK(ri.is((imm & 1) ? ImmType::IoRspWithInv : ImmType::IoRsp));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 17) return 0;
    const u32 qd = le32_at(data);
    const u32 chunk_size = le32_at(data + 4);
    const u32 imm = le32_at(data + 8);
    const u32 off = le32_at(data + 12);
    static constexpr u32 kMaxDesc[4] = {kMaxReadDesc, 0, 3, 0xffff};
    const u32 max_desc = kMaxDesc[data[16] & 3];
    // The chunk: its own allocation, so that a read past it is a report.
    std::vector<u8> chunk(data + 17, data + size);
    rt::Bytes c(chunk.data(), chunk.size());

    immediates(qd, chunk_size, imm);
    check_parsed(c, off, max_desc);
    // The same at an offset inside (or just past) the chunk.
    check_parsed(c, static_cast<u32>(off % (chunk.size() + 8)), max_desc);
    return 0;
}
