/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the glue's files share: each one's setup and teardown, called by
 * main.c in order, and the one helper env_rdma.c needs from env_base.c.
 * The glue files call the core (core/rtrs_core.h) and implement its
 * environment (core/env.h); they do not call each other otherwise.
 */
#ifndef RTRS_GLUE_H
#define RTRS_GLUE_H

#include <linux/atomic.h>

#include "core/env.h"
#include "core/rtrs_core.h"

/*
 * The glue's fallible calls, in the test build only (make RTRS_TEST_BUILD=1):
 * RTRS_INJECTABLE_FN before the definition keeps the function out of line
 * and RTRS_INJECTABLE(fn, type) after it lets fail_function make it fail
 * (type: NULL or ERRNO, as for ALLOW_ERROR_INJECTION). In the shipped build
 * both are nothing.
 */
#ifdef RTRS_TEST_BUILD
#include <linux/error-injection.h>
#define RTRS_INJECTABLE_FN noinline
/*
 * type is pasted here, not passed on: ALLOW_ERROR_INJECTION pastes its own
 * type argument, and one passed through a macro would be expanded first
 * (NULL into ((void *)0)).
 */
#define RTRS_INJECTABLE(fn, type) RTRS_INJECTABLE_##type(fn)
#define RTRS_INJECTABLE_NULL(fn) ALLOW_ERROR_INJECTION(fn, NULL)
#define RTRS_INJECTABLE_ERRNO(fn) ALLOW_ERROR_INJECTION(fn, ERRNO)
#else
#define RTRS_INJECTABLE_FN
#define RTRS_INJECTABLE(fn, type) static_assert(1, "no error injection")
#endif

/* env_base.c: the module's workqueue. */
int rtrs_glue_base_init(void);
void rtrs_glue_base_exit(void);
/* lockdep: the lock is held (nothing, not even a call, without lockdep). */
#ifdef CONFIG_LOCKDEP
void rtrs_glue_assert_held(struct rtrs_env_lock *lock);
#else
static inline void rtrs_glue_assert_held(struct rtrs_env_lock *lock)
{
}
#endif

/* env_rdma.c: the RDMA client (device removals). */
int rtrs_glue_rdma_init(void);
void rtrs_glue_rdma_exit(void);

/* env_sysfs.c: the rtrs-server class. */
int rtrs_glue_sysfs_init(void);
void rtrs_glue_sysfs_exit(void);

/*
 * What the module holds of the kernel's, counted where it is allocated and
 * freed (env_base.c, env_rdma.c): read in debugfs ("held"), and all zero
 * when the module unloads (main.c says so otherwise).
 */
struct rtrs_glue_held {
	atomic64_t chunk_pages;	/* pages of session chunks */
	atomic64_t mrs;		/* memory regions of the chunks */
	atomic64_t cons;	/* connections: a QP and a CQ each */
};

extern struct rtrs_glue_held rtrs_glue_held;
/*
 * env_base.c: the counts above and the core's (sessions, paths), as
 * "name value" lines.
 */
int rtrs_glue_held_show(char *buf, size_t cap);
/*
 * env_base.c: the module's last step. When something is still held, the
 * counts are said (rtrs_glue_unload_report(), main.c: one error line, which
 * the tests fail on) before the core frees its own state
 * (rtrs_core_exit()). True if something was held.
 */
bool rtrs_glue_core_exit(void);
void rtrs_glue_unload_report(const char *held);

/*
 * env_admission.c: the admission rules given at load put in effect (after
 * rtrs_core_init(); -EINVAL when the core refuses them), and the parameters
 * cut off from the core (before rtrs_core_exit()).
 */
int rtrs_glue_admission_init(void);
void rtrs_glue_admission_exit(void);

/* env_debugfs.c: /sys/kernel/debug/rtrs-server (nothing when debugfs is absent). */
void rtrs_glue_debugfs_init(void);
void rtrs_glue_debugfs_exit(void);

#endif /* RTRS_GLUE_H */
