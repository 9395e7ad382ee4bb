// SPDX-License-Identifier: GPL-2.0
// Result<T>: a value or a positive errno, and nothing that can be ignored.
#pragma once

#include "rt/env.h"
#include "rt/utility.h"

namespace rt {

// A positive Linux errno value.
struct Error {
    int code;
};

// What an error built from a non-positive "errno" becomes: EINVAL.
inline constexpr int kBadErrno = 22;

constexpr Error err(int code) { return Error{code}; }

template <class T>
class [[nodiscard]] Result {
public:
    Result(T&& value) : ok_(true) { new (in_place, &value_) T(move(value)); }
    Result(const T& value) : ok_(true) { new (in_place, &value_) T(value); }
    Result(Error e) : ok_(false), code_(e.code) {
        if (code_ <= 0) {
            rtrs_env_warn("rt::Result built from a non-positive errno");
            code_ = kBadErrno;
        }
        // value() on an error yields this: an all-zero T, which for every
        // type the core keeps in a Result is its empty state (null, 0).
        // (T may be a pointer: clang-tidy's sizeof check takes that for a slip)
        __builtin_memset(static_cast<void*>(&value_), 0, sizeof(T));  // NOLINT(bugprone-sizeof-expression)
    }
    Result(Result&& other) : ok_(other.ok_), code_(other.code_) {
        if (ok_) new (in_place, &value_) T(move(other.value_));
    }
    Result(const Result&) = delete;
    Result& operator=(const Result&) = delete;
    Result& operator=(Result&&) = delete;
    ~Result() {
        if (ok_) value_.~T();
    }

    bool ok() const { return ok_; }
    // The errno, or 0 when this holds a value.
    int error() const { return ok_ ? 0 : code_; }

    T& value() & {
        check();
        return value_;
    }
    const T& value() const& {
        check();
        return value_;
    }
    T&& value() && {
        check();
        return move(value_);
    }

private:
    // value() on an error is a bug: reported, and the zeroed storage is
    // what the caller gets.
    void check() const {
        if (!ok_) rtrs_env_warn("rt::Result: value() on an error");
    }

    bool ok_;
    int code_ = 0;
    union {
        T value_;
    };
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error e) : code_(e.code) {
        if (code_ <= 0) {
            rtrs_env_warn("rt::Result built from a non-positive errno");
            code_ = kBadErrno;
        }
    }
    bool ok() const { return code_ == 0; }
    int error() const { return code_; }
    void value() const {
        if (code_ != 0) rtrs_env_warn("rt::Result: value() on an error");
    }

private:
    int code_ = 0;
};

// Negative-errno convention of the kernel, for handing results to C.
template <class T>
int to_neg_errno(const Result<T>& r) {
    return -r.error();
}

}  // namespace rt

// Evaluates a Result; on error returns the error from the enclosing function,
// otherwise yields the value (GNU statement expression).
#define RT_TRY(expr)                                           \
    ({                                                         \
        auto&& rt_try_result_ = (expr);                        \
        if (!rt_try_result_.ok())                              \
            return ::rt::Error{rt_try_result_.error()};        \
        ::rt::move(rt_try_result_).value();                    \
    })
