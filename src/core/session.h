// SPDX-License-Identifier: GPL-2.0
// A client session: the paths that share a paths uuid, the chunks they all
// read requests from, the name the client gave it and, while at least one
// of its paths is up, its folder in /sys/class/rtrs-server. The upper
// layer knows it as its struct rtrs_srv_sess.
#pragma once

#include "core/env.h"
#include "core/lock.h"
#include "core/server.h"
#include "core/wire.h"
#include "rt/alloc.h"
#include "rt/array.h"
#include "rt/list.h"
#include "rt/result.h"
#include "rt/types.h"

namespace core {

class Path;
struct SessionPathsTag;
struct NamedTag;

// How many Session and Path objects exist (rtrs_core_held()): atomics,
// changed by their constructors and destructors.
extern rt::u64 g_sessions_held;
extern rt::u64 g_paths_held;

class Session : public rt::ListLink<>, public rt::ListLink<NamedTag> {
public:
    // A session with its chunks, charged to the memory budget. ENOMEM with
    // the reason in why when the budget or the machine's memory is short.
    static rt::Result<rt::Own<Session>> create(Server& srv, const wire::Uuid& paths_uuid,
                                               const char** why);
    ~Session();
    Session(Server& srv, const wire::Uuid& paths_uuid);

    Server& server() const { return *srv_; }
    const wire::Uuid& paths_uuid() const { return paths_uuid_; }
    rt::u32 queue_depth() const { return queue_depth_; }
    rt::u32 chunk_size() const { return chunk_size_; }
    void* chunk(rt::u32 id) const { return chunks_[id]; }

    // The name the first info request gave (Module::claim_name); empty
    // before. It does not change after.
    const char* name() const { return name_; }
    bool named() const { return name_[0] != '\0'; }
    bool has_name(rt::Bytes name) const;
    // Under the server lock and the module lock (Module::claim_name).
    void set_name_locked(rt::Bytes name) REQUIRES(server().lock());

    // Any context: how many of its paths are in sysfs (joined, and not yet
    // leaving): a path counts from before the ULP hears CONNECTED.
    rt::u32 paths_visible() const { return __atomic_load_n(&visible, __ATOMIC_RELAXED); }

    // The ULP's.
    void* priv() const { return __atomic_load_n(&priv_, __ATOMIC_ACQUIRE); }
    void set_priv(void* p) { __atomic_store_n(&priv_, p, __ATOMIC_RELEASE); }

    // Link events to the ULP: the first path up says CONNECTED, the last
    // one down DISCONNECTED. 0, or the ULP's refusal.
    int link_up() EXCLUDES(ev_lock_);
    // why: the closing path's reason (CloseReason) for the trace event.
    void link_down(int reason, const char* why) EXCLUDES(ev_lock_);

    // Under the server lock:
    rt::List<Path, SessionPathsTag> paths GUARDED_BY(server().lock());
    rt::u32 paths_num GUARDED_BY(server().lock()) = 0;
    rtrs_env_sysfs_sess* sysfs GUARDED_BY(server().lock()) = nullptr;
    // Paths with files in sysfs: changed under the server lock, read in any
    // context (paths_visible()), so atomic and not annotated.
    rt::u32 visible = 0;
    rtrs_env_debugfs_sess* debugfs GUARDED_BY(server().lock()) = nullptr;  // while visible (nullptr without debugfs)

private:
    Server* srv_;
    wire::Uuid paths_uuid_;
    rt::u32 queue_depth_ = 0;
    rt::u32 chunk_size_ = 0;
    rt::Array<void*> chunks_;
    rt::u64 charged_ = 0;
    char name_[wire::kNameMax + 1] = {};
    void* priv_ = nullptr;
    Lock ev_lock_;  // SESSION_EV: paths_up_
    rt::u32 paths_up_ GUARDED_BY(ev_lock_) = 0;
};

}  // namespace core
