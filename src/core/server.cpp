// SPDX-License-Identifier: GPL-2.0
// Servers: rtrs_srv_open()/rtrs_srv_close(), and the connection requests
// that reach them (the decisions of who is accepted, into which session
// and path, and why a request is refused).
#include "core/server.h"

#include "core/addr.h"
#include "core/lock.h"
#include "core/log.h"
#include "core/module.h"
#include "core/path.h"
#include "rt/errno.h"
#include "rt/strbuf.h"

namespace core {

namespace {
// A session has at most this many paths (as upstream's client and server).
constexpr rt::u32 kMaxPaths = wire::kMaxPathsNum;
}

rt::Result<Server*> Server::open(rtrs_env_ulp* ulp, rt::u16 port) {
    Module* m = module();
    if (!m) return rt::err(rt::errc::nxio);
    auto s = RT_TRY(rt::make_own<Server>(rt::Gfp::kernel, ulp, port));
    s->lock_.init(RTRS_ENV_LOCK_SERVER);
    s->all_gone_ = rtrs_env_waiter_new();
    if (!s->lock_ || !s->all_gone_) return rt::err(rt::errc::nomem);
    // The listener takes requests as soon as its first half listens, and
    // its second half can still fail: until it has, every request is
    // refused (opened_), so a failed listen leaves nothing accepted behind
    // (its destruction waits for the handlers still running).
    m->add_server(*s);
    int err = rtrs_env_listen(s.get(), port, &s->listener_);
    if (err) {
        m->remove_server(*s);
        return rt::err(-err);
    }
    {
        Guard g(s->lock_);
        s->opened_ = true;
    }
    Log(kInfo).put("listening on port ").dec(rt::u64{port});
    return s.release();
}

Server::~Server() {
    if (!sessions_.empty()) rtrs_env_warn("rtrs core: server freed with sessions");
    if (all_gone_) rtrs_env_waiter_free(all_gone_);
    if (lock_) rtrs_env_lock_free(lock_.raw());
}

rtrs_env_ulp* Server::close() {
    // No new connection requests: this waits for the handlers still running.
    rtrs_env_listen_stop(listener_);
    listener_ = nullptr;
    bool wait;
    {
        Guard g(lock_);
        closing_ = true;
        for (Session& s : sessions_)
            for (Path& p : s.paths) p.request_close(CloseReason::ServerClose);
        wait = !sessions_.empty();
    }
    if (wait) rtrs_env_waiter_wait(all_gone_);
    module()->remove_server(*this);
    Log(kInfo).put("stopped listening on port ").dec(rt::u64{port_});
    rtrs_env_ulp* ulp = ulp_;
    rt::destroy(this);
    return ulp;
}

rtrs_env_waiter* Server::free_session_locked(Session& s) {
    sessions_.remove(s);
    rt::destroy(&s);
    return closing_ && sessions_.empty() ? all_gone_ : nullptr;
}

Session* Server::find_session_locked(const wire::Uuid& paths_uuid) {
    for (Session& s : sessions_)
        if (s.paths_uuid() == paths_uuid) return &s;
    return nullptr;
}

// Walked, not counted as things come and go: nothing to drift. A path
// counts until its teardown ends (it is on its session's list until then,
// holding its queues and registrations).
ClientCounts Server::count_client_locked(const rtrs_core_addr& client, Session* sess,
                                         const wire::Uuid& sess_uuid) {
    ClientCounts c;
    c.new_session = true;
    c.new_path = true;
    for (Session& s : sessions_) {
        bool has = false;
        for (Path& p : s.paths) {
            if (&s == sess && p.uuid() == sess_uuid) c.new_path = false;
            if (!same_client(p.client_address(), client)) continue;
            has = true;
            ++c.paths;
            c.connections += p.connections_made_locked();
        }
        if (has) ++c.sessions;
        if (has && &s == sess) c.new_session = false;
    }
    return c;
}

rt::u32 Server::close_refused() {
    Guard g(lock_);
    rt::u32 n = 0;
    for (Session& s : sessions_) {
        rt::usize len = 0;  // 0 before its info request: the address alone
        while (s.name()[len]) ++len;
        const rt::Bytes name(reinterpret_cast<const rt::u8*>(s.name()), len);
        for (Path& p : s.paths) {
            if (p.state_locked_read() >= PathState::Stopping) continue;
            if (module()->still_allowed(p.client_address(), name) == Verdict::Ok) continue;
            p.request_close(CloseReason::Admission);
            ++n;
        }
    }
    return n;
}

ClientCounts Server::count_client(const rtrs_core_addr& client) {
    Guard g(lock_);
    return count_client_locked(client, nullptr, wire::Uuid{});
}

// --- connection requests ---------------------------------------------------------

int Server::refuse(rtrs_env_cm* cm, const char* peer, int err, const char* why,
                   const char* detail, LogGate* gate) {
    // A flood of one reason does not hide the others.
    const auto slot = (reinterpret_cast<rt::uptr>(why) >> 3) % (sizeof(refusal_gates_) / sizeof(refusal_gates_[0]));
    Log l(kErr, gate ? *gate : refusal_gates_[slot]);
    l.put("connection request refused: ").put(why);
    if (detail) l.put(" (").put(detail).put(')');
    rtrs_env_trace_conn_refused(peer, -err, why);
    wire::ConnRsp rsp;
    auto n = wire::encode_conn_rsp(rt::MutBytes(reinterpret_cast<rt::u8*>(&rsp), sizeof(rsp)),
                                   wire::conn_rsp_reject(err));
    rtrs_env_cm_reject(cm, &rsp, n.ok() ? static_cast<unsigned>(n.value()) : 0);
    return -err;
}

int Server::accept(rtrs_env_cm* cm, Session& s) {
    const Config& cfg = module()->cfg();
    wire::ConnRsp rsp;
    // The client's chunk is max_io_size + max_hdr_size: our chunk, of which
    // the first page is for the request's headers.
    auto f = wire::conn_rsp_accept(static_cast<rt::u16>(s.queue_depth()), s.chunk_size(),
                                   cfg.page_size, cfg.always_invalidate);
    auto n = wire::encode_conn_rsp(rt::MutBytes(reinterpret_cast<rt::u8*>(&rsp), sizeof(rsp)), f);
    if (!n.ok()) return -n.error();
    return rtrs_env_cm_accept(cm, &rsp, static_cast<unsigned>(n.value()));
}

int Server::on_connect_request(rtrs_env_cm* cm, void* ib_dev, unsigned int port_num,
                               const rtrs_core_addr& client, const rtrs_core_addr& server,
                               rt::Bytes priv) {
    char peer[136], who[64];
    {
        char sv[64];
        format_addr(client, who, sizeof(who));
        format_addr(server, sv, sizeof(sv));
        rt::StrBuf(peer, sizeof(peer)).put(who).put('@').put(sv);
    }
    const char* why = "malformed";
    auto parsed = wire::parse_conn_req(priv, &why);
    if (!parsed.ok()) {
        char detail[48];
        rt::StrBuf(detail, sizeof(detail)).dec(static_cast<rt::u64>(priv.size()))
            .put(" bytes of private data");
        return refuse(cm, peer, parsed.error(), why, detail);
    }
    const wire::ConnReqFields& req = parsed.value();

    // A new session's chunks (64 MiB by default) are allocated without the
    // lock; another request may create the same session meanwhile, so look
    // again once they are there (the spare is then freed unused).
    rt::Own<Session> spare;
    // Outlives the lock below: a path given up there may hold the last
    // reference of a device being removed, whose release wakes the remover.
    rt::RefPtr<Device> late;
    bool first_look = true;
    for (;;) {
        Guard g(lock_);
        if (closing_) return refuse(cm, peer, rt::errc::connreset, "the server is closing");
        if (!opened_) return refuse(cm, peer, rt::errc::connreset, "the server is still opening");
        Session* sess = find_session_locked(req.paths_uuid);
        // Admission, before anything is made for the request (and before
        // it learns whether its session exists). A second look, after the
        // lock was let go to make the session, sees what changed meanwhile:
        // other requests of the address, or a new policy.
        const ClientCounts held = count_client_locked(client, sess, req.sess_uuid);
        const Verdict v = module()->admit_connection(client, held, first_look);
        first_look = false;
        if (v != Verdict::Ok) {
            char detail[128];
            rt::StrBuf d(detail, sizeof(detail));
            d.put(who);
            if (v == Verdict::TooManySessions || v == Verdict::TooManyPaths ||
                v == Verdict::TooManyConnections)
                d.put(" holds ").dec(held.sessions).put(" sessions, ").dec(held.paths)
                    .put(" paths, ").dec(held.connections).put(" connections");
            return refuse(cm, peer, verdict_errno(v), verdict_reason(v), detail,
                          &admission_gates_.gate(client, v, rtrs_env_now_ms()));
        }
        if (!sess && !req.first_conn)
            return refuse(cm, peer, rt::errc::nxio,
                          "no such session, and not the first connection of a new one");
        if (!sess && !spare) {
            g.unlock();
            auto made = Session::create(*this, req.paths_uuid, &why);
            if (!made.ok()) return refuse(cm, peer, made.error(), why);
            spare = rt::move(made.value());
            continue;
        }
        const bool fresh = !sess;
        if (fresh) {
            sess = spare.release();
            sessions_.push_back(*sess);
        }
        return join_locked(*sess, fresh, cm, ib_dev, port_num, client, server, req, peer, &late);
    }
}

int Server::join_locked(Session& sess, bool fresh, rtrs_env_cm* cm, void* ib_dev,
                        unsigned int port_num, const rtrs_core_addr& client,
                        const rtrs_core_addr& server, const wire::ConnReqFields& req,
                        const char* peer, rt::RefPtr<Device>* late) {
    const char* why = nullptr;
    Path* path = nullptr;
    for (Path& p : sess.paths)
        if (p.uuid() == req.sess_uuid) path = &p;
    bool new_path = false;
    if (path) {
        PathState st = path->state_locked_read();
        if (st != PathState::Connecting)
            return refuse(cm, peer, rt::errc::connreset,
                          st == PathState::Up || st == PathState::Joining
                              ? "the path is already established"
                              : "the path is closing",
                          path->name());
        if (req.cid_num != path->con_num())
            return refuse(cm, peer, rt::errc::connreset, "the path has another connection count",
                          path->name());
        if (path->con(req.cid))
            return refuse(cm, peer, rt::errc::connreset, "that connection of the path exists",
                          path->name());
    } else {
        if (sess.paths_num >= kMaxPaths) return drop_fresh(sess, fresh, cm, peer, rt::errc::connreset,
                                                           "the session has the most paths it may");
        for (Path& p : sess.paths)
            if (p.same_addresses(client, server))
                return drop_fresh(sess, fresh, cm, peer, rt::errc::exist,
                                  "the session has a path with the same addresses already",
                                  p.name());
        auto dev = module()->device_for(ib_dev);
        if (!dev.ok())
            return drop_fresh(sess, fresh, cm, peer, dev.error(),
                              dev.error() == rt::errc::busy ? "the device is going away"
                                                            : "cannot use the device",
                              peer);
        path = new (rt::Gfp::kernel) Path(sess, req);
        if (!path) return drop_fresh(sess, fresh, cm, peer, rt::errc::nomem, "no memory for the path");
        auto set = path->setup(rt::move(dev.value()), client, server, port_num, &why);
        if (!set.ok()) {
            int err = set.error();
            *late = path->undo_setup();
            rt::destroy(path);
            return drop_fresh(sess, fresh, cm, peer, err, why, peer);
        }
        sess.paths.push_back(*path);
        ++sess.paths_num;
        new_path = true;
    }

    auto con = path->add_connection(req.cid, cm, &why);
    if (!con.ok()) {
        int err = con.error();
        if (new_path && path->abandon()) {
            // Nothing of the client's depends on it yet: gone at once.
            sess.paths.remove(*path);
            --sess.paths_num;
            *late = path->undo_setup();
            rt::destroy(path);
            return drop_fresh(sess, fresh, cm, peer, err, why, peer);
        }
        // Its other connections are there, or its teardown began (a device
        // removal): the path cannot come up now, and the teardown frees it.
        path->request_close(CloseReason::SetupFailed);
        return refuse(cm, peer, err, why, path->name());
    }
    int err = accept(cm, sess);
    if (err) {
        // The connection holds the cm_id now: the teardown destroys it.
        Log(kErr).put(path->name()).put(": cannot accept connection ").dec(rt::u64{req.cid})
            .put(": ").dec(err);
        path->request_close(CloseReason::SetupFailed);
    }
    return 0;
}

// Refuses a request that would have started a session: a session made for
// it, and still without a path, goes too.
int Server::drop_fresh(Session& sess, bool fresh, rtrs_env_cm* cm, const char* peer, int err,
                       const char* why, const char* detail) {
    // Connection requests end before the server closes (close() stops the
    // listener first): nobody waits for this session.
    if (fresh && sess.paths_num == 0 && free_session_locked(sess))
        rtrs_env_warn("rtrs core: a server closing while a connection request is handled");
    return refuse(cm, peer, err, why, detail);
}

}  // namespace core
