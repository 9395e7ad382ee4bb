// SPDX-License-Identifier: GPL-2.0
// The info exchange: the client's info request (its session name, once all
// connections of the path are there), and our answer (the chunks'
// registrations, and where they are). Afterwards the path is up: in sysfs,
// known to the ULP, serving I/O. What the handshake itself remembers (the
// request's arrival, the response and how far its posting got) is hs_'s,
// a Handshake (handshake.h); the decisions are here.
#include "core/lock.h"
#include "core/log.h"
#include "core/module.h"
#include "core/path.h"
#include "core/server.h"
#include "core/session.h"
#include "rt/errno.h"

namespace core {

// Completion context: the info request arrived (connection 0's buffer).
void Path::on_info_recv(Connection& c, const rtrs_core_wc& wc) {
    {
        Guard g(io_lock_);
        if (state_ == PathState::Up) {
            // Past the handshake only immediates come: a message would eat
            // a receive that is never posted again.
            Log(kErr, log_gate_).who(sess_name(), name_).put(": a message on connection ").dec(rt::u64{c.cid()})
                .put(" of a path that is up; closing the path");
            close_locked(CloseReason::Protocol);
            return;
        }
        if (state_ != PathState::Connecting) return;  // joining or closing
        if (c.cid() != 0 || hs_.received_locked()) {
            Log(kErr, log_gate_).who(sess_name(), name_).put(": a message on connection ").dec(rt::u64{c.cid()})
                .put(" that is not the info request; closing the path");
            close_locked(CloseReason::Protocol);
            return;
        }
        hs_.note_request_locked(wc.byte_len);
        // Checking it may sleep (sysfs, the ULP): in process context. Queued
        // under the lock: a teardown that begins after it (it sets the state
        // under this lock) cancels it; one that began before left the state
        // that returned above.
        rtrs_env_work_queue(info_work_, 0);
    }
}

// Under the server lock: the checks of the info request, and what makes the
// path usable (receives posted, files in sysfs). False, with the reason,
// when the path must close.
bool Path::join_locked(const char** why, CloseReason* reason) {
    *reason = CloseReason::Protocol;
    Connection* c0 = cons_[0];
    rtrs_env_buf_sync_for_cpu(dev_->env(), &c0->info_buf);
    const char* bad = "malformed";
    auto req = wire::parse_info_req(
        rt::Bytes(static_cast<const rt::u8*>(c0->info_buf.cpu),
                  hs_.request_len() < c0->info_buf.len ? hs_.request_len() : c0->info_buf.len),
        &bad);
    if (!req.ok()) {
        Log(kErr, log_gate_).who(sess_name(), name_).put(": bad info request: ").put(bad);
        return false;
    }
    rt::Bytes name = req.value().name;
    if (!wire::valid_session_name(name)) {
        Log(kErr, log_gate_).who(sess_name(), name_).put(": bad info request: session name contains '/' or '.'");
        return false;
    }
    // Admission: the allow-list entry of the client's address may limit
    // the names it uses (checked again on each path: its entry may be
    // another, or the policy may have changed since it connected).
    const Verdict admitted = module()->admit_name(client_, name);
    if (admitted != Verdict::Ok) {
        *reason = CloseReason::Admission;
        Log l(kErr, log_gate_);
        l.who(sess_name(), name_).put(": bad info request: ").put(verdict_reason(admitted))
            .put(" ('");
        for (rt::u8 ch : name) l.put(static_cast<char>(ch));
        l.put("')");
        return false;
    }
    // CVE-2024-50062: the request must not come before every connection.
    for (rt::u16 cid = 0; cid < con_num_; ++cid) {
        if (!cons_[cid]) {
            Log(kErr, log_gate_).who(sess_name(), name_).put(": info request before connection ").dec(rt::u64{cid})
                .put(" of ").dec(rt::u64{con_num_}).put(" is up");
            return false;
        }
    }
    if (!sess_->named()) {
        // Names are the class folder's: unique among every server's sessions.
        if (!module()->claim_name(*sess_, name)) {
            Log l(kErr, log_gate_);
            l.who(sess_name(), name_).put(": session name '");
            for (rt::u8 ch : name) l.put(static_cast<char>(ch));
            l.put("' is taken by another session");
            return false;
        }
    } else if (!sess_->has_name(name)) {
        Log(kErr, log_gate_).who(sess_name(), name_).put(": the path names another session than the one it joined ('")
            .put(sess_->name()).put("')");
        return false;
    }

    *reason = CloseReason::SetupFailed;
    for (rt::u16 cid = 0; cid < con_num_; ++cid) {
        Connection* c = cons_[cid];
        int err = rtrs_env_post_recv(c->env(), nullptr, &c->recv_cqe,
                                     cid == 0 ? wire::kServiceConQueueDepth : queue_depth_);
        if (err) {
            Log(kErr).who(sess_name(), name_).put(": cannot post receives on connection ").dec(rt::u64{cid})
                .put(": ").dec(err);
            return false;
        }
    }
    if (!sess_->sysfs) {
        int err = rtrs_env_sysfs_sess_add(sess_->name(), &sess_->sysfs);
        if (err) {
            Log(kErr).put(sess_->name()).put(": cannot add the session to sysfs: ").dec(err);
            sess_->sysfs = nullptr;
            return false;
        }
    }
    int err = rtrs_env_sysfs_path_add(sess_->sysfs, name_, this, &sysfs_);
    if (err) {
        Log(kErr).put(sess_->name()).put(": cannot add path ").put(name_).put(" to sysfs: ").dec(err);
        sysfs_ = nullptr;
        if (sess_->visible == 0) {
            rtrs_env_sysfs_sess_del(sess_->sysfs);
            sess_->sysfs = nullptr;
        }
        return false;
    }
    // debugfs beside it, where there is one: nothing depends on it.
    if (sess_->visible == 0) sess_->debugfs = rtrs_env_debugfs_sess_add(sess_->name());
    debugfs_ = rtrs_env_debugfs_path_add(sess_->debugfs, name_, this);
    __atomic_add_fetch(&sess_->visible, 1, __ATOMIC_RELAXED);
    *why = nullptr;
    return true;
}

// Io lock and connection 0's held: what of the info response connection 0's send queue has
// room for (Handshake::post_locked()). Continues from on_info_wc() when it
// had to stop.
bool Path::post_info_locked() {
    const char* what = "post";
    int err = hs_.post_locked(*cons_[0], chunks_.registered(), &what);
    if (err) {
        Log(kErr).who(sess_name(), name_).put(": cannot ").put(what).put(": ").dec(err);
        return false;
    }
    return true;
}

void Path::on_info_wc(Connection& c, const rtrs_core_wc& wc) {
    if (!wc.ok) {
        if (!wc.flushed)
            Log(kErr, log_gate_).who(sess_name(), name_).put(": the info response failed: ").put(wc.status);
        request_close(CloseReason::Transport);
        return;
    }
    // Connection 0's lock, then the io lock (env.h's order).
    Guard cg(c.lock());
    c.signaled_done();
    Guard g(io_lock_);
    if (state_ != PathState::Up) return;
    if (!post_info_locked()) {
        close_locked(CloseReason::Transport);
        return;
    }
    g.unlock();
    run_pending(c);
}

// Process context: the info request checked, the path brought up. It
// stays Joining while the ULP is told, so that no I/O reaches the ULP
// before its CONNECTED returned (on_imm closes a path that sends I/O
// while Joining: a client sends none before our answer, sent after).
void Path::info_work() {
    Server& srv = server();
    const char* why = nullptr;
    CloseReason reason = CloseReason::Protocol;
    {
        Guard g(srv.lock());
        {
            Guard io(io_lock_);
            if (state_ != PathState::Connecting || !hs_.received_locked()) return;  // closing
            set_state_locked(PathState::Joining);
        }
        if (!join_locked(&why, &reason)) {
            g.unlock();
            request_close(reason);
            return;
        }
    }

    // The ULP hears of it before the client can use it.
    int err = sess_->link_up();
    if (err) {
        Log(kErr).who(sess_name(), name_).put(": the upper layer refused the session: ").dec(err);
        request_close(CloseReason::UlpRefused);
        return;
    }
    counted_up_ = true;  // from here on the teardown tells the ULP it is down
    if (!hs_.encode_response(dev_->env(), chunks_.registered())) {
        Log(kErr).who(sess_name(), name_).put(": cannot build the info response");
        request_close(CloseReason::SetupFailed);
        return;
    }
    // The connections may post I/O from now on (a teardown that stopped
    // one already keeps it stopped): before our answer, after which the
    // client sends I/O.
    for (Connection* c : cons_) c->start_io();
    {
        Guard c0(cons_[0]->lock());
        Guard io(io_lock_);
        if (state_ != PathState::Joining) return;  // closing: the teardown undoes it
        set_state_locked(PathState::Up);
        if (!post_info_locked()) {
            close_locked(CloseReason::Transport);
            return;
        }
        // The timer had the handshake's deadline: heartbeats from now on.
        clock_.heartbeats_locked();
    }
    Log(kInfo).put(sess_->name()).put(": path ").put(name_).put(" is up");
    rtrs_env_trace_path_up(sess_->name(), name_);
}

}  // namespace core
