// SPDX-License-Identifier: GPL-2.0
// The core's view of the glue's locks: each core object that needs one owns
// an env lock (core/env.h says which kind, and the order they nest in);
// Guard holds one for a scope.
#pragma once

#include "core/env.h"

namespace core {

class Guard {
public:
    explicit Guard(rtrs_env_lock* lock) : lock_(lock) { rtrs_env_lock_acquire(lock_); }
    ~Guard() {
        if (lock_) rtrs_env_lock_release(lock_);
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

    // Lets go before the end of the scope (once).
    void unlock() {
        rtrs_env_lock_release(lock_);
        lock_ = nullptr;
    }

private:
    rtrs_env_lock* lock_;
};

}  // namespace core
