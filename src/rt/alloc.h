// SPDX-License-Identifier: GPL-2.0
// Allocation in the subset: always with explicit flags, never throwing, and
// always checked. The throwing `operator new(size_t)` is left undeclared and
// undefined on purpose: any use is a compile error here and a modpost error
// in the module.
#pragma once

#include "rt/env.h"
#include "rt/errno.h"
#include "rt/result.h"
#include "rt/utility.h"

namespace rt {

enum class Gfp : unsigned {
    kernel = RTRS_ENV_GFP_KERNEL,  // may sleep
    atomic = RTRS_ENV_GFP_ATOMIC,  // from softirq or under a spinlock
};

}  // namespace rt

// Returns nullptr on failure; a new-expression then yields nullptr without
// running the constructor.
inline void* operator new(__SIZE_TYPE__ size, rt::Gfp gfp) noexcept {
    return rtrs_env_alloc(size, static_cast<unsigned>(gfp));
}
inline void operator delete(void* p, rt::Gfp) noexcept { rtrs_env_free(p); }

namespace rt {

// Destroys an object made by make_own()/`new (Gfp)` and frees its memory.
template <class T>
void destroy(T* p) {
    if (!p) return;
    p->~T();
    rtrs_env_free(const_cast<void*>(static_cast<const void*>(p)));
}

// Sole owner of a heap object.
template <class T>
class Own {
public:
    Own() = default;
    explicit Own(T* p) : p_(p) {}
    Own(Own&& o) : p_(o.p_) { o.p_ = nullptr; }
    Own& operator=(Own&& o) {
        if (this != &o) {
            reset();
            p_ = o.p_;
            o.p_ = nullptr;
        }
        return *this;
    }
    Own(const Own&) = delete;
    Own& operator=(const Own&) = delete;
    ~Own() { reset(); }

    T* get() const { return p_; }
    T* operator->() const { return p_; }
    T& operator*() const { return *p_; }
    explicit operator bool() const { return p_ != nullptr; }

    // Gives up ownership without destroying.
    [[nodiscard]] T* release() {
        T* p = p_;
        p_ = nullptr;
        return p;
    }
    void reset() {
        // clang 14's analyzer has ~Result<Own<T>> destroy the Own of a
        // Result that holds an error (its union member, which ~Result
        // leaves alone unless ok_): a false "uninitialized argument" here.
        destroy(p_);  // NOLINT(clang-analyzer-core.CallAndMessage)
        p_ = nullptr;
    }

private:
    T* p_ = nullptr;
};

template <class T, class... Args>
Result<Own<T>> make_own(Gfp gfp, Args&&... args) {
    T* p = new (gfp) T(forward<Args>(args)...);
    if (!p) return err(errc::nomem);
    return Own<T>(p);
}

}  // namespace rt
