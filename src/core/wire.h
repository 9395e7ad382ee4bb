// SPDX-License-Identifier: GPL-2.0
// The RTRS 2.0 wire format, defined once for the server core (kernel), the
// userspace client and the tests.
//
// Every structure below is made of byte arrays, so that
//   - its layout does not depend on the host's byte order or alignment rules
//     (fields are little-endian, converted explicitly by le16/le32/le64);
//   - its alignment is 1: RTRS puts the I/O request header at whatever offset
//     the client chose inside a chunk (after data and user header), so the
//     header is routinely unaligned.
// The offsets are nonetheless those of the naturally aligned C structures of
// the reference implementation, which contain no implicit padding; the
// static_asserts after each structure pin every offset and size.
//
// The structures are never overlaid on received memory: the codecs copy
// bytes in and out of them, after checking lengths on rt::Bytes views.
//
// Immediate data (32 bits) travels big-endian in the work completion /
// work request (`imm_data` is a network-order field in the verbs APIs); the
// helpers here take and return the host-order value.
//
// Nothing here needs the kernel or a C/C++ library: the header compiles in
// the module's freestanding C++ subset and in hosted C++ alike.
#pragma once

#include "rt/errno.h"
#include "rt/result.h"
#include "rt/span.h"
#include "rt/types.h"
#include "rt/utility.h"

namespace wire {

using rt::i16;
using rt::u16;
using rt::u32;
using rt::u64;
using rt::u8;
using rt::usize;

// --- little-endian field types ---------------------------------------------

// Outside constant evaluation a field is read and written with one
// (unaligned) load or store: on a little-endian machine the bytes are the
// value already, on a big-endian one the compiler's byte swap makes them so.
// The I/O path reads a request's header through these.
namespace detail_le {
template <class T>
constexpr T from_le(T v) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return v;
#else
    if constexpr (sizeof(T) == 2) return __builtin_bswap16(v);
    if constexpr (sizeof(T) == 4) return __builtin_bswap32(v);
    if constexpr (sizeof(T) == 8) return __builtin_bswap64(v);
#endif
}
template <class T>
constexpr T get(const u8* b) {
    if (!__builtin_is_constant_evaluated()) {
        T v;
        __builtin_memcpy(&v, b, sizeof(T));
        return from_le(v);
    }
    T v = 0;
    for (int i = static_cast<int>(sizeof(T)) - 1; i >= 0; --i) v = static_cast<T>((v << 8) | b[i]);
    return v;
}
template <class T>
constexpr void set(u8* b, T v) {
    if (!__builtin_is_constant_evaluated()) {
        v = from_le(v);
        __builtin_memcpy(b, &v, sizeof(T));
        return;
    }
    for (usize i = 0; i < sizeof(T); ++i) b[i] = static_cast<u8>(v >> (8 * i));
}
}  // namespace detail_le

struct le16 {
    u8 b[2];
    constexpr u16 get() const { return detail_le::get<u16>(b); }
    constexpr void set(u16 v) { detail_le::set<u16>(b, v); }
};

struct le32 {
    u8 b[4];
    constexpr u32 get() const { return detail_le::get<u32>(b); }
    constexpr void set(u32 v) { detail_le::set<u32>(b, v); }
};

struct le64 {
    u8 b[8];
    constexpr u64 get() const { return detail_le::get<u64>(b); }
    constexpr void set(u64 v) { detail_le::set<u64>(b, v); }
};

// A UUID as the kernel's uuid_t holds it: 16 bytes, copied as they are (no
// byte swapping of any part).
struct Uuid {
    u8 b[16];
    // Spelled out: gcc 10 (Debian 11's) compiles a defaulted == over an
    // array member to "never equal", and every connection after a path's
    // first then made a session of its own. The asserts below stop a build
    // by such a compiler.
    friend constexpr bool operator==(const Uuid& x, const Uuid& y) {
        for (usize i = 0; i < sizeof(x.b); ++i)
            if (x.b[i] != y.b[i]) return false;
        return true;
    }
};
static_assert(Uuid{{1, 2, 3}} == Uuid{{1, 2, 3}}, "equal uuids compare equal");
static_assert(!(Uuid{{1, 2, 3}} == Uuid{{1, 2, 4}}), "different uuids compare unequal");

// --- protocol constants ------------------------------------------------------

