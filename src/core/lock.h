// SPDX-License-Identifier: GPL-2.0
// The core's view of the glue's locks: each core object that needs one owns
// a Lock over an env lock (core/env.h says which kind, and the order they
// nest in); Guard holds one for a scope. Both are annotated for Clang's
// thread safety analysis (rt/thread_safety.h): members say which lock
// guards them (GUARDED_BY), functions which lock they need (REQUIRES).
#pragma once

#include "core/env.h"
#include "rt/thread_safety.h"

namespace core {

class CAPABILITY("mutex") Lock {
public:
    Lock() = default;
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;

    // Makes the env lock of this kind (false without memory); once.
    bool init(rtrs_env_lock_kind kind) {
        raw_ = rtrs_env_lock_new(kind);
        return raw_ != nullptr;
    }
    explicit operator bool() const { return raw_ != nullptr; }
    // For the env calls that take the lock itself (rtrs_env_lock_free(),
    // rtrs_env_con_create()'s io_lock).
    rtrs_env_lock* raw() const { return raw_; }

    void lock() ACQUIRE() { rtrs_env_lock_acquire(raw_); }
    void unlock() RELEASE() { rtrs_env_lock_release(raw_); }

private:
    rtrs_env_lock* raw_ = nullptr;
};

class SCOPED_CAPABILITY Guard {
public:
    explicit Guard(Lock& lock) ACQUIRE(lock) : lock_(&lock) { lock_->lock(); }
    ~Guard() RELEASE() {
        if (lock_) lock_->unlock();
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

    // Lets go before the end of the scope (once).
    void unlock() RELEASE() {
        lock_->unlock();
        lock_ = nullptr;
    }

private:
    Lock* lock_;
};

// A connection's completion context: the glue calls a connection's
// completion events (rtrs_core_on_imm(), _on_send_done(), _on_wc()) from
// its CQ's poll context only, which runs one completion at a time (one
// CQ a connection, IB_POLL_WORKQUEUE). Holding this capability is being
// in it: the entry points take it (CqScope) for the connection they were
// called for, and what only that context writes is GUARDED_BY it
// (Connection's stats). Nothing is taken at run time.
class CAPABILITY("completion context") CqContext {
public:
    void enter() ACQUIRE() {}
    void leave() RELEASE() {}
};

class SCOPED_CAPABILITY CqScope {
public:
    explicit CqScope(CqContext& cq) ACQUIRE(cq) : cq_(&cq) { cq_->enter(); }
    ~CqScope() RELEASE() { cq_->leave(); }
    CqScope(const CqScope&) = delete;
    CqScope& operator=(const CqScope&) = delete;

private:
    CqContext* cq_;
};

// A path's io lock (a spinlock taken with interrupts saved: the path's
// state and what changes rarely: the handshake, the clock, the teardown's
// steps; not the I/O path, whose requests each take their connection's
// lock: Connection), the first base of Path's own: declared before Path, so that the
// classes a path is made of (Handshake) can name it in their annotations,
// GUARDED_BY(path_->io_lock()), as Connection and Request do.
class PathIoLock {
public:
    Lock& io_lock() RETURN_CAPABILITY(io_lock_) { return io_lock_; }

protected:
    Lock io_lock_;  // PATH_IO
};

}  // namespace core
