// SPDX-License-Identifier: GPL-2.0
// One I/O request, on one chunk of a path. Its life:
//
//   Free --arrival--> Invalidating --(local invalidation done)--> WithUlp
//   Free --arrival (no always_invalidate)----------------------> WithUlp
//   WithUlp --ULP answers, response posted--> Free
//           \-> Queued (no room in the send queue yet) --posted--> Free
//   any --path closing--> Free (nothing more is posted)
//
// A request is its connection's while in flight (core/connection.h): it
// arrives on one connection and is answered on it, and its fields are under
// that connection's lock. Its state alone is read by other connections'
// arrivals (a client that reuses a chunk before its response came, on
// another connection): it is claimed at the arrival with a compare and
// exchange, and given back (Free) with a release store.
//
// The upper layer knows a request as its struct rtrs_srv_op: the first
// bytes are laid out as upstream's (OpHeader), because upstream
// rnbd-server's trace event reads the direction at offset 12.
#pragma once

#include "core/lock.h"
#include "core/path.h"
#include "core/path_chunks.h"
#include "core/rtrs_core.h"
#include "core/wire.h"
#include "rt/list.h"
#include "rt/types.h"

namespace core {

class Connection;
class Path;

struct OpHeader {
    void* con;         // the connection it came in on
    rt::u32 msg_id;    // = its chunk
    rt::u8 dir;        // kDirRead or kDirWrite
};
static_assert(__builtin_offsetof(OpHeader, con) == 0);
static_assert(__builtin_offsetof(OpHeader, msg_id) == 8);
static_assert(__builtin_offsetof(OpHeader, dir) == 12);

// The kernel's READ and WRITE.
inline constexpr rt::u8 kDirRead = 0;
inline constexpr rt::u8 kDirWrite = 1;

enum class ReqState : rt::u8 { Free, Invalidating, WithUlp, Queued };

// What waits for room in a connection's send queue.
struct PendingTag;
enum class Pending : rt::u8 { None, Invalidate, Respond };

// Completion kinds (rtrs_core_cqe::kind).
enum CqeKind : unsigned {
    kCqeRecv = 1,      // Connection: a receive
    kCqeSend,          // Connection: a response, a heartbeat ack, or an error of either
    kCqeInv,           // Request: the local invalidation before it
    kCqeInfo,          // Path: a batch of registrations, or the info response
};

class Request : public OpHeader, public rt::ListLink<PendingTag> {
public:
    Request() = default;
    void init(Path& path, rt::u32 id);

    static Request* from_op(rtrs_srv_op* op) {
        return static_cast<Request*>(reinterpret_cast<OpHeader*>(op));
    }
    rtrs_srv_op* op() { return reinterpret_cast<rtrs_srv_op*>(static_cast<OpHeader*>(this)); }

    Path& path() const { return *path_; }
    // The connection it came in on (set at its arrival; the ULP's answer
    // reads it without a lock: the arrival happened before the ULP got it).
    Connection& conn() const { return *static_cast<Connection*>(con); }
    rt::u32 id() const { return msg_id; }

    // The state (see the header).
    ReqState st() const { return static_cast<ReqState>(__atomic_load_n(&state_, __ATOMIC_RELAXED)); }
    // Moves it on, under its connection's lock; Free gives it back.
    void set(ReqState s) { __atomic_store_n(&state_, static_cast<rt::u8>(s), __ATOMIC_RELEASE); }
    // An arrival: Free -> s; false when it was not Free.
    bool claim(ReqState s) {
        rt::u8 was = static_cast<rt::u8>(ReqState::Free);
        return __atomic_compare_exchange_n(&state_, &was, static_cast<rt::u8>(s), false, __ATOMIC_ACQUIRE,
                                           __ATOMIC_RELAXED);
    }

    // Under its connection's lock.
    Pending pending GUARDED_BY(conn().lock()) = Pending::None;
    int answer GUARDED_BY(conn().lock()) = 0;      // the status to send (Queued)
    rt::u32 hdr_off GUARDED_BY(conn().lock()) = 0; // the RTRS header's offset in the chunk
    // From the request header (dispatch()):
    wire::MsgType type GUARDED_BY(conn().lock()) = wire::MsgType::Write;
    rt::u32 data_len GUARDED_BY(conn().lock()) = 0;
    rt::u32 usr_len GUARDED_BY(conn().lock()) = 0;
    bool need_inval GUARDED_BY(conn().lock()) = false;
    bool has_desc GUARDED_BY(conn().lock()) = false;
    wire::SgDescFields desc GUARDED_BY(conn().lock());
    // For the latency histograms (rtrs_env_now_ns()): when it arrived, and
    // when the ULP answered.
    rt::u64 arrived_ns GUARDED_BY(conn().lock()) = 0;
    rt::u64 answered_ns GUARDED_BY(conn().lock()) = 0;

    rtrs_core_cqe inv_cqe{};

    // Made once the path's chunks are registered (PathChunks), before any
    // request arrives, then unchanged: the registration that covers the
    // chunk, and the parts of its response that never change (the chunk's
    // DMA address; with always_invalidate, the registration and its
    // new-key message). The response's other fields are filled in at each
    // response, under its connection's lock. (Not GUARDED_BY: written at
    // setup without it.)
    Mr* mr = nullptr;
    rtrs_env_resp rsp{};

private:
    Path* path_ = nullptr;
    rt::u8 state_ = static_cast<rt::u8>(ReqState::Free);  // a ReqState (atomic: st(), set(), claim())
};

}  // namespace core