inline constexpr u16 kMagic = 0x1BBD;
inline constexpr u16 kProtoMajor = 2;
inline constexpr u16 kProtoMinor = 0;
// On the wire: major in the high byte, minor in the low byte. A peer is
// refused only for a different major; any minor is accepted.
inline constexpr u16 kProtoVersion = static_cast<u16>((kProtoMajor << 8) | kProtoMinor);
constexpr u16 version_major(u16 version) { return static_cast<u16>(version >> 8); }
constexpr u16 version_minor(u16 version) { return static_cast<u16>(version & 0xff); }

// The longest session (path) name plus its NUL: the size of the pathname
// field of the info request and of the name buffers on both sides.
inline constexpr usize kNameMax = 255;
// Paths per client session (client side limit; the server limits the paths
// of one session to the same number).
inline constexpr u32 kMaxPathsNum = 128;
// The service connection (cid 0) posts this many receives and sizes its
// send queue from it, whatever the session's queue depth.
inline constexpr u32 kServiceConQueueDepth = 512;
// The queue depth travels in an le16 of the connection response.
inline constexpr u32 kMaxSessQueueDepth = 65535;
inline constexpr u32 kMinChunkSize = 8192;
// The reference server's module parameter defaults.
inline constexpr u32 kDefaultMaxChunkSize = 128 * 1024;
inline constexpr u32 kDefaultSessQueueDepth = 512;
// The server refuses a connection request announcing more connections.
inline constexpr u32 kMaxCidNum = 4096;
// A read request carries 0 or 1 descriptor: the client maps its whole buffer
// with one fast-registration MR, and the server refuses more than one.
inline constexpr u32 kMaxReadDesc = 1;
// The client's fast-registration MRs map at most this many 4 KiB pages, so
// the client advertises max_io_size = min(server max_io_size, 128 * 4096).
inline constexpr u32 kClientMaxSegments = 128;
inline constexpr u32 kClientSegmentSize = 4096;

// Heartbeats: sent every interval on the service connection; the path is
// closed after this many consecutive unanswered ones.
inline constexpr u32 kHbIntervalMs = 5000;
inline constexpr u32 kHbMissedMax = 5;

// Message types, the first le16 of every message.
enum class MsgType : u16 {
    InfoReq = 0,
    InfoRsp = 1,
    Write = 2,
    Read = 3,
    RkeyRsp = 4,
};

// Flags of the read request (`flags`) and of the connection response
// (`flags`); the two fields share one bit space.
// Read request: the client wants its rkey invalidated with the response
// (the server answers with an IO_RSP_W_INV immediate / send-with-invalidate).
inline constexpr u16 kMsgNeedInval = 1u << 0;
// Connection response: the server re-registers each chunk after every I/O
// and sends the new rkey in an RKEY_RSP message with the I/O response (the
// reference server sets it when its always_invalidate parameter is on,
// which is the default).
inline constexpr u32 kMsgNewRkey = 1u << 1;

// The connection request's first-connection bit: when set, the server may
// create the session (paths_uuid) if it does not exist; when clear and no
// such session exists, the reference server rejects with ENXIO. (The
// reference client sets it for a new session and, once a path of the session
// has connected, on its reconnects, so a restarted server can be rejoined.)
inline constexpr u8 kFirstConn = 1u << 0;

// --- structures ----------------------------------------------------------------

// Where the peer may RDMA: address, rkey and length of one registered region.
struct SgDesc {
    le64 addr;
    le32 key;
    le32 len;
};
// 8 + 4 + 4: the le64 sits at 0, so no padding anywhere.
static_assert(sizeof(SgDesc) == 16);
static_assert(__builtin_offsetof(SgDesc, addr) == 0);
static_assert(__builtin_offsetof(SgDesc, key) == 8);
static_assert(__builtin_offsetof(SgDesc, len) == 12);

