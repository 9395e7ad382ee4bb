// SPDX-License-Identifier: GPL-2.0
// A path: the cid_num connections that share a path uuid, from the first
// connection request to the end of its teardown. Its life:
//
//   Connecting: connections arrive; the client's info request has not.
//     A path still here kStallMs after its first connection is closed (a
//     client that went silent half-way, or one that trickles connections
//     to hold the path: the deadline does not move).
//   Joining: the info request came; the info work checks it, posts the
//     receives, adds the path to sysfs, tells the ULP, sends the answer.
//   Up: I/O flows; heartbeats every 5 s.
//   Stopping .. Destroying: the teardown, one step after the other, by the
//     close work (see path_close.cpp):
//     Stopping         no new work: the info and timer work are cancelled,
//                      and each connection stops posting (its io, under
//                      its own lock, where every post of it looks first:
//                      core/connection.h)
//     Draining         every connection disconnected and its QP drained:
//                      no completion comes after this
//     AwaitingAnswers  requests the ULP still holds are waited for; its
//                      last answer queues the close work again
//     Leaving          out of sysfs (the session's folder with its last
//                      visible path), then the ULP hears of it
//     AwaitingDisconnect  each established connection's disconnect is
//                      waited for, kDisconnectWaitMs at most: the client
//                      answers our DREQ only after its side of the
//                      connection saw the disconnect, and one whose
//                      device goes away before that never hears it
//                      (upstream's client then waits 30 s in its close,
//                      and the device's removal with it)
//     Destroying       QPs, CQs, cm_ids, registrations, mappings freed;
//                      the path leaves its session (and the session its
//                      server with its last path), and is freed
//
// Any context may ask for the close (request_close()); only the first
// asking counts, with its reason.
#pragma once

#include "core/connection.h"
#include "core/close_reason.h"
#include "core/device.h"
#include "core/env.h"
#include "core/handshake.h"
#include "core/histogram.h"
#include "core/lock.h"
#include "core/path_chunks.h"
#include "core/path_clock.h"
#include "core/server.h"
#include "core/session.h"
#include "core/log.h"
#include "core/wire.h"
#include "rt/array.h"
#include "rt/list.h"
#include "rt/refcount.h"
#include "rt/result.h"
#include "rt/types.h"

