// SPDX-License-Identifier: GPL-2.0
// The C face of core/addr.h for the KUnit cases (core_shim.h).

#include "core_shim.h"

#include "core/addr.h"

extern "C" __SIZE_TYPE__ rtrs_kunit_format_addr(const rtrs_core_addr* a, char* buf,
                                                __SIZE_TYPE__ cap) {
    return core::format_addr(*a, buf, cap);
}

extern "C" int rtrs_kunit_same_addr(const rtrs_core_addr* a, const rtrs_core_addr* b) {
    return core::same_addr(*a, *b) ? 1 : 0;
}