// Client -> server, as the private data of the RDMA CM connect request.
struct ConnReq {
    // Both must be 0: with AF_IB the CM interprets the first bytes of the
    // private data as its own header (version, IP version); the server
    // ignores them.
    u8 cma_version;
    u8 ip_version;
    le16 magic;
    le16 version;
    le16 cid;
    le16 cid_num;
    le16 recon_cnt;
    Uuid sess_uuid;
    Uuid paths_uuid;
    u8 first_conn;  // bit 0: kFirstConn; bits 1..7 reserved (sent as 0)
    u8 reserved[11];
};
// 2 single bytes, 5 le16 (2..11), two 16-byte uuids (12..43; uuid_t is a
// byte array, alignment 1), the bitfield byte (44), reserved[11] (45..55):
// 56, already even (the reference struct's alignment is 2). 56 is all the
// private data an IB connect request carries for the TCP port space (92
// bytes minus the CM's 36-byte address header).
static_assert(sizeof(ConnReq) == 56);
static_assert(__builtin_offsetof(ConnReq, cma_version) == 0);
static_assert(__builtin_offsetof(ConnReq, ip_version) == 1);
static_assert(__builtin_offsetof(ConnReq, magic) == 2);
static_assert(__builtin_offsetof(ConnReq, version) == 4);
static_assert(__builtin_offsetof(ConnReq, cid) == 6);
static_assert(__builtin_offsetof(ConnReq, cid_num) == 8);
static_assert(__builtin_offsetof(ConnReq, recon_cnt) == 10);
static_assert(__builtin_offsetof(ConnReq, sess_uuid) == 12);
static_assert(__builtin_offsetof(ConnReq, paths_uuid) == 28);
static_assert(__builtin_offsetof(ConnReq, first_conn) == 44);
static_assert(__builtin_offsetof(ConnReq, reserved) == 45);

// Server -> client, as the private data of accept or reject.
struct ConnRsp {
    le16 magic;
    le16 version;
    // 0 on accept; on reject the negative errno, truncated to 16 bits
    // (e.g. -ECONNRESET = -104 travels as 0xff98). The client reads it back
    // as a signed 16-bit value. (Named neg_errno: `errno` is a macro in
    // hosted C and C++.)
    le16 neg_errno;
    le16 queue_depth;
    // chunk size minus max_hdr_size: the client's chunk size is the sum of
    // the two; max_io_size is the most data one I/O can carry.
    le32 max_io_size;
    // Room at the end of a chunk for user header plus RTRS header (the
    // reference server uses its PAGE_SIZE, 4096 on x86).
    le32 max_hdr_size;
    le32 flags;  // kMsgNewRkey
    u8 reserved[36];
};
// 4 le16 (0..7), 3 le32 (8..19), reserved[36] (20..55): 56, a multiple of
// the reference struct's alignment 4, so no tail padding.
static_assert(sizeof(ConnRsp) == 56);
static_assert(__builtin_offsetof(ConnRsp, magic) == 0);
static_assert(__builtin_offsetof(ConnRsp, version) == 2);
static_assert(__builtin_offsetof(ConnRsp, neg_errno) == 4);
static_assert(__builtin_offsetof(ConnRsp, queue_depth) == 6);
static_assert(__builtin_offsetof(ConnRsp, max_io_size) == 8);
static_assert(__builtin_offsetof(ConnRsp, max_hdr_size) == 12);
static_assert(__builtin_offsetof(ConnRsp, flags) == 16);
static_assert(__builtin_offsetof(ConnRsp, reserved) == 20);

// Client -> server, a send on the service connection once all connections of
// the path are up.
struct InfoReq {
    le16 type;  // MsgType::InfoReq
    u8 pathname[kNameMax];  // NUL-terminated within the field
    u8 reserved[15];
};
// 2 + 255 (2..256) + 15 (257..271) = 272, even (alignment 2): no padding.
static_assert(sizeof(InfoReq) == 272);
static_assert(__builtin_offsetof(InfoReq, type) == 0);
static_assert(__builtin_offsetof(InfoReq, pathname) == 2);
static_assert(__builtin_offsetof(InfoReq, reserved) == 257);

// Server -> client, the answer to InfoReq, followed by sg_cnt SgDesc: the
// memory regions that together hold the session's queue_depth chunks, in
// chunk order.
struct InfoRspHdr {
    le16 type;  // MsgType::InfoRsp
    le16 sg_cnt;
    u8 reserved[4];
};
// 2 + 2 + 4 = 8: the descriptor array (alignment 8 in the reference struct)
// starts at 8 with no padding, and sizeof of the reference struct (flexible
// array member) is 8.
static_assert(sizeof(InfoRspHdr) == 8);
static_assert(__builtin_offsetof(InfoRspHdr, type) == 0);
static_assert(__builtin_offsetof(InfoRspHdr, sg_cnt) == 2);
static_assert(__builtin_offsetof(InfoRspHdr, reserved) == 4);

