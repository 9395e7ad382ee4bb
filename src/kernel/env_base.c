// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel environment, part one: memory, logging, locks, deferred work,
 * waiting and time (src/rt/env.h and the first half of src/core/env.h).
 * Each function does what its name says and decides nothing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>
#include <linux/completion.h>
#include <linux/gfp.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "core/env.h"
#include "core/rtrs_core.h"
#include "kernel/compat.h"
#include "kernel/glue.h"
#include "rt/env.h"

/* --- src/rt/env.h ------------------------------------------------------------- */

/*
 * A function of its own, so that fail_function can make it fail (in the
 * test build). The core sizes some arrays from what a peer asks for (a
 * queue depth of 32768 makes arrays of more than a megabyte): those come
 * from vmalloc when the slab cannot give them, and a failure is the
 * caller's to report (a refusal), never the page allocator's warning.
 */
RTRS_INJECTABLE_FN void *rtrs_env_alloc(size_t size, unsigned int gfp)
{
	if (gfp == RTRS_ENV_GFP_ATOMIC)
		return kzalloc(size, GFP_ATOMIC | __GFP_NOWARN);
	return kvzalloc(size, GFP_KERNEL | __GFP_NOWARN);
}
RTRS_INJECTABLE(rtrs_env_alloc, NULL);

void rtrs_env_free(void *ptr)
{
	kvfree(ptr);
}

void rtrs_env_log(int level, const char *msg)
{
	switch (level) {
	case RTRS_ENV_LOG_ERR:
		pr_err("%s\n", msg);
		break;
	case RTRS_ENV_LOG_WARN:
		pr_warn("%s\n", msg);
		break;
	case RTRS_ENV_LOG_INFO:
		pr_info("%s\n", msg);
		break;
	default:
		pr_debug("%s\n", msg);
		break;
	}
}

/* For what a peer can make happen at will. */
void rtrs_env_log_ratelimited(int level, const char *msg)
{
	switch (level) {
	case RTRS_ENV_LOG_ERR:
		pr_err_ratelimited("%s\n", msg);
		break;
	case RTRS_ENV_LOG_WARN:
		pr_warn_ratelimited("%s\n", msg);
		break;
	default:
		pr_info_ratelimited("%s\n", msg);
		break;
	}
}

void rtrs_env_warn(const char *what)
{
	WARN(1, KBUILD_MODNAME ": %s\n", what);
}

/* --- locks ------------------------------------------------------------------------ */

struct rtrs_env_lock {
	enum rtrs_env_lock_kind kind;
	union {
		struct mutex mutex;	/* every kind but PATH_IO and CON_IO */
		spinlock_t spin;	/* PATH_IO, CON_IO */
	};
	unsigned long flags;	/* PATH_IO, CON_IO: the interrupt state, while held */
	bool spins;		/* PATH_IO, CON_IO: the spinlock (one test a call) */
};

/* One lockdep class per kind, whatever the number of locks. */
static struct lock_class_key rtrs_env_lock_keys[RTRS_ENV_LOCK_KINDS];
static const char *const rtrs_env_lock_names[RTRS_ENV_LOCK_KINDS] = {
	[RTRS_ENV_LOCK_MODULE] = "rtrs_module",
	[RTRS_ENV_LOCK_SERVER] = "rtrs_server",
	[RTRS_ENV_LOCK_SESSION_EV] = "rtrs_session_ev",
	[RTRS_ENV_LOCK_PATH_IO] = "rtrs_path_io",
	[RTRS_ENV_LOCK_SERVERS] = "rtrs_servers",
	[RTRS_ENV_LOCK_CON_IO] = "rtrs_con_io",
};

/* The spinlock kinds (irqsave): a path's and a connection's I/O locks. */
static inline bool rtrs_glue_lock_spins(enum rtrs_env_lock_kind kind)
{
	return kind == RTRS_ENV_LOCK_PATH_IO || kind == RTRS_ENV_LOCK_CON_IO;
}

struct rtrs_env_lock *rtrs_env_lock_new(enum rtrs_env_lock_kind kind)
{
	struct rtrs_env_lock *l;

