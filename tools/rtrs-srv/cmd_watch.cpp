// SPDX-License-Identifier: GPL-2.0
// `watch`: sample every path's counters every interval and print the rates
// between successive samples, redrawing the screen on a terminal.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "commands.h"
#include "exit_codes.h"
#include "format.h"
#include "table.h"

namespace rtrs_srv::cmd {

namespace {

double real_now() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

void real_sleep(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

std::string interval_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", s);
    return buf;
}

}  // namespace

int watch(Context& ctx, const WatchOptions& opts) {
    auto now = ctx.now ? ctx.now : real_now;
    auto sleep = ctx.sleep ? ctx.sleep : real_sleep;

    Snapshot prev;
    if (int err = ctx.reader.read_all(prev)) return class_error(ctx, err);
    double t_prev = now();
    for (long shown = 0; !opts.count || shown < *opts.count; ++shown) {
        sleep(opts.interval);
        Snapshot cur;
        // The class folder vanishes when the module is unloaded: keep
        // watching, with no sessions, until it is back.
        ctx.reader.read_all(cur);
        double t = now();
        auto rates = compute_rates(prev, cur, t - t_prev);
        std::string table = format::watch_table(rates);
        if (ctx.tty) {
            // Home, clear screen, then the frame.
            ctx.out << "\033[H\033[2J"
                    << "Every " << interval_text(opts.interval) << "s: rtrs-srv watch ("
                    << printable(ctx.reader.root()) << ")\n\n"
                    << table;
        } else {
            if (shown > 0) ctx.out << '\n';
            ctx.out << table;
        }
        ctx.out.flush();
        prev = std::move(cur);
        t_prev = t;
    }
    return exit_ok;
}

}  // namespace rtrs_srv::cmd
