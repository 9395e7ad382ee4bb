// SPDX-License-Identifier: GPL-2.0
// The path's timer: while connecting, the handshake's deadline (from the
// first connection); once up, heartbeats every 5 s. What the timer keeps and
// decides by is the path's clock (core/path_clock.h); what follows is here.
#include "core/lock.h"
#include "core/log.h"
#include "core/path.h"
#include "core/session.h"

namespace core {

void Path::timer_work() {
    rt::u32 next = 0;
    bool beat = false;
    // Traffic since the last run: each connection's own flag (set by its
    // completions, not under this lock).
    bool heard = false;
    for (Connection* c : cons_)
        if (c && c->take_heard()) heard = true;
    {
        Guard g(io_lock_);
        switch (state_) {
        case PathState::Connecting: {
            rt::u64 age = 0;
            if (clock_.handshake_due(rtrs_env_now_ms(), &age, &next)) {
                Log(kErr, log_gate_).who(sess_name(), name_).put(": the handshake did not finish within ")
                    .dec(age / 1000).put(" s of its first connection; closing the path");
                close_locked(CloseReason::StalledHandshake);
                return;
            }
            break;
        }
        case PathState::Joining:
            next = kStallMs;
            break;
        case PathState::Up: {
            // Periods gone by without a word from the client, this one included.
            if (heard) clock_.heard_locked();
            rt::u32 silent = 0;
            const PathClock::Hb hb = clock_.hb_tick_locked(&silent);
            if (hb != PathClock::Hb::Send)
                rtrs_env_trace_hb_miss(sess_name(), name_, silent, wire::kHbMissedMax);
            switch (hb) {
            case PathClock::Hb::Dead:
                Log(kErr).who(sess_name(), name_).put(": no heartbeat from the client; closing the path");
                close_locked(CloseReason::HeartbeatTimeout);
                return;
            case PathClock::Hb::Send:
                beat = true;  // posted below, under connection 0's lock
                break;
            case PathClock::Hb::Wait:
                break;
            }
            next = wire::kHbIntervalMs;
            break;
        }
        default:
            return;  // closing: the timer ends here
        }
        // Under the lock, as every work of a path is queued: the teardown
        // sets the state under it, then cancels.
        clock_.rearm_locked(next);
    }
    if (beat) {
        // The teardown stops the connection (io) before it cancels us.
        Connection& c0 = *cons_[0];
        Guard g(c0.lock());
        if (c0.io() != ConIo::Up || !c0.room(1)) return;  // a full queue is traffic enough
        rtrs_env_wr wr{};
        wr.op = RTRS_ENV_WR_RDMA_WRITE_IMM;
        wr.imm = wire::imm_encode(wire::ImmType::HbMsg, 0);
        wr.signaled = 1;
        wr.cqe = &c0.send_cqe;
        if (c0.post(&wr, 1)) {
            g.unlock();
            request_close(CloseReason::Transport);
        }
    }
}

}  // namespace core