	if (WARN_ON_ONCE(kind >= RTRS_ENV_LOCK_KINDS))
		return NULL;
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return NULL;
	l->kind = kind;
	l->spins = rtrs_glue_lock_spins(kind);
	if (l->spins) {
		spin_lock_init(&l->spin);
		lockdep_set_class_and_name(&l->spin, &rtrs_env_lock_keys[kind],
					   rtrs_env_lock_names[kind]);
	} else {
		mutex_init(&l->mutex);
		lockdep_set_class_and_name(&l->mutex, &rtrs_env_lock_keys[kind],
					   rtrs_env_lock_names[kind]);
	}
	return l;
}

void rtrs_env_lock_free(struct rtrs_env_lock *l)
{
	if (!l->spins)
		mutex_destroy(&l->mutex);
	kfree(l);
}

/*
 * The core takes and drops these; for sparse each call holds or lets go of
 * one lock, whichever its kind (a mutex has no annotation of its own).
 */
void rtrs_env_lock_acquire(struct rtrs_env_lock *l)
	__acquires(l)
{
	unsigned long flags;

	if (l->spins) {
		spin_lock_irqsave(&l->spin, flags);
		l->flags = flags;
	} else {
		mutex_lock(&l->mutex);
		__acquire(l);
	}
}

void rtrs_env_lock_release(struct rtrs_env_lock *l)
	__releases(l)
{
	if (l->spins) {
		spin_unlock_irqrestore(&l->spin, l->flags);
	} else {
		__release(l);
		mutex_unlock(&l->mutex);
	}
}

#ifdef CONFIG_LOCKDEP
void rtrs_glue_assert_held(struct rtrs_env_lock *l)
{
	if (l->spins)
		lockdep_assert_held(&l->spin);
	else
		lockdep_assert_held(&l->mutex);
}
#endif

/* --- time, deferred work, waiting ---------------------------------------------- */

/* 64-bit values in the interface are __UINT64_TYPE__ (unsigned long here). */
__UINT64_TYPE__ rtrs_env_now_ms(void)
{
	return ktime_to_ms(ktime_get());
}

/* The latency histograms' clock: three readings a request. */
/*
 * The scheduler's clock: the TSC where there is one, where ktime_get_ns()
 * may read a slow clocksource (HPET, when the TSC is found unstable, as in
 * QEMU without KVM). Per CPU, so two readings may go backwards: env.h.
 */
__UINT64_TYPE__ rtrs_env_now_ns(void)
{
	return local_clock();
}

/* Path setup and teardown; unordered, so that a teardown can wait for a setup. */
static struct workqueue_struct *rtrs_glue_wq;

struct rtrs_env_work {
	struct delayed_work dw;
	void *owner;
	unsigned int kind;
};

static void rtrs_env_work_fn(struct work_struct *work)
{
	struct rtrs_env_work *w = container_of(to_delayed_work(work), struct rtrs_env_work, dw);

	/* The core may free w on the way (a path's close work frees the path). */
	rtrs_core_run_work(w->owner, w->kind);
}

/*
 * One lockdep class per kind of work: a work that waits for another kind
 * (a path's teardown cancels its info exchange and its timer) is then no
 * "recursive locking" in lockdep's eyes, as it would be with one class.
 */
#define RTRS_GLUE_WORK_KINDS 8
#ifdef CONFIG_LOCKDEP
static struct lock_class_key rtrs_glue_work_keys[RTRS_GLUE_WORK_KINDS];
static const char *const rtrs_glue_work_names[RTRS_GLUE_WORK_KINDS] = {
	"rtrs_work_0", "rtrs_work_1", "rtrs_work_2", "rtrs_work_3",
	"rtrs_work_4", "rtrs_work_5", "rtrs_work_6", "rtrs_work_7",
};
#endif

struct rtrs_env_work *rtrs_env_work_new(void *owner, unsigned int kind)
{
	struct rtrs_env_work *w;

	if (WARN_ON_ONCE(kind >= RTRS_GLUE_WORK_KINDS))
		return NULL;
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return NULL;
	INIT_DELAYED_WORK(&w->dw, rtrs_env_work_fn);
#ifdef CONFIG_LOCKDEP
	lockdep_init_map(&w->dw.work.lockdep_map, rtrs_glue_work_names[kind],
			 &rtrs_glue_work_keys[kind], 0);
#endif
	w->owner = owner;
	w->kind = kind;
	return w;
}

void rtrs_env_work_queue(struct rtrs_env_work *w, unsigned int delay_ms)
{
	queue_delayed_work(rtrs_glue_wq, &w->dw, msecs_to_jiffies(delay_ms));
}

