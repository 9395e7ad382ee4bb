/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the C++ runtime needs from the world around it. In the module the C
 * glue (src/kernel/rt_env.c) provides these on top of the kernel; on the host
 * the unit tests provide fakes. This header is C and C++ alike.
 */
#ifndef RTRS_RT_ENV_H
#define RTRS_RT_ENV_H

#ifdef __cplusplus
extern "C" {
#endif

/* Allocation contexts; the glue maps them to GFP_KERNEL and GFP_ATOMIC. */
#define RTRS_ENV_GFP_KERNEL 0u
#define RTRS_ENV_GFP_ATOMIC 1u

/* Returns NULL on failure; the memory is zeroed. */
void *rtrs_env_alloc(__SIZE_TYPE__ size, unsigned int gfp);
void rtrs_env_free(void *ptr);

/* Log levels, as the kernel's printk numbers them. */
#define RTRS_ENV_LOG_ERR 3
#define RTRS_ENV_LOG_WARN 4
#define RTRS_ENV_LOG_INFO 6
#define RTRS_ENV_LOG_DEBUG 7
void rtrs_env_log(int level, const char *msg);

/*
 * A broken invariant (a refcount gone wrong, an element linked twice, a
 * Result read without a value): the kernel glue turns it into a WARN, so
 * that the test runs fail, and the caller goes on as safely as it can
 * (the runtime never stops the kernel).
 */
void rtrs_env_warn(const char *what);

#ifdef __cplusplus
}
#endif

#endif /* RTRS_RT_ENV_H */
