// SPDX-License-Identifier: GPL-2.0
// Kernel log lines from the core: a line is built into a buffer of its own
// and handed to the glue when the statement ends:
//   core::Log(core::kErr).put(path.name()).put(": no heartbeat");
#pragma once

#include "core/env.h"
#include "rt/env.h"
#include "rt/strbuf.h"

namespace core {

inline constexpr int kErr = RTRS_ENV_LOG_ERR;
inline constexpr int kWarn = RTRS_ENV_LOG_WARN;
inline constexpr int kInfo = RTRS_ENV_LOG_INFO;

class Log {
public:
    // ratelimited: for what a peer can make happen at will.
    explicit Log(int level, bool ratelimited = false)
        : level_(level), ratelimited_(ratelimited), sb_(buf_, sizeof(buf_)) {}
    ~Log() {
        if (ratelimited_)
            rtrs_env_log_ratelimited(level_, sb_.c_str());
        else
            rtrs_env_log(level_, sb_.c_str());
    }
    Log(const Log&) = delete;
    Log& operator=(const Log&) = delete;

    template <class T>
    Log& put(const T& v) {
        sb_.put(v);
        return *this;
    }
    template <class T>
    Log& dec(T v) {
        sb_.dec(v);
        return *this;
    }
    // "<session>: <path>", how a path's lines begin ("(unnamed)" for a
    // session that has no name yet).
    Log& who(const char* sess, const char* path) {
        sb_.put(sess[0] ? sess : "(unnamed)").put(": ").put(path);
        return *this;
    }
    Log& hex(rt::u64 v) {
        sb_.hex(v);
        return *this;
    }

private:
    char buf_[256];
    int level_;
    bool ratelimited_;
    rt::StrBuf sb_;
};

}  // namespace core