void rtrs_env_work_requeue(struct rtrs_env_work *w, unsigned int delay_ms)
{
	mod_delayed_work(rtrs_glue_wq, &w->dw, msecs_to_jiffies(delay_ms));
}

void rtrs_env_work_cancel_sync(struct rtrs_env_work *w)
{
	cancel_delayed_work_sync(&w->dw);
}

void rtrs_env_work_cancel(struct rtrs_env_work *w)
{
	cancel_delayed_work(&w->dw);
}

void rtrs_env_work_free(struct rtrs_env_work *w)
{
	kfree(w);
}

struct rtrs_env_waiter {
	struct completion done;
};

struct rtrs_env_waiter *rtrs_env_waiter_new(void)
{
	struct rtrs_env_waiter *w = kzalloc(sizeof(*w), GFP_KERNEL);

	if (w)
		init_completion(&w->done);
	return w;
}

void rtrs_env_waiter_done(struct rtrs_env_waiter *w)
{
	complete(&w->done);
}

void rtrs_env_waiter_wait(struct rtrs_env_waiter *w)
{
	wait_for_completion(&w->done);
}

void rtrs_env_waiter_free(struct rtrs_env_waiter *w)
{
	kfree(w);
}

/* --- memory ------------------------------------------------------------------- */

struct rtrs_glue_held rtrs_glue_held;

int rtrs_glue_held_show(char *buf, size_t cap)
{
	__UINT64_TYPE__ sessions, paths;

	rtrs_core_held(&sessions, &paths);
	return scnprintf(buf, cap,
			 "sessions %llu\npaths %llu\nconnections %lld\nmrs %lld\nchunk_pages %lld\n",
			 (unsigned long long)sessions, (unsigned long long)paths,
			 (long long)atomic64_read(&rtrs_glue_held.cons),
			 (long long)atomic64_read(&rtrs_glue_held.mrs),
			 (long long)atomic64_read(&rtrs_glue_held.chunk_pages));
}

/*
 * Everything is given back before the module's last step, so what is still
 * held then is a leak: it is said first, while the core's state is still
 * there, and before anything the core's exit says or frees.
 */
bool rtrs_glue_core_exit(void)
{
	__UINT64_TYPE__ s, p;
	char held[160];
	bool any;

	rtrs_core_held(&s, &p);
	any = s || p || atomic64_read(&rtrs_glue_held.cons) || atomic64_read(&rtrs_glue_held.mrs) ||
	      atomic64_read(&rtrs_glue_held.chunk_pages);
	if (any) {
		rtrs_glue_held_show(held, sizeof(held));
		strreplace(held, '\n', ' ');
		rtrs_glue_unload_report(strim(held));
	}
	rtrs_core_exit();
	return any;
}

/*
 * A chunk is high-order pages: without the allocator's own failure report
 * (the core refuses the session and says why) and without retrying until
 * the OOM killer runs. Counted in pages (rtrs_glue_held).
 */

RTRS_INJECTABLE_FN void *rtrs_env_chunk_alloc(u32 size)
{
	struct page *page = alloc_pages(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN |
					__GFP_RETRY_MAYFAIL, get_order(size));

	if (!page)
		return NULL;
	atomic64_add(1 << get_order(size), &rtrs_glue_held.chunk_pages);
	return page_address(page);
}
RTRS_INJECTABLE(rtrs_env_chunk_alloc, NULL);

void rtrs_env_chunk_free(void *chunk, u32 size)
{
	free_pages((unsigned long)chunk, get_order(size));
	atomic64_sub(1 << get_order(size), &rtrs_glue_held.chunk_pages);
}

__UINT64_TYPE__ rtrs_env_total_ram(void)
{
	return (u64)totalram_pages() << PAGE_SHIFT;
}

__UINT64_TYPE__ rtrs_env_available_ram(void)
{
	return (u64)si_mem_available() << PAGE_SHIFT;
}

/* --- setup -------------------------------------------------------------------- */

int rtrs_glue_base_init(void)
{
	rtrs_glue_wq = alloc_workqueue("rtrs_server", RTRS_WQ_PERCPU, 0);
	return rtrs_glue_wq ? 0 : -ENOMEM;
}

void rtrs_glue_base_exit(void)
{
	destroy_workqueue(rtrs_glue_wq);
}
