// SPDX-License-Identifier: GPL-2.0
// A check in a fuzz target: a failed one prints what and where, and aborts,
// which libFuzzer reports as a crash (and keeps the input).
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                               \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            std::fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #cond, __FILE__,   \
                         __LINE__);                                                    \
            std::abort();                                                              \
        }                                                                              \
    } while (0)