namespace core {

class Connection;
class Request;
struct SessionPathsTag;
struct DevicePathsTag;

enum class PathState : rt::u8 {
    Connecting,
    Joining,
    Up,
    Stopping,
    Draining,
    AwaitingAnswers,
    Leaving,
    AwaitingDisconnect,
    Destroying,
};

// Why a path closes (logged, and in the path_down and sess_down trace
// events as a number): the list, the values and their names are in
// core/close_reason.h.
enum class CloseReason : rt::u8 {
// (an enumerator cannot be in parentheses)
// NOLINTNEXTLINE(bugprone-macro-parentheses)
#define RTRS_CLOSE_REASON_ENUMERATOR(name, value, trace, words) name = value,
    RTRS_CLOSE_REASONS(RTRS_CLOSE_REASON_ENUMERATOR, RTRS_CLOSE_REASON_NOSEP)
#undef RTRS_CLOSE_REASON_ENUMERATOR
};
const char* reason_name(CloseReason r);

// Work item kinds of a path (rtrs_env_work_new(path, kind)).
enum PathWork : unsigned { kWorkClose = 1, kWorkInfo, kWorkTimer };

// Its parts, each with its state and its lock rules: Handshake
// (core/handshake.h), PathChunks (core/path_chunks.h) and PathClock
// (core/path_clock.h). The io lock is a base (core/lock.h), for the parts'
// annotations.
class Path : public rt::ListLink<SessionPathsTag>, public rt::ListLink<DevicePathsTag>,
             public PathIoLock {
public:
    // A handshake's deadline, from the path's first connection request
    // (core/path_clock.h).
    static constexpr rt::u32 kStallMs = PathClock::kStallMs;
    // How long the teardown waits for the client to answer its disconnect
    // (a live client does in milliseconds; a dead one never does).
    static constexpr rt::u32 kDisconnectWaitMs = 2000;

    Path(Session& sess, const wire::ConnReqFields& req);
    ~Path();

    // Everything the path needs before its first connection: names,
    // the device, the chunk mappings and registrations, the requests,
    // the locks and work items. Under the server lock.
    rt::Result<void> setup(rt::RefPtr<Device> dev, const rtrs_core_addr& client,
                           const rtrs_core_addr& server, unsigned int port_num,
                           const char** why) REQUIRES(this->server().lock());
    // Frees what setup() made, for a path that never got a connection;
    // returns its device reference, for the caller to drop once it holds
    // no lock (the last one may wake a device's removal).
    [[nodiscard]] rt::RefPtr<Device> undo_setup();
    // A new path whose first connection failed: true when nothing asked
    // for its close yet, and nothing can now (the caller frees it at once
    // with undo_setup()); false when its teardown was asked for (a device
    // removal found it), which then frees it.
    bool abandon();

    Session& sess() const { return *sess_; }
    Server& server() const { return sess_->server(); }
    Device& dev() const { return *dev_; }
    const wire::Uuid& uuid() const { return uuid_; }
    rt::u16 con_num() const { return con_num_; }
    const char* name() const { return name_; }
    const char* client_addr() const { return client_str_; }
    const char* server_addr() const { return server_str_; }
    unsigned int hca_port() const { return hca_port_; }
    rt::u32 mrs_num() const { return chunks_.mrs_num(); }
    Connection* con(rt::u16 cid) const { return cons_[cid]; }
    bool same_addresses(const rtrs_core_addr& client, const rtrs_core_addr& server) const;
    // The client's address (set by setup(), before the path is listed).
    const rtrs_core_addr& client_address() const { return client_; }
    // Connections made for it so far: they are its until its teardown
    // ends (admission counts them).
    rt::u32 connections_made_locked() const REQUIRES(server().lock()) { return cons_made_; }

    // Under the server lock: a connection request for this path.
    rt::Result<Connection*> add_connection(rt::u16 cid, rtrs_env_cm* cm, const char** why)
        REQUIRES(server().lock());

    // Any context: asks for the teardown (only the first call counts).
    void request_close(CloseReason why) EXCLUDES(io_lock_);
    // The same, with the io lock held.
    void close_locked(CloseReason why) REQUIRES(io_lock_);
    // Under the io lock: the state.
    PathState state() const REQUIRES(io_lock_) { return state_; }
    PathState state_locked_read() EXCLUDES(io_lock_);
    // The state without the lock, for what a stale value cannot harm (the
    // last answer's look for AwaitingAnswers: path_close.cpp says why).
    PathState state_unlocked() const NO_THREAD_SAFETY_ANALYSIS {
        return static_cast<PathState>(__atomic_load_n(reinterpret_cast<const rt::u8*>(&state_), __ATOMIC_ACQUIRE));
    }

    // Events.
    void on_cm_event(Connection& c, rtrs_core_cm_event ev, int status);
    // A CM event after which the connection hears nothing more.
    void on_cm_end(Connection& c, CloseReason why);
    // c's completion context (the glue's CQ handler, one at a time).
    void on_wc(Connection& c, rtrs_core_cqe& cqe, const rtrs_core_wc& wc) REQUIRES(c.cq());
    void run_work(unsigned int kind);
    // (The I/O path's events, on_answer(), on_imm() and on_send_done(), are
    // inlined into their C entry points, all in request.cpp: one call from
    // the glue into the core per event, not two.)
    [[gnu::always_inline]] inline void on_answer(Request& r, int status) EXCLUDES(io_lock_);
    void on_sysfs_disconnect();

    // stats/rdma (a reset clears the latency histograms too)
    void format_stats(char* buf, rt::usize cap);
    void reset_stats();
    // debugfs latency: the time from a request's arrival to the ULP's answer
    // ("ulp"), and from the answer to its response's completion
    // ("transport"): the connections' histograms added up.
    void format_latency(char* buf, rt::usize cap);
    Histogram ulp_latency() const;
    Histogram transport_latency() const;
    // The session's name, "" before it has one (for logs and trace events).
    const char* sess_name() const;
    // Requests with the ULP, over the connections.
    rt::u32 inflight() const;

    // io_lock(): the base PathIoLock's.
    bool always_invalidate() const { return always_inval_; }
    rt::u32 chunk_size() const { return chunk_size_; }
    rt::u32 queue_depth() const { return queue_depth_; }
    rt::u64 chunk_dma(rt::u32 id) const { return chunks_.chunk_dma(id); }
    Mr& mr_of_chunk(rt::u32 id) const { return chunks_.mr_of_chunk(id); }

    // Requests (request.cpp): c's completion context; each takes c's
    // lock, once, and no lock of the path's (but to close it on an error).
    [[gnu::always_inline]] inline void on_imm(Connection& c, rt::u32 imm) REQUIRES(c.cq())
        EXCLUDES(c.lock(), io_lock_);
    // The same, for on_wc() (path.cpp, where on_imm() is not inlined).
    void imm_from_wc(Connection& c, rt::u32 imm) REQUIRES(c.cq()) EXCLUDES(c.lock(), io_lock_);
    void on_inv_ok(Connection& c, Request& r) REQUIRES(c.cq()) EXCLUDES(c.lock(), io_lock_);
    void on_inv_failed(Connection& c, Request& r, const rtrs_core_wc& wc) EXCLUDES(c.lock(), io_lock_);
    // A send-queue work request completed with success (the glue's short
    // way, rtrs_core_on_send_done()); a signaled send of c completed.
    [[gnu::always_inline]] inline void on_send_done(Connection& c, rtrs_core_cqe& cqe) REQUIRES(c.cq());
    void on_send_ok(Connection& c) EXCLUDES(c.lock(), io_lock_);
    // c's completion context, no lock: reads the request from its chunk
    // and hands it to the ULP. Not analysed: it fills in the request's
    // header fields (request.h: under its connection's lock) without the
    // lock, which is right while the request is WithUlp (nothing else
    // touches them until the ULP's answer, which takes the lock); the
    // analysis cannot see that. It counts the request in c's statistics
    // (c's completion context).
    void dispatch(Connection& c, Request& r) NO_THREAD_SAFETY_ANALYSIS;
    // Posts what waits on c while there is room.
    void run_pending(Connection& c) REQUIRES(c.lock());

private:
    friend class Server;

    // path_info.cpp (the handshake's own state: hs_)
    void on_info_recv(Connection& c, const rtrs_core_wc& wc);
    void info_work();
    bool join_locked(const char** why, CloseReason* reason) REQUIRES(server().lock());
    bool post_info_locked() REQUIRES(io_lock_, cons_[0]->lock());
    void on_info_wc(Connection& c, const rtrs_core_wc& wc) EXCLUDES(c.lock(), io_lock_);
    // path_close.cpp
    void close_work();
    void leave();
    bool disconnects_waited();
    void destroy();
    // Everything on the device, and the connections unless keep_cons
    // (their cm_ids still live: destroy() frees them after).
    [[nodiscard]] rt::RefPtr<Device> free_resources(bool keep_cons = false);
    // path_timer.cpp
    void timer_work();
    // request.cpp (the connection's lock held)
    // (The per-request steps below are inlined into their callers, all in
    // request.cpp: a call and a frame less at each of them.)
    [[gnu::always_inline]] inline Request* arrive_locked(Connection& c, rt::u32 payload, rt::u64 now_ns)
        REQUIRES(c.lock());
    void release_locked(Request& r);
    [[gnu::always_inline]] inline void invalidate_locked(Connection& c, Request& r) REQUIRES(c.lock());
    [[gnu::always_inline]] inline void respond_locked(Connection& c, Request& r) REQUIRES(c.lock());
    [[gnu::always_inline]] inline bool post_invalidate_locked(Connection& c, Request& r) REQUIRES(c.lock());
    [[gnu::always_inline]] inline bool post_response_locked(Connection& c, Request& r, rt::u32 n)
        REQUIRES(c.lock());
    rt::u32 response_wrs(const Request& r) const;
    // The answer to a heartbeat (out of on_imm(): its work request on the
    // stack would cost every immediate a stack canary).
    [[gnu::noinline]] void hb_ack_locked(Connection& c) REQUIRES(c.lock());
    // What goes wrong on the I/O path, logged out of the hot functions'
    // way, and the path closed (its io lock taken inside the connection's:
    // env.h's order) where it says so.
    [[gnu::cold, gnu::noinline]] void early_imm(Connection& c) EXCLUDES(io_lock_);
    [[gnu::cold, gnu::noinline]] void unknown_imm(rt::u32 type) EXCLUDES(io_lock_);
    [[gnu::cold, gnu::noinline]] void bad_imm(rt::u32 payload) EXCLUDES(io_lock_);
    [[gnu::cold, gnu::noinline]] void busy_chunk(Request& r) EXCLUDES(io_lock_);
    [[gnu::cold, gnu::noinline]] void io_failed(const char* what, int err) EXCLUDES(io_lock_);
    [[gnu::cold, gnu::noinline]] void io_error(const char* what, int err, const char* status = nullptr);
    [[gnu::cold, gnu::noinline]] void response_failed(Request& r, int err);
    [[gnu::cold, gnu::noinline]] void bad_request(Connection& c, Request& r, int err) NO_THREAD_SAFETY_ANALYSIS;
    [[gnu::cold, gnu::noinline]] void ulp_failed(Request& r, int err) EXCLUDES(io_lock_);
    // One answer less on c; the teardown goes on after the last one.
    [[gnu::always_inline]] inline void answered_locked(Connection& c) REQUIRES(c.lock());
    // The teardown, the queue pairs drained: what waits for room never goes.
    void drop_pending() EXCLUDES(io_lock_);
    // Every connection's requests answered (each read under its lock).
    bool all_answered() EXCLUDES(io_lock_);
    // Writes the state (under the io lock; read without it by
    // state_unlocked()).
    void set_state_locked(PathState s) REQUIRES(io_lock_) {
        __atomic_store_n(reinterpret_cast<rt::u8*>(&state_), static_cast<rt::u8>(s), __ATOMIC_RELEASE);
    }
    // Server and io locks held: no established connection still waits
    // for its disconnect.
    bool disconnects_done_locked() const REQUIRES(server().lock(), io_lock_);
    void fail_request(Request& r, int err);

    Session* sess_;
    rt::RefPtr<Device> dev_;
    wire::Uuid uuid_;
    rt::u16 con_num_;
    rt::u16 recon_cnt_;
    bool always_inval_;
    rt::u32 chunk_size_;
    rt::u32 queue_depth_;
    rt::u32 offset_bits_;  // of an I/O immediate's payload (wire::offset_bits())
    unsigned int hca_port_ = 0;
    rtrs_core_addr client_{};
    rtrs_core_addr server_{};
    char client_str_[64] = {};
    char server_str_[64] = {};
    char name_[128] = {};

    // con_num_ of them, owned; under the server lock. (Not GUARDED_BY: the
    // analysis found it read under the io lock only, by post_info_locked(),
    // timer_work() and drop_pending_locked(), and with no lock by
    // close_work() and destroy(); free_resources() writes it with none.)
    rt::Array<Connection*> cons_;
    rt::u32 cons_made_ GUARDED_BY(server().lock()) = 0;  // of cons_, ever (add_connection())
    // The chunks' mappings, registrations and requests: made by setup(),
    // freed by free_resources(), unchanged in between (core/path_chunks.h).
    PathChunks chunks_;

    // (io_lock_: the base PathIoLock's)
    rtrs_env_work* close_work_ = nullptr;
    rtrs_env_work* info_work_ = nullptr;
    // The timer's work item, the handshake's deadline, the heartbeat
    // periods missed (its lock rules: core/path_clock.h).
    PathClock clock_{*this};

    // Under the io lock (written with set_state_locked()).
    PathState state_ GUARDED_BY(io_lock_) = PathState::Connecting;
    // (reason_: written under it, but not GUARDED_BY: the analysis found it
    // read without it by leave() and destroy().)
    CloseReason reason_ = CloseReason::None;
    rt::u64 disconnect_deadline_ms_ GUARDED_BY(io_lock_) = 0;  // AwaitingDisconnect ends by then
    // The info handshake: the request's arrival, the response and how far
    // its posting got (its lock rules: core/handshake.h).
    Handshake hs_{*this};

    rt::u64 charged_ = 0;        // to the module's memory budget (setup())
    LogGate log_gate_;           // the lines a client can make us log
    // (The statistics, the latency histograms and the requests with the
    // ULP are each connection's: core/connection.h.)

    // Under the server lock.
    rtrs_env_sysfs_path* sysfs_ GUARDED_BY(server().lock()) = nullptr;
    rtrs_env_debugfs_path* debugfs_ GUARDED_BY(server().lock()) = nullptr;  // with sysfs_ (nullptr without debugfs)
    // (counted_up_ is not GUARDED_BY: the analysis found it written by
    // info_work() and read and written by leave() without the server lock.)
    bool counted_up_ = false;  // told the ULP it is up (Session::link_up)
};

}  // namespace core

// After Path: its members' lock annotations name the connection's lock
// (Connection, defined before Path), and request.h includes this header
// first.
#include "core/request.h"
