// SPDX-License-Identifier: GPL-2.0
// The runtime's environment (src/rt/env.h) for the codec targets: a broken
// invariant the runtime reports (rtrs_env_warn) is a crash here.
#include <cstdio>
#include <cstdlib>

#include "rt/env.h"

extern "C" void* rtrs_env_alloc(size_t size, unsigned int) { return std::calloc(1, size ? size : 1); }
extern "C" void rtrs_env_free(void* ptr) { std::free(ptr); }
extern "C" void rtrs_env_log(int, const char*) {}
extern "C" void rtrs_env_warn(const char* what) {
    std::fprintf(stderr, "rtrs_env_warn: %s\n", what);
    std::abort();
}
