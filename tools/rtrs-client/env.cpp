// SPDX-License-Identifier: GPL-2.0
// The runtime hooks rtrs_core needs (src/rt/env.h), for a hosted program.
#include <cstdio>
#include <cstdlib>

#include "rt/env.h"

extern "C" void* rtrs_env_alloc(size_t size, unsigned int) {
    return std::calloc(1, size ? size : 1);
}

extern "C" void rtrs_env_free(void* ptr) { std::free(ptr); }

extern "C" void rtrs_env_log(int level, const char* msg) {
    std::fprintf(stderr, "rtrs_core <%d>: %s\n", level, msg);
}

extern "C" void rtrs_env_warn(const char* what) {
    std::fprintf(stderr, "rtrs_core warning: %s\n", what);
}
