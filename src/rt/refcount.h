// SPDX-License-Identifier: GPL-2.0
// Reference counts with the kernel's refcount_t rules: taking a reference on
// a dead object, overflowing, or dropping below zero is reported once and the
// count is pinned ("saturated") so the object leaks instead of being freed
// twice.
#pragma once

#include "rt/env.h"
#include "rt/types.h"

namespace rt {

class RefCount {
public:
    static constexpr u32 kSaturated = 0xC0000000u;

    explicit constexpr RefCount(u32 initial = 1) : v_(initial) {}
    RefCount(const RefCount&) = delete;
    RefCount& operator=(const RefCount&) = delete;

    // Takes a reference; the caller must already hold one.
    void get() {
        u32 old = __atomic_fetch_add(&v_, 1u, __ATOMIC_RELAXED);
        if (old == 0 || old >= kSaturated - 1) saturate("rt::RefCount: get on a zero or saturated count");
    }

    // Takes a reference unless the count already reached zero.
    [[nodiscard]] bool get_unless_zero() {
        u32 old = __atomic_load_n(&v_, __ATOMIC_RELAXED);
        do {
            if (old == 0) return false;
            if (old >= kSaturated - 1) {
                saturate("rt::RefCount: get on a saturated count");
                return true;
            }
        } while (!__atomic_compare_exchange_n(&v_, &old, old + 1, true, __ATOMIC_ACQUIRE,
                                              __ATOMIC_RELAXED));
        return true;
    }

    // Drops a reference; true when it was the last one and the caller must
    // now release the object.
    [[nodiscard]] bool put() {
        u32 old = __atomic_fetch_sub(&v_, 1u, __ATOMIC_RELEASE);
        if (old == 1) {
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            return true;
        }
        if (old == 0 || old >= kSaturated) saturate("rt::RefCount: put on a zero or saturated count");
        return false;
    }

    u32 read() const { return __atomic_load_n(&v_, __ATOMIC_RELAXED); }

private:
    void saturate(const char* what) {
        __atomic_store_n(&v_, kSaturated, __ATOMIC_RELAXED);
        rtrs_env_warn(what);
    }

    u32 v_;
};

// A counted reference to T, where T has `void add_ref()` and
// `void release_ref()` (the latter frees T when its count drops to zero).
template <class T>
class RefPtr {
public:
    RefPtr() = default;
    // Adopts a reference the caller already holds.
    static RefPtr adopt(T* p) { return RefPtr(p); }
    RefPtr(const RefPtr& o) : p_(o.p_) {
        if (p_) p_->add_ref();
    }
    RefPtr(RefPtr&& o) : p_(o.p_) { o.p_ = nullptr; }
    RefPtr& operator=(RefPtr o) {
        T* tmp = p_;
        p_ = o.p_;
        o.p_ = tmp;
        return *this;
    }
    ~RefPtr() { reset(); }

    void reset() {
        if (p_) p_->release_ref();
        p_ = nullptr;
    }
    T* get() const { return p_; }
    T* operator->() const { return p_; }
    T& operator*() const { return *p_; }
    explicit operator bool() const { return p_ != nullptr; }

private:
    explicit RefPtr(T* p) : p_(p) {}
    T* p_ = nullptr;
};

}  // namespace rt
