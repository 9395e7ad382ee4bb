// SPDX-License-Identifier: GPL-2.0
// Log lines and their gates (log.h).
#include "core/log.h"

namespace core {

bool LogGate::admit(rt::u32* suppressed) {
    const rt::u64 now = rtrs_env_now_ms();
    rt::u64 start = __atomic_load_n(&window_ms_, __ATOMIC_RELAXED);
    if (now - start >= kWindowMs &&
        __atomic_compare_exchange_n(&window_ms_, &start, now, false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
        __atomic_store_n(&count_, 0, __ATOMIC_RELAXED);
    if (__atomic_add_fetch(&count_, 1, __ATOMIC_RELAXED) > kBurst) {
        __atomic_add_fetch(&suppressed_, 1, __ATOMIC_RELAXED);
        return false;
    }
    *suppressed = __atomic_exchange_n(&suppressed_, 0, __ATOMIC_RELAXED);
    return true;
}

Log::Log(int level, LogGate& gate) : level_(level), sb_(buf_, sizeof(buf_)) {
    muted_ = !gate.admit(&suppressed_);
}

Log::~Log() {
    if (muted_) return;
    if (suppressed_)
        sb_.put(" (and ").dec(rt::u64{suppressed_})
            .put(" lines before it from the same source were not logged: more than 10 in 5 s)");
    if (ratelimited_)
        rtrs_env_log_ratelimited(level_, sb_.c_str());
    else
        rtrs_env_log(level_, sb_.c_str());
}

}  // namespace core
