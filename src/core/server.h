// SPDX-License-Identifier: GPL-2.0
// A server: what one rtrs_srv_open() of an upper layer (ULP) made. It
// listens on a port and owns the sessions that clients open through it.
#pragma once

#include "core/admission.h"
#include "core/env.h"
#include "core/lock.h"
#include "core/log.h"
#include "core/wire.h"
#include "rt/list.h"
#include "rt/refcount.h"
#include "rt/result.h"
#include "rt/types.h"

namespace core {

class Device;
class Session;

class Server : public rt::ListLink<> {
public:
    static rt::Result<Server*> open(rtrs_env_ulp* ulp, rt::u16 port);
    // Stops listening, closes every path and returns once all are gone;
    // then the server is freed. Returns the ULP handle it had.
    rtrs_env_ulp* close() EXCLUDES(lock_);

    // A connection request (rtrs_core_on_connect_request()).
    int on_connect_request(rtrs_env_cm* cm, void* ib_dev, unsigned int port_num,
                           const rtrs_core_addr& client, const rtrs_core_addr& server,
                           rt::Bytes priv) EXCLUDES(lock_);

    // What a client address holds in this server's sessions now (for
    // admission's limits; readers outside, the tests, take it here).
    ClientCounts count_client(const rtrs_core_addr& client) EXCLUDES(lock_);
    // Asks each path that admission would refuse now to close (the
    // operator's choice after a new policy); returns how many.
    rt::u32 close_refused() EXCLUDES(lock_);

    Lock& lock() RETURN_CAPABILITY(lock_) { return lock_; }
    rtrs_env_ulp* ulp() const { return ulp_; }
    rt::u16 port() const { return port_; }

    // Under lock(): a session whose last path is gone. Returns the waiter
    // to wake once the lock is let go (the server closing, its last
    // session gone: the woken closer frees the server and its lock), or
    // nullptr.
    [[nodiscard]] rtrs_env_waiter* free_session_locked(Session& s) REQUIRES(lock_);

    ~Server();
    Server(rtrs_env_ulp* ulp, rt::u16 port) : ulp_(ulp), port_(port) {}

private:
    Session* find_session_locked(const wire::Uuid& paths_uuid) REQUIRES(lock_);
    // The same, with what a connection request for path sess_uuid of sess
    // (nullptr: a new session) would add.
    ClientCounts count_client_locked(const rtrs_core_addr& client, Session* sess,
                                     const wire::Uuid& sess_uuid) REQUIRES(lock_);
    // peer: "<client>@<server>", the path name the request would have (for
    // the conn_refused trace event).
    // *late: a device reference to drop once the lock is let go.
    int join_locked(Session& sess, bool fresh, rtrs_env_cm* cm, void* ib_dev,
                    unsigned int port_num, const rtrs_core_addr& client,
                    const rtrs_core_addr& server, const wire::ConnReqFields& req,
                    const char* peer, rt::RefPtr<Device>* late) REQUIRES(lock_);
    int drop_fresh(Session& sess, bool fresh, rtrs_env_cm* cm, const char* peer, int err,
                   const char* why, const char* detail = nullptr) REQUIRES(lock_);
    // gate: the log gate of the reason (nullptr: one of refusal_gates_,
    // picked by why).
    int refuse(rtrs_env_cm* cm, const char* peer, int err, const char* why,
               const char* detail = nullptr, LogGate* gate = nullptr);
    int accept(rtrs_env_cm* cm, Session& s);

    rtrs_env_ulp* ulp_;
    rt::u16 port_;
    Lock lock_;  // SERVER
    rtrs_env_listener* listener_ = nullptr;
    // The refusals' lines, a gate for each reason (a few share one).
    LogGate refusal_gates_[16];
    // Under lock_:
    // Admission's refusals, a gate for each address and verdict (shared
    // with no other reason: a flood of addresses not on the list hides no
    // rate refusal, nor another address's refusal).
    RefusalGates admission_gates_ GUARDED_BY(lock_);
    rt::List<Session> sessions_ GUARDED_BY(lock_);
    bool closing_ GUARDED_BY(lock_) = false;
    // Set once open() has its listener whole: requests before are refused.
    bool opened_ GUARDED_BY(lock_) = false;
    // (Made by open(), read by close() without the lock: the pointer does
    // not change; done() on it is called under lock_.)
    rtrs_env_waiter* all_gone_ = nullptr;
};

}  // namespace core
