// SPDX-License-Identifier: GPL-2.0
// The language of fuzz_core_session's inputs: a 4-byte header (the module
// parameters, the device, a failure point) and then a list of actions of
// clients, the CM, the hardware, the clock, sysfs and the upper layer, each
// an opcode byte and its arguments. Past the end every read gives 0, so any
// byte string is a valid script. Read by fuzz_core_session.cpp, written by
// make_session_seeds.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace script {

// Header byte 0: bit 0 always_invalidate; bits 1..3 the queue depth;
// bits 4..5 the chunk size; bits 6..7 the device's profile.
inline constexpr std::uint32_t kQueueDepths[8] = {16, 1, 2, 3, 8, 12, 32, 128};
inline constexpr std::uint32_t kChunkSizes[4] = {16384, 8192, 65536, 32768};
// Byte 1: the chunk memory budget, 1 + b % 16 MiB (small, so that a flood
// of sessions meets it, and so that memory stays bounded).
// Bytes 2..3 (le16): 0, or the fake kernel's failure point + 1.

enum Op : std::uint8_t {
    NewClient,     // slot tag cid_num addr dev flags: a client in slot (flags bit 0: a
                   // sibling path of the session of slot flags>>1 & 3; bit 3: its
                   // own address follows: family (0 IPv4, 1 IPv6, 2 GID, 3 le16
                   // raw family) and 16 bytes)
    Connect,       // slot cid first: the client's well-formed request for cid
    ConnectAll,    // slot: every connection of the client, each established
    Up,            // slot name: connect_all, the info request, its answer
    ConnectRaw,    // slot mode ...: mode bit 7: (mode & 0x7f) raw bytes follow;
                   // else cid first, then (mode & 7) patches (pos val) of the
                   // well-formed request, then a length (0: 56)
    Establish,     // con: RTRS_CORE_CM_ESTABLISHED
    CmEvent,       // con ev status(le32)
    SendInfo,      // slot name: an info request on the client's connection 0
    RecvRaw,       // con byte_len(le16) n bytes: a message into the next receive
    FinishJoin,    // slot: the info response taken (sends completed)
    Immediate,     // con imm(le32): a write with immediate
    Io,            // slot cid chunk(le16) off(le16) kind ...: a request header
                   // written into the chunk (kind bit 7: off counts back from
                   // the chunk's end; kind & 3: 0 write: usr_len(le16);
                   // 1 read: usr_len(le16) flags(le16) sg_cnt, then sg_cnt x
                   // key(le32) len(le32); 2 raw: n bytes; 3 nothing), then its
                   // immediate
    Burst,         // slot cid first(le16) count kind: well-formed requests on
                   // count chunks (kind bit 0: reads of 4 KiB with invalidation)
    Complete,      // con: the sends up to the next signaled one complete
    CompleteFail,  // con: the same, failed
    CompleteAll,   // con: every signaled send completes
    Answer,        // index status: the ULP answers one request it holds
    AnswerAll,     // status order: the ULP answers all (order bit 0: newest first)
    UlpMode,       // mode: bits 0..1 rdma_ev (0 hold, 1 answer at once with 0,
                   // 2 answer at once with -EIO, 3 return -EIO); bit 2 link_ev
                   // refuses CONNECTED
    Run,           // work items that are due run
    Advance,       // ms/8(le16): the clock moves (heartbeats, stalls)
    Sysfs,         // path attr text: a show, or a store of text
    DeviceRemove,  // dev: the device goes away (waits for its paths)
    SessApi,       // index len priv: get_path_name/get_queue_depth/set_sess_priv
    ZeroSend,      // con: a zero-length message, which even a receive posted
                   // without a buffer takes (a client may send one anywhere)
    kOps
};

// Statuses of the ULP's answers (Answer, AnswerAll).
inline constexpr int kStatuses[8] = {0, -5, -22, -12, -1000, 7, -512, -95};

// Session names (SendInfo, Up): index below kNameTable, or 0xff and a
// length byte with that many bytes.
inline const std::vector<std::string>& names() {
    static const std::vector<std::string> n = {
        "blk0", "blk1", "s", "a/b", "a.b", "", std::string(254, 'x'), "sess-2",
    };
    return n;
}

// Texts written to sysfs files (Sysfs: text below 8; else raw: a length
// byte and the bytes).
inline const std::vector<std::string>& texts() {
    static const std::vector<std::string> t = {"1", "1\n", "0", "", "11", "1\n\n", "\n", "2"};
    return t;
}

// Reads a script; past the end, zeros.
class Reader {
public:
    Reader(const std::uint8_t* d, std::size_t n) : d_(d), n_(n) {}
    bool done() const { return i_ >= n_; }
    std::uint8_t u8() { return i_ < n_ ? d_[i_++] : 0; }
    std::uint16_t u16() { return static_cast<std::uint16_t>(u8() | (u8() << 8)); }
    std::uint32_t u32() { return u16() | (std::uint32_t{u16()} << 16); }
    std::vector<std::uint8_t> bytes(std::size_t n) {
        std::vector<std::uint8_t> out;
        for (std::size_t k = 0; k < n && !done(); ++k) out.push_back(u8());
        return out;
    }

private:
    const std::uint8_t* d_;
    std::size_t n_;
    std::size_t i_ = 0;
};

// Writes a script (the seed generator).
class Writer {
public:
    std::vector<std::uint8_t> out;
    Writer& u8(unsigned v) {
        out.push_back(static_cast<std::uint8_t>(v));
        return *this;
    }
    Writer& u16(unsigned v) { return u8(v & 0xff).u8((v >> 8) & 0xff); }
    Writer& u32(std::uint32_t v) { return u16(v & 0xffff).u16(v >> 16); }
    Writer& op(Op o) { return u8(o); }
};

}  // namespace script
