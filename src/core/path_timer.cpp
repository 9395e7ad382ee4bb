// SPDX-License-Identifier: GPL-2.0
// The path's timer: while connecting, the handshake's deadline (from the
// first connection); once up, heartbeats every 5 s.
#include "core/lock.h"
#include "core/log.h"
#include "core/path.h"
#include "core/session.h"

namespace core {

namespace {

enum class Hb { Send, Wait, Dead };

// One heartbeat period passed; missed counts periods without traffic from
// the client. A heartbeat goes out after a period that saw traffic; a
// silent period only counts; past kHbMissedMax the client is gone.
Hb hb_tick(rt::u32* missed) {
    if (*missed > wire::kHbMissedMax) return Hb::Dead;
    if ((*missed)++ != 0) return Hb::Wait;
    return Hb::Send;
}

}  // namespace

void Path::timer_work() {
    rt::u32 next = 0;
    {
        Guard g(io_lock_);
        switch (state_) {
        case PathState::Connecting: {
            // setup() set the start before it queued us: no wrap.
            const rt::u64 age = rtrs_env_now_ms() - first_conn_ms_;
            if (age >= kStallMs) {
                Log(kErr, log_gate_).who(sess_name(), name_).put(": the handshake did not finish within ")
                    .dec(age / 1000).put(" s of its first connection; closing the path");
                close_locked(CloseReason::StalledHandshake);
                return;
            }
            next = static_cast<rt::u32>(kStallMs - age);
            break;
        }
        case PathState::Joining:
            next = kStallMs;
            break;
        case PathState::Up: {
            // Periods gone by without a word from the client, this one included.
            const rt::u32 silent = hb_missed_;
            const Hb hb = hb_tick(&hb_missed_);
            if (hb != Hb::Send)
                rtrs_env_trace_hb_miss(sess_name(), name_, silent, wire::kHbMissedMax);
            switch (hb) {
            case Hb::Dead:
                Log(kErr).who(sess_name(), name_).put(": no heartbeat from the client; closing the path");
                close_locked(CloseReason::HeartbeatTimeout);
                return;
            case Hb::Send: {
                Connection& c0 = *cons_[0];
                if (!c0.room(1)) break;  // a full queue is traffic enough
                rtrs_env_wr wr{};
                wr.op = RTRS_ENV_WR_RDMA_WRITE_IMM;
                wr.imm = wire::imm_encode(wire::ImmType::HbMsg, 0);
                wr.signaled = 1;
                wr.cqe = &c0.send_cqe;
                if (c0.post(&wr, 1)) {
                    close_locked(CloseReason::Transport);
                    return;
                }
                break;
            }
            case Hb::Wait:
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
        rtrs_env_work_queue(timer_work_, next);
    }
}

}  // namespace core
