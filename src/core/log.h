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

// Bounds the lines one source (a path, a server's refusals) logs of what a
// peer can make happen at will: kBurst lines every kWindowMs; the rest are
// counted, and the first line of a later window says how many went
// unlogged. Unlike the kernel's printk ratelimit, shared by everything, a
// flood from one path does not hide another path's lines. Any context;
// lock-free, so a few lines more than kBurst may pass in a race.
class LogGate {
public:
    static constexpr rt::u32 kBurst = 10;
    static constexpr rt::u64 kWindowMs = 5000;

    // True when a line may go; *suppressed: lines not logged since the
    // last one that went (0 mostly).
    bool admit(rt::u32* suppressed);
    // The lines not logged since the last one that went, now counted as
    // told (for a gate given up with lines unlogged).
    rt::u32 take_suppressed() { return __atomic_exchange_n(&suppressed_, 0, __ATOMIC_RELAXED); }

private:
    rt::u64 window_ms_ = 0;
    rt::u32 count_ = 0;
    rt::u32 suppressed_ = 0;
};

class Log {
public:
    // ratelimited: for what a peer can make happen at will (the kernel's
    // printk ratelimit; prefer a LogGate where the source is known).
    explicit Log(int level, bool ratelimited = false)
        : level_(level), ratelimited_(ratelimited), sb_(buf_, sizeof(buf_)) {}
    // Through gate: logged if it admits the line.
    Log(int level, LogGate& gate);
    // Out of line (log.cpp): an inline one, folded from several objects,
    // leaves objtool's return sites pointing into a discarded section.
    ~Log();
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
    char buf_[320];
    int level_;
    bool ratelimited_ = false;
    bool muted_ = false;
    rt::u32 suppressed_ = 0;
    rt::StrBuf sb_;
};

}  // namespace core