// Server -> client, sent (with the I/O response immediate) when kMsgNewRkey
// is on: the chunk buf_id has been re-registered under rkey.
struct RkeyRsp {
    le16 type;  // MsgType::RkeyRsp
    le16 buf_id;
    le32 rkey;
};
// 2 + 2 + 4 = 8, the le32 at 4: no padding.
static_assert(sizeof(RkeyRsp) == 8);
static_assert(__builtin_offsetof(RkeyRsp, type) == 0);
static_assert(__builtin_offsetof(RkeyRsp, buf_id) == 2);
static_assert(__builtin_offsetof(RkeyRsp, rkey) == 4);

// The header common to I/O requests: the type tells which of the two below.
struct MsgHdr {
    le16 type;
};
static_assert(sizeof(MsgHdr) == 2);

// Client -> server, RDMA-written into a chunk: [data][user header][RdmaRead]
// [sg_cnt SgDesc]; the descriptors say where the server writes the data.
struct RdmaReadHdr {
    le16 type;  // MsgType::Read
    le16 usr_len;
    le16 flags;  // kMsgNeedInval
    le16 sg_cnt;
};
// 4 le16 = 8; the descriptors follow at 8 (no padding, as for InfoRspHdr).
static_assert(sizeof(RdmaReadHdr) == 8);
static_assert(__builtin_offsetof(RdmaReadHdr, type) == 0);
static_assert(__builtin_offsetof(RdmaReadHdr, usr_len) == 2);
static_assert(__builtin_offsetof(RdmaReadHdr, flags) == 4);
static_assert(__builtin_offsetof(RdmaReadHdr, sg_cnt) == 6);

// Client -> server, RDMA-written into a chunk: [data][user header][RdmaWrite].
struct RdmaWrite {
    le16 type;  // MsgType::Write
    le16 usr_len;
};
static_assert(sizeof(RdmaWrite) == 4);
static_assert(__builtin_offsetof(RdmaWrite, type) == 0);
static_assert(__builtin_offsetof(RdmaWrite, usr_len) == 2);

