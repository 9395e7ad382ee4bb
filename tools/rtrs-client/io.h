// SPDX-License-Identifier: GPL-2.0
// I/O on an open path, as the reference client issues it (rtrs-clt.c,
// rtrs_clt_write_req / rtrs_clt_read_req):
//
//   write: one RDMA write with immediate of [data][user header][RdmaWrite]
//          to the start of a chunk;
//   read:  one RDMA write with immediate of [user header][RdmaReadHdr]
//          [SgDesc...] to offset data_len of a chunk; the descriptor names
//          the client's buffer (registered for remote write), which the
//          server RDMA-writes before it answers.
//
// The immediate is IoReq(chunk, data_len + usr_len), the offset of the RTRS
// header. The server answers each request on the connection it came in on,
// with IoRsp(chunk, errno): as an RDMA write with immediate, or, when the
// connection response has kMsgNewRkey (always_invalidate), as a send with
// immediate carrying an RkeyRsp: the chunk's new rkey, which the next
// request on that chunk must use.
//
// The engine owns `slots` request buffers in one registration (local and
// remote write): per slot a send area and a read area. A slot is busy from
// post until both its response and its send completion are in; then
// on_done runs (the slot is free again by then). It does not choose chunks
// or connections: its users do (io_cmd.cpp, bad.cpp).
//
// With need_inval, reads go as the reference client sends them: the
// descriptor's key is not the registration's but that of a memory window
// (type 2, one per slot) bound over the read area just before the request,
// on the same connection, and the request carries kMsgNeedInval. The server
// must then invalidate that key with a send with invalidate before its
// response, which must be IoRspWithInv: the engine checks that the
// completion of that send names the window's key. The window itself is then
// replaced by a new one (deallocated, which unbinds it in any state) rather
// than reused: soft-RoCE reports a remote invalidation to a userspace QP
// without invalidating the window (rebinding it fails), and it oopses on a
// local invalidation of a type 2 window that is no longer bound
// (rxe_do_invalidate_mw puts the window's NULL QP; seen on 6.1).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/wire.h"
#include "loop.h"
#include "path.h"
#include "rdma.h"
#include "status.h"

namespace rc {

// How a request ended.
struct IoOutcome {
    uint32_t chunk = 0;
    uint16_t cid = 0;
    // The response's errno magnitude (0: success); the client reports -err.
    uint32_t err = 0;
    bool with_inval = false;    // the immediate was IoRspWithInv
    bool new_rkey = false;      // an RkeyRsp came with it
    bool remote_inval = false;  // need_inval read: the server invalidated the window
};

// The patterns of the bytes the client writes (documented in README.md).
uint8_t data_pattern(uint64_t seq, size_t i);
uint8_t usr_pattern(size_t i);
// Reads are pre-filled with this: data the server failed to write shows.
inline constexpr uint8_t kReadFill = 0xAA;
// Bytes after each read area, pre-filled and checked after the read: the
// server must not write past the descriptor's length.
inline constexpr size_t kReadGuard = 64;

class IoEngine final : public IoSink {
public:
    explicit IoEngine(Path& path);
    ~IoEngine();
    IoEngine(const IoEngine&) = delete;
    IoEngine& operator=(const IoEngine&) = delete;

    // The path must be up. send_bytes: the largest request written (data,
    // user header and RTRS header); read_bytes: the largest read.
    // need_inval: reads through memory windows, with kMsgNeedInval.
    Status init(unsigned slots, size_t send_bytes, size_t read_bytes, bool need_inval = false);
    bool need_inval() const { return need_inval_; }

    unsigned slots() const { return static_cast<unsigned>(slots_.size()); }
    uint32_t queue_depth() const { return queue_depth_; }
    uint32_t chunk_size() const { return chunk_size_; }
    uint32_t chunk_bits() const { return chunk_bits_; }
    // The server sends a new rkey with every response (kMsgNewRkey).
    bool new_rkey() const { return new_rkey_; }
    bool busy(unsigned slot) const { return slots_.at(slot).busy; }
    unsigned busy_count() const { return busy_; }
    // The protocol violations seen so far (each was logged on stderr).
    unsigned problems() const { return problems_; }

    uint8_t* send_area(unsigned slot);
    uint8_t* read_area(unsigned slot);
    size_t send_capacity() const { return send_cap_; }
    size_t read_capacity() const { return read_cap_; }
    // A descriptor of the first len bytes of slot's read area.
    wire::SgDescFields read_desc(unsigned slot, uint32_t len) const;
    // The immediate of a request whose RTRS header is at off of chunk.
    uint32_t req_imm(uint32_t chunk, uint32_t off) const;

