// SPDX-License-Identifier: GPL-2.0
// Sessions: their chunks (charged to the module's memory budget) and the
// link events the upper layer gets for them.
#include "core/session.h"

#include "core/lock.h"
#include "core/log.h"
#include "core/module.h"
#include "core/server.h"
#include "rt/errno.h"

namespace core {

rt::u64 g_sessions_held = 0;
rt::u64 g_paths_held = 0;

Session::Session(Server& srv, const wire::Uuid& paths_uuid)
    : srv_(&srv), paths_uuid_(paths_uuid) {
    __atomic_add_fetch(&g_sessions_held, 1, __ATOMIC_RELAXED);
}

rt::Result<rt::Own<Session>> Session::create(Server& srv, const wire::Uuid& paths_uuid,
                                             const char** why) {
    Module& m = *module();
    const Config& cfg = m.cfg();
    *why = "no memory for a new session";
    auto s = RT_TRY(rt::make_own<Session>(rt::Gfp::kernel, srv, paths_uuid));
    s->queue_depth_ = cfg.queue_depth;
    s->chunk_size_ = cfg.chunk_size;
    s->ev_lock_.init(RTRS_ENV_LOCK_SESSION_EV);
    if (!s->ev_lock_) return rt::err(rt::errc::nomem);

    const rt::u64 bytes = cfg.session_bytes();
    if (!m.reserve_chunk_mem(bytes).ok()) {
        Log(kErr, true).put("a new session needs ").dec(bytes >> 20).put(" MiB of chunks; ")
            .dec(m.chunk_mem_used() >> 20).put(" of the ").dec(cfg.chunk_mem_limit >> 20)
            .put(" MiB the sessions may hold (max_chunk_mem_mb) are taken");
        *why = "the chunk memory budget is spent";
        return rt::err(rt::errc::nomem);
    }
    s->charged_ = bytes;
    const rt::u64 avail = rtrs_env_available_ram();
    const rt::u64 keep = chunk_mem_headroom(rtrs_env_total_ram());
    if (avail < bytes + keep) {
        Log(kErr, true).put("a new session needs ").dec(bytes >> 20).put(" MiB of chunks; the machine has ")
            .dec(avail >> 20).put(" MiB available and keeps ").dec(keep >> 20)
            .put(" MiB (an eighth of its memory) free of chunks");
        *why = "too little memory available for the session's chunks";
        return rt::err(rt::errc::nomem);
    }
    s->chunks_ = RT_TRY(rt::Array<void*>::make(rt::Gfp::kernel, s->queue_depth_));
    for (rt::u32 i = 0; i < s->queue_depth_; ++i) {
        s->chunks_[i] = rtrs_env_chunk_alloc(s->chunk_size_);
        if (!s->chunks_[i]) {
            Log(kErr, true).put("a new session needs ").dec(bytes >> 20)
                .put(" MiB of chunks; the machine has too little free memory");
            *why = "no memory for the session's chunks";
            return rt::err(rt::errc::nomem);
        }
    }
    return s;
}

Session::~Session() {
    __atomic_sub_fetch(&g_sessions_held, 1, __ATOMIC_RELAXED);
    if (!paths.empty()) rtrs_env_warn("rtrs core: session freed with paths");
    for (void* c : chunks_)
        if (c) rtrs_env_chunk_free(c, chunk_size_);
    if (charged_) module()->release_chunk_mem(charged_);
    if (named()) module()->release_name(*this);
    if (sysfs) rtrs_env_warn("rtrs core: session freed while in sysfs");
    if (ev_lock_) rtrs_env_lock_free(ev_lock_.raw());
}

bool Session::has_name(rt::Bytes name) const {
    rt::usize i = 0;
    while (i < name.size() && name_[i] == static_cast<char>(name.data()[i])) ++i;
    return i == name.size() && name_[i] == '\0';
}

void Session::set_name_locked(rt::Bytes name) {
    rt::usize n = name.size() < wire::kNameMax ? name.size() : wire::kNameMax;
    for (rt::usize i = 0; i < n; ++i) name_[i] = static_cast<char>(name.data()[i]);
    name_[n] = '\0';
}

int Session::link_up() {
    Guard g(ev_lock_);
    if (paths_up_ == 0) {
        int err = rtrs_env_ulp_link_ev(srv_->ulp(), this, RTRS_CORE_LINK_CONNECTED, nullptr);
        if (err) return err;
        rtrs_env_trace_sess_up(name_);
    }
    ++paths_up_;
    return 0;
}

void Session::link_down(int reason, const char* why) {
    Guard g(ev_lock_);
    if (paths_up_ == 0) {
        rtrs_env_warn("rtrs core: link down without a link up");
        return;
    }
    if (--paths_up_ == 0) {
        rtrs_env_trace_sess_down(name_, reason, why);
        rtrs_env_ulp_link_ev(srv_->ulp(), this, RTRS_CORE_LINK_DISCONNECTED, priv());
    }
}

}  // namespace core
