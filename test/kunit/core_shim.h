/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C entry points into parts of the C++ core that have none of their own
 * (core/addr.h is C++), for the KUnit cases in core_kunit.c. Built from
 * core_shim.cpp with the module's C++ rule.
 */
#ifndef RTRS_KUNIT_CORE_SHIM_H
#define RTRS_KUNIT_CORE_SHIM_H

#include "core/rtrs_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* core::format_addr(): the address's text in buf (cut to cap); its length. */
__SIZE_TYPE__ rtrs_kunit_format_addr(const struct rtrs_core_addr *a, char *buf,
				     __SIZE_TYPE__ cap);
/* core::same_addr(). */
int rtrs_kunit_same_addr(const struct rtrs_core_addr *a, const struct rtrs_core_addr *b);

#ifdef __cplusplus
}
#endif

#endif /* RTRS_KUNIT_CORE_SHIM_H */
