// SPDX-License-Identifier: GPL-2.0
// Every call to the kernel that can fail, failing in turn: one run of a
// whole session's life (connect, info exchange, I/O, close) per failure
// point, until a run passes them all. Whatever fails, the run must end
// with nothing left behind, no rule of the kernel broken, and no warning:
// a refusal, a closed path, or an error answer, never a leak or a crash.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "fake_env.h"
#include "harness.h"

using fake::k;

namespace {

// The failure points a whole life has (setup, life, close, exit): 132 with
// always_invalidate=Y and 99 with N when this was written (2026-12-07);
// the floors are nine tenths of that. A life that lost a path or an I/O
// has far fewer; a change to the core that really drops calls moves them.
constexpr long kMinPointsY = 118;
constexpr long kMinPointsN = 89;

// What a run of life() got done: each step that worked. A failure may take
// any of them away; the run with no failure must do them all, or the sweep
// would try only the failure points of a shorter life (a fake in which a
// path or an I/O stopped working passes through far fewer).
struct Steps {
    bool a_up = false, b_up = false;
    bool a_write = false, a_read = false, b_write = false;
    std::string missing() const {
        std::string m;
        if (!a_up) m += " path A up;";
        if (!b_up) m += " path B up;";
        if (!a_write) m += " A's write;";
        if (!a_read) m += " A's read;";
        if (!b_write) m += " B's write;";
        return m;
    }
};

// The life of a two-path session; each step may meet the failure and stop
// being possible, which is fine: the run goes on with what it can.
Steps life(h::Fixture& f) {
    Steps st;
    auto a = h::client(70, 2, 2);
    if (!f.up(a, "sweep")) return st;
    st.a_up = true;
    auto b = h::sibling(a, 71, 2);
    st.b_up = f.up(b, "sweep");
    std::vector<std::uint8_t> data(300, 5), usr(8, 6);
    if (rtrs_srv_op* op = f.write(a, 1, 1, data, usr)) {
        st.a_write = true;
        rtrs_core_answer(op, 0);
        k().complete_all_sends(a.con(1));
    }
    if (rtrs_srv_op* op = f.read(a, 0, 2, 2000, usr, true)) {
        st.a_read = true;
        rtrs_core_answer(op, 0);
        k().complete_all_sends(a.con(0));
    }
    k().advance(5000);  // a heartbeat
    if (a.con(0)) k().complete_all_sends(a.con(0));
    if (st.b_up) {
        if (rtrs_srv_op* op = f.write(b, 1, 3, data, usr)) {
            st.b_write = true;
            // Held by the ULP while the path closes.
            k().cm_event(b.con(0), RTRS_CORE_CM_DISCONNECTED);
            k().run();
            rtrs_core_answer(op, -5);
        }
    }
    if (a.con(1)) k().cm_event(a.con(1), RTRS_CORE_CM_DISCONNECTED);
    k().run();
    return st;
}

class Sweep : public ::testing::TestWithParam<bool> {};

}  // namespace

TEST_P(Sweep, EveryFailurePointInTurn) {
    long points = -1;
    for (long at = 0; at < 100000; ++at) {
        h::Opts o;
        o.always_invalidate = GetParam();
        o.queue_depth = 8;
        o.fail_at = at;  // counted from the very start: setup, life, close, exit
        bool hit;
        std::string why;
        Steps st;
        {
            h::Fixture f(o);
            if (!f.init_err) st = life(f);
            // finish() closes the server and shuts the core down: those
            // calls are failure points too, and must end clean as well.
            bool clean = f.finish();
            hit = k().failed;
            for (auto& l : k().logs) why = l;
            if (!clean) {
                std::string log;
                for (auto& l : fake_env::state().logs) log += "  " + l.second + "\n";
                ADD_FAILURE() << "failure point " << at << " (" << why
                              << ") left trouble behind; the core's log:\n" << log;
                break;
            }
        }
        if (!hit) {
            points = at;
            EXPECT_EQ(st.missing(), "") << "the run with no failure did not get through a whole life";
            break;
        }
    }
    // A run with no failure at all ended the sweep: every point was tried.
    EXPECT_GE(points, GetParam() ? kMinPointsY : kMinPointsN)
        << "fewer failure points than a session's life has";
    RecordProperty("failure_points", static_cast<int>(points));
    std::printf("every one of %ld failure points failed in turn, each run clean\n", points);
}

INSTANTIATE_TEST_SUITE_P(AlwaysInvalidate, Sweep, ::testing::Values(true, false),
                         [](const auto& i) { return i.param ? "Y" : "N"; });
