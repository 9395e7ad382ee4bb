// SPDX-License-Identifier: GPL-2.0
// A fixed-size array on the heap: n objects made at once (each
// default-constructed), freed with the Array. No array new: its hidden
// element count would make the pointer unfit for a plain free.
#pragma once

#include "rt/alloc.h"
#include "rt/errno.h"
#include "rt/result.h"
#include "rt/types.h"
#include "rt/utility.h"

namespace rt {

template <class T>
class Array {
public:
    Array() = default;
    Array(Array&& o) : p_(o.p_), n_(o.n_) {
        o.p_ = nullptr;
        o.n_ = 0;
    }
    Array& operator=(Array&& o) {
        if (this != &o) {
            reset();
            p_ = o.p_;
            n_ = o.n_;
            o.p_ = nullptr;
            o.n_ = 0;
        }
        return *this;
    }
    Array(const Array&) = delete;
    Array& operator=(const Array&) = delete;
    ~Array() { reset(); }

    // ENOMEM, or EINVAL when n objects would not fit in memory at all.
    static Result<Array> make(Gfp gfp, usize n) {
        // (T may be a pointer: clang-tidy's sizeof check takes that for a slip)
        if (n > ~usize{0} / sizeof(T)) return err(errc::inval);  // NOLINT(bugprone-sizeof-expression)
        Array a;
        if (n == 0) return a;
        void* mem = rtrs_env_alloc(n * sizeof(T), static_cast<unsigned>(gfp));  // NOLINT(bugprone-sizeof-expression)
        if (!mem) return err(errc::nomem);
        a.p_ = static_cast<T*>(mem);
        for (usize i = 0; i < n; ++i) new (in_place, a.p_ + i) T();
        a.n_ = n;
        return a;
    }

    void reset() {
        if (!p_) return;
        for (usize i = n_; i > 0; --i) p_[i - 1].~T();
        rtrs_env_free(p_);
        p_ = nullptr;
        n_ = 0;
    }

    usize size() const { return n_; }
    bool empty() const { return n_ == 0; }
    T* data() const { return p_; }
    // i < size(): the caller checks (chunk ids come checked from the wire).
    T& operator[](usize i) const { return p_[i]; }
    T* begin() const { return p_; }
    T* end() const { return p_ + n_; }

private:
    T* p_ = nullptr;
    usize n_ = 0;
};

}  // namespace rt
