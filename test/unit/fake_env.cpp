// SPDX-License-Identifier: GPL-2.0
#include "fake_env.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "rt/env.h"

namespace fake_env {

State& state() {
    static State s;
    return s;
}

void reset() { state() = State{}; }

}  // namespace fake_env

extern "C" void* rtrs_env_alloc(size_t size, unsigned int gfp) {
    auto& s = fake_env::state();
    s.last_gfp = gfp;
    if (s.fail_after >= 0 && s.total_allocations >= s.fail_after) return nullptr;
    if (s.alloc_hook && !s.alloc_hook()) return nullptr;
    void* p = std::calloc(1, size ? size : 1);
    if (p) {
        ++s.live_allocations;
        ++s.total_allocations;
    }
    return p;
}

extern "C" void rtrs_env_free(void* ptr) {
    if (!ptr) return;
    --fake_env::state().live_allocations;
    std::free(ptr);
}

extern "C" void rtrs_env_log(int level, const char* msg) {
    fake_env::state().logs.emplace_back(level, msg);
}

extern "C" void rtrs_env_warn(const char* what) { fake_env::state().warnings.emplace_back(what); }