    // The building block: RDMA-writes len bytes of slot's send area (none
    // if 0) to offset remote_off of chunk on connection cid, with imm; the
    // response is expected for chunk.
    // bind_len: first bind slot's memory window (need_inval) over the first
    // bind_len bytes of its read area, under the key next_mw_rkey(slot).
    Status post(unsigned slot, uint16_t cid, uint32_t chunk, uint32_t remote_off, uint32_t len,
                uint32_t imm, uint32_t bind_len = 0);
    // [data][user header][hdr] with the header at data_len + usr_len, the
    // immediate saying so. with_data: the data_len bytes are sent too (from
    // the send area's start, as they are); else the write starts at
    // data_len (a read). The user header gets usr_pattern().
    Status post_request(unsigned slot, uint16_t cid, uint32_t chunk, uint32_t data_len,
                        bool with_data, uint16_t usr_len, rt::Bytes hdr, uint32_t bind_len = 0);
    // A well-formed write of size bytes of data_pattern(seq).
    Status post_write(unsigned slot, uint16_t cid, uint32_t chunk, uint32_t size, uint16_t usr_len,
                      uint64_t seq);
    // A well-formed read of size bytes into slot's read area (pre-filled
    // with kReadFill, guard included); size 0 sends no descriptor, as the
    // reference client does for a read without data. With need_inval the
    // descriptor names the slot's memory window, and the request carries
    // kMsgNeedInval.
    Status post_read(unsigned slot, uint16_t cid, uint32_t chunk, uint32_t size, uint16_t usr_len);
    // The first offset in [from, to) of slot's read area (guard included)
    // whose byte is not want; SIZE_MAX if none.
    size_t first_not(unsigned slot, size_t from, size_t to, uint8_t want);

    // The next post() sends, in the same ibv_post_send right behind its
    // request, a bare immediate imm to the same chunk (bad io-busy-chunk: a
    // second request on a chunk whose first is in flight). Its completion
    // is not tracked, and the engine sees no request for its response.
    void chase_next_with(uint32_t imm) { chase_imm_ = imm; }

    std::function<void(unsigned slot, const IoOutcome&)> on_done;

    void on_io_recv(Con& con, const ibv_wc& wc, const uint8_t* data) override;
    void on_io_sent(Con& con, uint64_t tag, const ibv_wc& wc) override;

private:
    struct Slot {
        bool busy = false;
        bool sent = false;
        bool answered = false;
        bool need_inval = false;  // a read through the memory window
        bool bind_done = true;    // its bind completed
        IoOutcome out;
    };
    // What a completion tag says: the kind of work request, and its slot.
    enum TagKind : uint64_t { kTagReq = 0, kTagBind = 1, kTagChase = 2 };
    static uint64_t tag(TagKind k, unsigned slot) { return (uint64_t{k} << 32) | slot; }
    uint32_t next_mw_rkey(unsigned slot) const;
    Status renew_mw(unsigned slot);
    void problem(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
    void maybe_done(unsigned slot);

    Path& path_;
    uint32_t queue_depth_ = 0, chunk_size_ = 0, chunk_bits_ = 0;
    bool new_rkey_ = false;
    size_t send_cap_ = 0, read_cap_ = 0;
    std::vector<Slot> slots_;
    std::vector<int> by_chunk_;  // the slot whose request awaits chunk's response, or -1
    unsigned busy_ = 0;
    unsigned problems_ = 0;
    bool need_inval_ = false;
    std::optional<uint32_t> chase_imm_;
    std::optional<RegBuf> buf_;
    // Released before buf_: a window keeps its registration in use.
    std::vector<Mw> mws_;
    std::vector<uint32_t> mw_rkey_;  // the key each window was last bound with
    std::vector<bool> mw_bound_;
};

// `rtrs-client io`: see README.md.
struct IoCmdConfig {
    std::string session;
    // One or more paths: each does the whole I/O (reads and writes) on its own.
    struct Ends {
        std::optional<Addr> src;
        Addr dst;
    };
    std::vector<Ends> paths;
    uint16_t port = 1234;
    uint16_t cons = 2;
    uint32_t reads = 0, writes = 0, size = 0;
    uint16_t usr_len = 16;
    uint32_t depth = 1;
    bool verify_zero = false;
    bool need_inval = false;
    long hold = 0;
    // Seconds after which no new request is issued (0: none); the counts
    // are then upper bounds.
    long duration = 0;
    uint8_t ack_timeout = 0;  // see PathConfig::ack_timeout
    bool verbose = true;
};

// Prints the paths' up lines and the summary line on stdout (with several
// paths, one "io path NAME: ..." line for each before the total). Fails
// (kind Closed) if the server closed a path, else with EIO if any request
// failed or the server broke the protocol.
Status run_io(const IoCmdConfig& cfg);

}  // namespace rc