#define WIRE_CHECK_PLAIN(T)                                                        \
    static_assert(alignof(T) == 1, #T " must be readable at any offset");          \
    static_assert(__is_standard_layout(T) && __is_trivially_copyable(T), #T " must be plain bytes")
WIRE_CHECK_PLAIN(le16);
WIRE_CHECK_PLAIN(le32);
WIRE_CHECK_PLAIN(le64);
WIRE_CHECK_PLAIN(Uuid);
WIRE_CHECK_PLAIN(SgDesc);
WIRE_CHECK_PLAIN(ConnReq);
WIRE_CHECK_PLAIN(ConnRsp);
WIRE_CHECK_PLAIN(InfoReq);
WIRE_CHECK_PLAIN(InfoRspHdr);
WIRE_CHECK_PLAIN(RkeyRsp);
WIRE_CHECK_PLAIN(MsgHdr);
WIRE_CHECK_PLAIN(RdmaReadHdr);
WIRE_CHECK_PLAIN(RdmaWrite);
#undef WIRE_CHECK_PLAIN

// --- immediate data ------------------------------------------------------------

// 32 bits: the type in the top 4, a payload in the low 28.
inline constexpr u32 kImmTypeBits = 4;
inline constexpr u32 kImmPayloadBits = 28;
inline constexpr u32 kImmTypeMask = (1u << kImmTypeBits) - 1;
inline constexpr u32 kImmPayloadMask = (1u << kImmPayloadBits) - 1;
static_assert(kImmTypeBits + kImmPayloadBits == 32);

enum class ImmType : u32 {
    IoReq = 0,         // client -> server: chunk id and offset of the header
    IoRsp = 1,         // server -> client: msg id and errno
    IoRspWithInv = 2,  // same, and the read's rkey was invalidated
    HbMsg = 8,         // heartbeat, payload 0
    HbAck = 9,         // heartbeat answer, payload 0
};

struct Imm {
    u32 type;  // raw: types outside ImmType arrive too
    u32 payload;
    constexpr bool is(ImmType t) const { return type == static_cast<u32>(t); }
};

constexpr u32 imm_encode(ImmType type, u32 payload) {
    return ((static_cast<u32>(type) & kImmTypeMask) << kImmPayloadBits) |
           (payload & kImmPayloadMask);
}
constexpr Imm imm_decode(u32 imm) { return Imm{imm >> kImmPayloadBits, imm & kImmPayloadMask}; }

// I/O request payload: the chunk id in the top chunk_bits of the 28, the
// offset of the RTRS header inside the chunk in the rest. Both sides derive
// chunk_bits from the session queue depth as ceil(log2(depth)) (the
// reference computes ilog2(depth - 1) + 1, the same for every depth >= 1,
// including 0 bits for depth 1, where ilog2(0) is -1).
constexpr u32 chunk_bits(u32 queue_depth) { return rt::bits_for(queue_depth); }
// Bits left for the offset (28 - chunk_bits; 0 if chunk_bits exceeds 28,
// which valid parameters never do).
constexpr u32 offset_bits(u32 chunk_bits) {
    return chunk_bits >= kImmPayloadBits ? 0 : kImmPayloadBits - chunk_bits;
}

struct IoReqAddr {
    u32 chunk_id;
    u32 offset;
};

// Payload only; wrap with imm_encode(ImmType::IoReq, ...). An offset that
// does not fit spills into the chunk id, as with the reference client (which
// adds it): callers keep offset below the chunk size.
constexpr u32 io_req_payload(u32 chunk_id, u32 offset, u32 chunk_bits) {
    const u32 shift = offset_bits(chunk_bits);
    const u64 id_part = static_cast<u64>(chunk_id) << shift;
    return static_cast<u32>((id_part + offset) & kImmPayloadMask);
}
// With the offset's bits (offset_bits(chunk_bits)) worked out once.
constexpr IoReqAddr io_req_decode_at(u32 payload, u32 offset_bits) {
    payload &= kImmPayloadMask;
    return IoReqAddr{static_cast<u32>(static_cast<u64>(payload) >> offset_bits),
                     payload & ((1u << offset_bits) - 1)};
}
constexpr IoReqAddr io_req_decode(u32 payload, u32 chunk_bits) {
    return io_req_decode_at(payload, offset_bits(chunk_bits));
}
// io_req_decode plus the server's range check (the reference server closes
// the path when the chunk id is not below the queue depth or the offset not
// below the chunk size): ERANGE.
rt::Result<IoReqAddr> io_req_locate(u32 payload, u32 queue_depth, u32 chunk_size);

// I/O response payload: errno (its magnitude, 9 bits) in bits 19..27, the
// message id (= chunk id of the request, 19 bits) in bits 0..18.
inline constexpr u32 kIoRspErrnoBits = 9;
inline constexpr u32 kIoRspMsgIdBits = 19;
inline constexpr u32 kIoRspErrnoMask = (1u << kIoRspErrnoBits) - 1;
inline constexpr u32 kIoRspMsgIdMask = (1u << kIoRspMsgIdBits) - 1;
static_assert(kIoRspErrnoBits + kIoRspMsgIdBits == kImmPayloadBits);

struct IoRsp {
    u32 msg_id;
    // Positive errno magnitude, 0 for success (the reference client negates
    // it before use).
    u32 err;
};

// err may be given with either sign (the reference takes its absolute
// value); magnitudes above 511 are truncated to 9 bits, as on the wire.
constexpr u32 io_rsp_payload(u32 msg_id, int err) {
    const u32 mag = err < 0 ? 0u - static_cast<u32>(err) : static_cast<u32>(err);
    return ((mag & kIoRspErrnoMask) << kIoRspMsgIdBits) | (msg_id & kIoRspMsgIdMask);
}
constexpr u32 io_rsp_imm(u32 msg_id, int err, bool with_inval) {
    return imm_encode(with_inval ? ImmType::IoRspWithInv : ImmType::IoRsp,
                      io_rsp_payload(msg_id, err));
}
constexpr IoRsp io_rsp_decode(u32 payload) {
    return IoRsp{payload & kIoRspMsgIdMask, (payload >> kIoRspMsgIdBits) & kIoRspErrnoMask};
}

// --- decoded forms and codecs ------------------------------------------------------
//
// Parsers take the received bytes and return a plain decoded struct, or a
// positive errno:
//   connection request/response: ECONNRESET for every malformed input (the
//     reference server rejects with it; the reference client fails with it);
//   other messages: EBADMSG when the bytes are too few for what the message
//     says it holds, EPROTO for a wrong or unknown type, EINVAL for a field
//     value out of range, ENAMETOOLONG for an unterminated name.
// Encoders write into `out` and return the number of bytes written, or
// ENOBUFS when out is too small (nothing is written then), EINVAL for an
// argument that cannot be encoded.

struct ConnReqFields {
    u16 version = kProtoVersion;
    u16 cid = 0;
    u16 cid_num = 0;
    u16 recon_cnt = 0;
    Uuid sess_uuid{};
    Uuid paths_uuid{};
    bool first_conn = false;
};

// private_data may be longer than ConnReq (on IB/RoCE the CM hands over the
// whole private data area of the CM message, zero-padded past what the peer
// sent; the tail is ignored) but not shorter. Checks, in the reference server's order
// and all answered with ECONNRESET as the reference does: length, magic,
// major version, cid_num <= kMaxCidNum, cid < cid_num (so cid_num 0 is
// refused too). The first two bytes and the reserved bits are ignored.
// why, if given, is set to a static one-line reason on failure.
rt::Result<ConnReqFields> parse_conn_req(rt::Bytes private_data, const char** why = nullptr);
// Writes sizeof(ConnReq) bytes, the CM bytes and everything reserved zero.
rt::Result<usize> encode_conn_req(rt::MutBytes out, const ConnReqFields& f);

struct ConnRspFields {
    u16 version = kProtoVersion;
    // Positive errno: 0 accepts. On the wire as the 16-bit two's complement
    // of its negation; parsed back as the negation of the signed value.
    int err = 0;
    u16 queue_depth = 0;
    u32 max_io_size = 0;
    u32 max_hdr_size = 0;
    u32 flags = 0;

    // What the client uses as the size of one chunk.
    constexpr u64 chunk_size() const { return u64{max_io_size} + max_hdr_size; }
};

// The server's answers. Accept: chunk_size is split into max_io_size =
// chunk_size - hdr_size and max_hdr_size = hdr_size. Reject: magic, version
// and the errno, everything else 0 (as the reference rejects).
constexpr ConnRspFields conn_rsp_accept(u16 queue_depth, u32 chunk_size, u32 hdr_size,
                                        bool new_rkey) {
    ConnRspFields f;
    f.queue_depth = queue_depth;
    f.max_io_size = chunk_size - hdr_size;
    f.max_hdr_size = hdr_size;
    f.flags = new_rkey ? kMsgNewRkey : 0;
    return f;
}
constexpr ConnRspFields conn_rsp_reject(int err) {
    ConnRspFields f;
    f.err = err;
    return f;
}

// err must be 0..32768 (so that -err fits 16 bits), else EINVAL.
rt::Result<usize> encode_conn_rsp(rt::MutBytes out, const ConnRspFields& f);
// Length (longer accepted), magic and major checked, ECONNRESET each (as the
// reference client). The errno and all else are reported, not judged: the
// client treats a non-zero errno in an accept as ECONNRESET, and in a reject
// reads it without looking at magic or version.
rt::Result<ConnRspFields> parse_conn_rsp(rt::Bytes private_data);

struct InfoReqView {
    // The path name without its NUL, pointing into the parsed bytes:
    // 1..254 bytes, no NUL inside.
    rt::Bytes name;
};

// At least sizeof(InfoReq) bytes (EBADMSG), type InfoReq (EPROTO), a NUL
// within the 255 name bytes (ENAMETOOLONG), and a name of at least one byte
// (EINVAL). The name's characters are checked separately (valid_session_name).
// why, if given, is set to a static one-line reason on failure.
rt::Result<InfoReqView> parse_info_req(rt::Bytes msg, const char** why = nullptr);
// name: 1..254 bytes without NUL (EINVAL, ENAMETOOLONG); writes
// sizeof(InfoReq) bytes, the rest of the name field and reserved zero.
rt::Result<usize> encode_info_req(rt::MutBytes out, rt::Bytes name);

// The server's rule for path names (they name sysfs objects): non-empty,
// no '/' and no '.' anywhere. The reference refuses a violation with EINVAL;
// check_session_name returns exactly that.
bool valid_session_name(rt::Bytes name);
rt::Result<void> check_session_name(rt::Bytes name);

// A descriptor in host order.
struct SgDescFields {
    u64 addr = 0;
    u32 key = 0;
    u32 len = 0;
    friend constexpr bool operator==(const SgDescFields&, const SgDescFields&) = default;
};

SgDescFields decode_sg_desc(const SgDesc& d);
SgDesc encode_sg_desc(const SgDescFields& f);

// A view of count consecutive SgDesc inside received bytes.
class SgDescList {
public:
    constexpr SgDescList() = default;
    // bytes must hold exactly count * sizeof(SgDesc) bytes.
    constexpr SgDescList(rt::Bytes bytes, u16 count) : bytes_(bytes), count_(count) {}
    constexpr u16 count() const { return count_; }
    constexpr rt::Bytes bytes() const { return bytes_; }
    // i < count(); an out-of-range i is a bug and yields a zero descriptor.
    SgDescFields at(usize i) const;

private:
    rt::Bytes bytes_;
    u16 count_ = 0;
};

constexpr usize info_rsp_size(usize sg_cnt) { return sizeof(InfoRspHdr) + sg_cnt * sizeof(SgDesc); }

// descs.size() must fit 16 bits (EINVAL); out must hold info_rsp_size(n)
// (ENOBUFS). Writes exactly info_rsp_size(n) bytes.
rt::Result<usize> encode_info_rsp(rt::MutBytes out, rt::Span<const SgDescFields> descs);
// Client side: header present (EBADMSG), type InfoRsp (EPROTO), sg_cnt != 0
// (EINVAL, as the reference client), all sg_cnt descriptors present
// (EBADMSG). Longer input is accepted.
rt::Result<SgDescList> parse_info_rsp(rt::Bytes msg);
// The reference client's checks of the regions against its session, all
// EINVAL: queue_depth a multiple of sg_cnt; sg_cnt ids and the chunk offset
// fit the 28 payload bits; every len a non-zero multiple of chunk_size; the
// lens add up to exactly queue_depth chunks.
rt::Result<void> check_info_rsp(const SgDescList& descs, u32 queue_depth, u32 chunk_size);

struct RkeyRspFields {
    u16 buf_id = 0;
    u32 rkey = 0;
};
rt::Result<usize> encode_rkey_rsp(rt::MutBytes out, const RkeyRspFields& f);
// At least sizeof(RkeyRsp) (EBADMSG), type RkeyRsp (EPROTO).
rt::Result<RkeyRspFields> parse_rkey_rsp(rt::Bytes msg);

// The type of any message, raw (it may be none of MsgType): EBADMSG if fewer
// than 2 bytes.
rt::Result<u16> parse_msg_type(rt::Bytes msg);

// --- I/O requests inside a chunk ---------------------------------------------------
//
// The client RDMA-writes into chunk chunk_id: data at 0 (writes only; a read
// leaves [0, data_len) for the server to fill), then the user header, then
// the RTRS header, at the offset the immediate names. So for the header at
// `off`:
//   user header = [off - usr_len, off), data = [0, off - usr_len).
// The chunk is the whole chunk buffer (chunk size bytes).

struct IoReq {
    MsgType type = MsgType::Write;  // Write or Read
    u32 data_len = 0;   // data at [0, data_len)
    u32 usr_off = 0;    // user header at [usr_off, usr_off + usr_len); = data_len
    u32 usr_len = 0;
    u32 hdr_off = 0;    // the RTRS header (= the immediate's offset)
    u16 flags = 0;      // Read: kMsgNeedInval; Write: 0
    SgDescList desc;    // Read: where the server writes the data; Write: empty
    SgDescFields first; // desc.at(0) when desc has one, else zero

    constexpr bool need_inval() const { return (flags & kMsgNeedInval) != 0; }
};

// Write header at off: it lies within the chunk (EBADMSG; the reference only
// checks off < chunk size), type Write (EPROTO), usr_len <= off (EINVAL;
// the reference drops such a request without answering).
rt::Result<IoReq> parse_rdma_write(rt::Bytes chunk, u32 off);
// Read header at off: as above for header and usr_len; sg_cnt <= max_desc
// (EINVAL; the reference server accepts only 0 or 1, pass kMaxReadDesc);
// the descriptors lie within the chunk (EBADMSG); each descriptor's len is
// non-zero and at most the chunk size (EINVAL; the reference checks this
// only when it answers, then fails the response and closes the path).
// Unknown flag bits are ignored, as by the reference.
rt::Result<IoReq> parse_rdma_read(rt::Bytes chunk, u32 off, u32 max_desc);
// Either of the two by the type at off; another type is EPROTO (the
// reference closes the path), a header not within the chunk EBADMSG.
rt::Result<IoReq> parse_io_req(rt::Bytes chunk, u32 off, u32 max_desc);

// The three above, for the I/O path: *out filled and 0, or the errno the
// Result would hold (*out then partly filled). Inline, so that the server's
// dispatch reads the header with a few loads and no copy of the result.
namespace detail_io {
// The bytes [off, off + n) of chunk copied into *out; false if they are
// not all there.
template <class T>
inline bool load_at(rt::Bytes chunk, usize off, T* out) {
    rt::Bytes part;
    if (!chunk.sub(off, sizeof(T), &part)) return false;
    __builtin_memcpy(out, part.data(), sizeof(T));
    return true;
}
inline int place_usr(IoReq* r, u32 off, u16 usr_len) {
    if (usr_len > off) return rt::errc::inval;
    r->hdr_off = off;
    r->usr_len = usr_len;
    r->usr_off = off - usr_len;
    r->data_len = r->usr_off;
    return 0;
}
}  // namespace detail_io

inline int parse_rdma_write_into(rt::Bytes chunk, u32 off, IoReq* r) {
    RdmaWrite m;
    if (!detail_io::load_at(chunk, off, &m)) return rt::errc::badmsg;
    if (m.type.get() != static_cast<u16>(MsgType::Write)) return rt::errc::proto;
    r->type = MsgType::Write;
    r->flags = 0;
    r->desc = SgDescList();
    r->first = SgDescFields{};
    return detail_io::place_usr(r, off, m.usr_len.get());
}

inline int parse_rdma_read_into(rt::Bytes chunk, u32 off, u32 max_desc, IoReq* r) {
    RdmaReadHdr m;
    if (!detail_io::load_at(chunk, off, &m)) return rt::errc::badmsg;
    if (m.type.get() != static_cast<u16>(MsgType::Read)) return rt::errc::proto;
    // The reference checks sg_cnt before usr_len; so do we.
    const u16 n = m.sg_cnt.get();
    if (n > max_desc) return rt::errc::inval;
    r->type = MsgType::Read;
    if (int e = detail_io::place_usr(r, off, m.usr_len.get())) return e;
    r->flags = m.flags.get();
    rt::Bytes descs;
    if (!chunk.sub(usize{off} + sizeof(m), usize{n} * sizeof(SgDesc), &descs)) return rt::errc::badmsg;
    r->desc = SgDescList(descs, n);
    r->first = SgDescFields{};
    for (usize i = 0; i < n; ++i) {
        SgDesc d;
        __builtin_memcpy(&d, descs.data() + i * sizeof(SgDesc), sizeof(d));
        const u32 len = d.len.get();
        if (len == 0 || len > chunk.size()) return rt::errc::inval;
        if (i == 0) r->first = SgDescFields{d.addr.get(), d.key.get(), len};
    }
    return 0;
}

inline int parse_io_req_into(rt::Bytes chunk, u32 off, u32 max_desc, IoReq* r) {
    MsgHdr h;
    if (!detail_io::load_at(chunk, off, &h)) return rt::errc::badmsg;
    const u16 type = h.type.get();
    if (type == static_cast<u16>(MsgType::Write)) return parse_rdma_write_into(chunk, off, r);
    if (type == static_cast<u16>(MsgType::Read)) return parse_rdma_read_into(chunk, off, max_desc, r);
    return rt::errc::proto;
}

// Client side: the headers placed at out (which starts at the header's
// offset). Read: descs.size() must fit 16 bits (EINVAL).
rt::Result<usize> encode_rdma_write(rt::MutBytes out, u16 usr_len);
rt::Result<usize> encode_rdma_read(rt::MutBytes out, u16 usr_len, u16 flags,
                                   rt::Span<const SgDescFields> descs);

}  // namespace wire
