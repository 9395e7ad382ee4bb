// SPDX-License-Identifier: GPL-2.0
// Host stand-in for the kernel services of src/rt/env.h, with the knobs the
// tests need: count live allocations, fail the Nth one, remember warnings.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace fake_env {

struct State {
    long live_allocations = 0;
    long total_allocations = 0;
    long fail_after = -1;  // fail every allocation once this many succeeded; -1: never
    std::vector<std::string> warnings;
    std::vector<std::pair<int, std::string>> logs;
    unsigned last_gfp = ~0u;
    // Asked before each allocation when set: false fails it.
    std::function<bool()> alloc_hook;
};

State& state();
void reset();

}  // namespace fake_env
