// SPDX-License-Identifier: GPL-2.0
// The path's clock: its timer work, the handshake's deadline, the heartbeat
// periods missed (what the path does about them: path_timer.cpp).
#include "core/path_clock.h"

#include "core/wire.h"

namespace core {

bool PathClock::make_work(void* owner, unsigned int kind) {
    work_ = rtrs_env_work_new(owner, kind);
    return work_ != nullptr;
}

void PathClock::free_work() {
    if (work_) rtrs_env_work_free(work_);
}

void PathClock::start(rt::u64 now_ms) {
    first_conn_ms_ = now_ms;
    rtrs_env_work_queue(work_, kStallMs);
}

bool PathClock::handshake_due(rt::u64 now_ms, rt::u64* age, rt::u32* left_ms) const {
    // start() set the first connection's time before it queued us: no wrap.
    *age = now_ms - first_conn_ms_;
    if (*age >= kStallMs) return true;
    *left_ms = static_cast<rt::u32>(kStallMs - *age);
    return false;
}

PathClock::Hb PathClock::hb_tick_locked(rt::u32* silent) {
    *silent = hb_missed_;
    if (hb_missed_ > wire::kHbMissedMax) return Hb::Dead;
    if (hb_missed_++ != 0) return Hb::Wait;
    return Hb::Send;
}

void PathClock::rearm_locked(rt::u32 delay_ms) { rtrs_env_work_queue(work_, delay_ms); }

void PathClock::heartbeats_locked() { rtrs_env_work_requeue(work_, wire::kHbIntervalMs); }

void PathClock::cancel_sync() {
    if (work_) rtrs_env_work_cancel_sync(work_);
}

}  // namespace core
