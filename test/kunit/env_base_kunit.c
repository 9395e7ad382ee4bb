// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs-server-kunit.ko, part two: the glue's basic environment
 * (src/kernel/env_base.c): locks, work items, waiters, time and memory.
 *
 * env_base.c is compiled into this file; what it calls outside itself is
 * stubbed here: rtrs_core_run_work() records which owner and kind ran,
 * when and in what context, and does what the case asked of the run
 * (block until released, requeue itself, free its own work item as a
 * path's close work does); rtrs_core_held(), rtrs_core_exit() and
 * main.c's rtrs_glue_unload_report() are the held suite's. The workqueue
 * is the glue's own, made by rtrs_glue_base_init() for the work suite.
 *
 * Lockdep, KASAN, kmemleak and debugobjects (work items, timers) watch
 * every case; guest-run.sh fails the run on any report of theirs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt	/* as env_base.c has it */

#include "kernel/env_base.c"

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/irqflags.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/timer.h>

/* ===== suite rtrs_srv_env_lock: the kinds of lock ================================= */

static const enum rtrs_env_lock_kind lock_kinds[] = {
	RTRS_ENV_LOCK_MODULE, RTRS_ENV_LOCK_SERVER, RTRS_ENV_LOCK_SESSION_EV, RTRS_ENV_LOCK_PATH_IO,
	RTRS_ENV_LOCK_CON_IO,
};

/* The spinlocks (irqsave): a path's and a connection's I/O locks. */
static bool spins(enum rtrs_env_lock_kind kind)
{
	return kind == RTRS_ENV_LOCK_PATH_IO || kind == RTRS_ENV_LOCK_CON_IO;
}

static bool held(struct rtrs_env_lock *l)
{
	return spins(l->kind) ? lockdep_is_held(&l->spin) : lockdep_is_held(&l->mutex);
}

/* Each kind: taken, held (as lockdep sees it), released; a spinlock with interrupts off. */
static void lock_each_kind(struct kunit *test)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(lock_kinds); i++) {
		struct rtrs_env_lock *l = rtrs_env_lock_new(lock_kinds[i]);
		bool io = spins(lock_kinds[i]);

		KUNIT_ASSERT_NOT_NULL(test, l);
		KUNIT_EXPECT_EQ(test, l->kind, lock_kinds[i]);
		rtrs_env_lock_acquire(l);
		rtrs_glue_assert_held(l);
		if (IS_ENABLED(CONFIG_LOCKDEP))
			KUNIT_EXPECT_TRUE_MSG(test, held(l), "kind %d", lock_kinds[i]);
		if (io) {
			KUNIT_EXPECT_TRUE(test, irqs_disabled());
			KUNIT_EXPECT_TRUE(test, spin_is_locked(&l->spin));
		} else {
			KUNIT_EXPECT_TRUE(test, mutex_is_locked(&l->mutex));
		}
		rtrs_env_lock_release(l);
		if (IS_ENABLED(CONFIG_LOCKDEP))
			KUNIT_EXPECT_FALSE_MSG(test, held(l), "kind %d", lock_kinds[i]);
		KUNIT_EXPECT_FALSE(test, irqs_disabled());
		if (io)
			KUNIT_EXPECT_FALSE(test, spin_is_locked(&l->spin));
		else
			KUNIT_EXPECT_FALSE(test, mutex_is_locked(&l->mutex));
		rtrs_env_lock_free(l);
	}
}

struct atomic_ctx {
	struct timer_list timer;
	struct rtrs_env_lock *lock;
	bool in_softirq;
	bool irqs_off_inside;
	bool irqs_restored;	/* after the release, as they were before */
	struct completion done;
};

static void atomic_timer_fn(struct timer_list *t)
{
	struct atomic_ctx *c = from_timer(c, t, timer);
	bool before = irqs_disabled();

	c->in_softirq = in_serving_softirq();
	rtrs_env_lock_acquire(c->lock);
	c->irqs_off_inside = irqs_disabled();
	rtrs_env_lock_release(c->lock);
	c->irqs_restored = irqs_disabled() == before;
	complete(&c->done);
}

/*
 * PATH_IO works in any context: with interrupts off (and leaves them off),
 * with preemption off, in a timer (softirq).
 */
static void lock_path_io_atomic(struct kunit *test)
{
	struct atomic_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	unsigned long flags;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->lock = rtrs_env_lock_new(RTRS_ENV_LOCK_PATH_IO);
	KUNIT_ASSERT_NOT_NULL(test, c->lock);

	local_irq_save(flags);
	rtrs_env_lock_acquire(c->lock);
	rtrs_env_lock_release(c->lock);
	KUNIT_EXPECT_TRUE(test, irqs_disabled());
	local_irq_restore(flags);
	KUNIT_EXPECT_FALSE(test, irqs_disabled());

	preempt_disable();
	rtrs_env_lock_acquire(c->lock);
	rtrs_env_lock_release(c->lock);
	preempt_enable();

	init_completion(&c->done);
	timer_setup(&c->timer, atomic_timer_fn, 0);
	mod_timer(&c->timer, jiffies + 1);
	KUNIT_EXPECT_NE(test, wait_for_completion_timeout(&c->done, 10 * HZ), 0UL);
	del_timer_sync(&c->timer);
	KUNIT_EXPECT_TRUE(test, c->in_softirq);
	KUNIT_EXPECT_TRUE(test, c->irqs_off_inside);
	KUNIT_EXPECT_TRUE(test, c->irqs_restored);
	rtrs_env_lock_free(c->lock);
}

/*
 * One lockdep class per kind, whatever the number of locks: two locks of a
 * kind share their kind's key and name, and no two kinds share one.
 */
static void lock_classes(struct kunit *test)
{
#ifdef CONFIG_DEBUG_LOCK_ALLOC
	struct lockdep_map *maps[ARRAY_SIZE(lock_kinds)][2];
	struct rtrs_env_lock *locks[ARRAY_SIZE(lock_kinds)][2];
	int i, j, k;

	for (i = 0; i < ARRAY_SIZE(lock_kinds); i++) {
		for (j = 0; j < 2; j++) {
			struct rtrs_env_lock *l = rtrs_env_lock_new(lock_kinds[i]);

			locks[i][j] = l;
			maps[i][j] = NULL;
			if (!l)
				continue;
			maps[i][j] = spins(lock_kinds[i]) ? &l->spin.dep_map : &l->mutex.dep_map;
		}
	}
	for (i = 0; i < ARRAY_SIZE(lock_kinds); i++) {
		for (j = 0; j < 2; j++) {
			struct lockdep_map *m = maps[i][j];

			KUNIT_ASSERT_NOT_NULL(test, m);
			KUNIT_EXPECT_PTR_EQ(test, m->key, &rtrs_env_lock_keys[lock_kinds[i]]);
			KUNIT_EXPECT_STREQ(test, m->name, rtrs_env_lock_names[lock_kinds[i]]);
			for (k = 0; k < i; k++)
				KUNIT_EXPECT_PTR_NE_MSG(test, m->key, maps[k][0]->key,
							"kinds %d and %d", lock_kinds[i],
							lock_kinds[k]);
		}
	}
	for (i = 0; i < ARRAY_SIZE(lock_kinds); i++)
		for (j = 0; j < 2; j++)
			if (locks[i][j])
				rtrs_env_lock_free(locks[i][j]);
#else
	kunit_skip(test, "needs CONFIG_DEBUG_LOCK_ALLOC");
#endif
}

/*
 * The documented order, MODULE > SERVER > PATH_IO, nested, and SESSION_EV
 * alone: lockdep has nothing to say (with one class for all kinds it would
 * report recursive locking). A mutex kind may sleep while held.
 */
static void lock_nesting_order(struct kunit *test)
{
	struct rtrs_env_lock *mod = rtrs_env_lock_new(RTRS_ENV_LOCK_MODULE);
	struct rtrs_env_lock *srv = rtrs_env_lock_new(RTRS_ENV_LOCK_SERVER);
	struct rtrs_env_lock *ev = rtrs_env_lock_new(RTRS_ENV_LOCK_SESSION_EV);
	struct rtrs_env_lock *io = rtrs_env_lock_new(RTRS_ENV_LOCK_PATH_IO);
	struct rtrs_env_lock *io2 = rtrs_env_lock_new(RTRS_ENV_LOCK_PATH_IO);

	if (!mod || !srv || !ev || !io || !io2) {
		KUNIT_FAIL(test, "out of memory");
		goto free;
	}
	rtrs_env_lock_acquire(mod);
	rtrs_env_lock_acquire(srv);
	msleep(1);
	rtrs_env_lock_acquire(io);
	rtrs_glue_assert_held(mod);
	rtrs_glue_assert_held(srv);
	rtrs_glue_assert_held(io);
	rtrs_env_lock_release(io);
	/* Another path's lock, one after the other. */
	rtrs_env_lock_acquire(io2);
	rtrs_env_lock_release(io2);
	rtrs_env_lock_release(srv);
	rtrs_env_lock_release(mod);

	rtrs_env_lock_acquire(ev);
	msleep(1);
	rtrs_env_lock_release(ev);
	KUNIT_EXPECT_FALSE(test, irqs_disabled());
free:
	if (io2)
		rtrs_env_lock_free(io2);
	if (io)
		rtrs_env_lock_free(io);
	if (ev)
		rtrs_env_lock_free(ev);
	if (srv)
		rtrs_env_lock_free(srv);
	if (mod)
		rtrs_env_lock_free(mod);
}

static struct kunit_case lock_cases[] = {
	KUNIT_CASE(lock_each_kind),
	KUNIT_CASE(lock_path_io_atomic),
	KUNIT_CASE(lock_classes),
	KUNIT_CASE(lock_nesting_order),
	{}
};

static struct kunit_suite lock_suite = {
	.name = "rtrs_srv_env_lock",
	.test_cases = lock_cases,
};

/* ===== suite rtrs_srv_env_work: work items, waiters, time ======================== */

/* What a run of the work item does, besides being recorded. */
enum run_mode {
	RUN_RECORD,		/* nothing else */
	RUN_BLOCK,		/* signal entered, wait for resume */
	RUN_FREE_SELF,		/* free its own work item (a path's close work) */
	RUN_REQUEUE_SELF,	/* requeue itself while requeues > 0 (a timer) */
	RUN_CANCEL_FREE_SELF,	/* requeue itself, cancel that, free itself (a path's end) */
};

/* The owner a work item was made with: rtrs_core_run_work() gets it back. */
struct owner {
	struct rtrs_env_work *w;
	enum run_mode mode;
	int requeues;
	atomic_t runs;
	unsigned int kind;
	void *self;		/* the owner pointer the run got */
	unsigned long first_run;	/* jiffies */
	bool process_context;	/* in a task, interrupts on, may sleep */
	bool wq_worker;
	bool pending_after_cancel;
	struct completion ran;	/* once per run */
	struct completion entered;
	struct completion resume;
};

void rtrs_core_run_work(void *arg, unsigned int kind)
{
	struct owner *o = arg;

	if (atomic_read(&o->runs) == 0) {
		o->first_run = jiffies;
		o->self = arg;
		o->kind = kind;
		o->process_context = in_task() && !irqs_disabled() && !in_atomic();
		o->wq_worker = current->flags & PF_WQ_WORKER;
	}
	switch (o->mode) {
	case RUN_RECORD:
		break;
	case RUN_BLOCK:
		complete(&o->entered);
		wait_for_completion(&o->resume);
		break;
	case RUN_FREE_SELF:
		rtrs_env_work_free(o->w);
		o->w = NULL;
		break;
	case RUN_CANCEL_FREE_SELF:
		rtrs_env_work_requeue(o->w, 20);
		rtrs_env_work_cancel(o->w);
		o->pending_after_cancel = delayed_work_pending(&o->w->dw);
		rtrs_env_work_free(o->w);
		o->w = NULL;
		break;
	case RUN_REQUEUE_SELF:
		if (o->requeues > 0) {
			o->requeues--;
			rtrs_env_work_requeue(o->w, 1);
		}
		break;
	}
	atomic_inc(&o->runs);
	complete(&o->ran);
}

/* The owners of a case, so that its end stops their work items whatever happened. */
#define OWNERS_MAX 4
struct owners {
	struct owner *o[OWNERS_MAX];
	int n;
};

static struct owner *owner_new(struct kunit *test, enum run_mode mode, unsigned int kind)
{
	struct owners *all = test->priv;
	struct owner *o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, o);
	KUNIT_ASSERT_LT(test, all->n, OWNERS_MAX);
	all->o[all->n++] = o;
	o->mode = mode;
	init_completion(&o->ran);
	init_completion(&o->entered);
	init_completion(&o->resume);
	o->w = rtrs_env_work_new(o, kind);
	KUNIT_ASSERT_NOT_NULL(test, o->w);
	return o;
}

/* The owner's work item is idle: neither pending nor running. Then it is freed. */
static void owner_free(struct kunit *test, struct owner *o)
{
	if (!o->w)
		return;
	rtrs_env_work_cancel_sync(o->w);
	KUNIT_EXPECT_FALSE(test, delayed_work_pending(&o->w->dw));
	rtrs_env_work_free(o->w);
	o->w = NULL;
}

static bool wait_run(struct owner *o, unsigned int secs)
{
	return wait_for_completion_timeout(&o->ran, secs * HZ) != 0;
}

/*
 * Jiffies from t0 to t.  A delay is a count of jiffies from the jiffy of the
 * call (msecs_to_jiffies rounds up), and a timer never fires before jiffies
 * reaches its expiry, so counting in jiffies makes "not before the delay"
 * exact.  Counting in ktime is not: under TCG, on a busy host, ticks come
 * late and jiffies can lag ktime by several jiffies when the item is queued,
 * so a run can come a few ms before delay_ms of ktime has passed (seen: 395
 * ms of a 400 ms delay in a CI run).
 */
static long jiffies_since(unsigned long t0, unsigned long t)
{
	return (long)(t - t0);
}

static long delay_jiffies(unsigned int delay_ms)
{
	return (long)msecs_to_jiffies(delay_ms);
}

static int work_init(struct kunit *test)
{
	test->priv = kunit_kzalloc(test, sizeof(struct owners), GFP_KERNEL);
	return test->priv ? 0 : -ENOMEM;
}

/* A case cut short by a failed assertion may leave a work item queued or blocked. */
static void work_exit(struct kunit *test)
{
	struct owners *all = test->priv;
	int i;

	for (i = 0; i < all->n; i++) {
		complete_all(&all->o[i]->resume);
		owner_free(test, all->o[i]);
	}
}

static int work_suite_init(struct kunit_suite *suite)
{
	return rtrs_glue_base_init();
}

static void work_suite_exit(struct kunit_suite *suite)
{
	rtrs_glue_base_exit();
}

/* A run reaches the core with its owner and kind, in process context on a worker. */
static void work_runs_in_process_context(struct kunit *test)
{
	struct owner *o = owner_new(test, RUN_RECORD, 5);

	rtrs_env_work_queue(o->w, 0);
	KUNIT_ASSERT_TRUE(test, wait_run(o, 10));
	KUNIT_EXPECT_PTR_EQ(test, o->self, (void *)o);
	KUNIT_EXPECT_EQ(test, o->kind, 5U);
	KUNIT_EXPECT_TRUE(test, o->process_context);
	KUNIT_EXPECT_TRUE(test, o->wq_worker);
	owner_free(test, o);
	KUNIT_EXPECT_EQ(test, atomic_read(&o->runs), 1);
}

/* Not before its delay. */
static void work_queue_delay(struct kunit *test)
{
	struct owner *o = owner_new(test, RUN_RECORD, 1);
	unsigned long t0 = jiffies;

	rtrs_env_work_queue(o->w, 200);
	KUNIT_EXPECT_TRUE(test, delayed_work_pending(&o->w->dw));
	KUNIT_ASSERT_TRUE(test, wait_run(o, 10));
	KUNIT_EXPECT_GE(test, jiffies_since(t0, o->first_run), delay_jiffies(200));
	owner_free(test, o);
	KUNIT_EXPECT_EQ(test, atomic_read(&o->runs), 1);
}

/* Queueing a pending item does nothing: its earlier time stands, one run. */
static void work_queue_pending_keeps_time(struct kunit *test)
{
	struct owner *o = owner_new(test, RUN_RECORD, 1);
	unsigned long t0 = jiffies;

	rtrs_env_work_queue(o->w, 400);
	rtrs_env_work_queue(o->w, 0);
	KUNIT_ASSERT_TRUE(test, wait_run(o, 10));
	KUNIT_EXPECT_GE(test, jiffies_since(t0, o->first_run), delay_jiffies(400));
	msleep(100);
	owner_free(test, o);
	KUNIT_EXPECT_EQ(test, atomic_read(&o->runs), 1);
}

/* Requeueing moves a pending run earlier: one run, long before the first time. */
static void work_requeue_earlier(struct kunit *test)
{
	struct owner *o = owner_new(test, RUN_RECORD, 1);
	unsigned long t0 = jiffies;

	rtrs_env_work_queue(o->w, 60000);
	rtrs_env_work_requeue(o->w, 50);
	KUNIT_ASSERT_TRUE(test, wait_run(o, 20));
	KUNIT_EXPECT_LT(test, jiffies_since(t0, o->first_run), delay_jiffies(20000));
	KUNIT_EXPECT_FALSE(test, delayed_work_pending(&o->w->dw));
	owner_free(test, o);
	KUNIT_EXPECT_EQ(test, atomic_read(&o->runs), 1);
}

/* ... and later: not before the new time, counted from the requeue. */
static void work_requeue_later(struct kunit *test)
{
	struct owner *o = owner_new(test, RUN_RECORD, 1);
	unsigned long t0;

	rtrs_env_work_queue(o->w, 1000);
	t0 = jiffies;
	rtrs_env_work_requeue(o->w, 1500);
	KUNIT_ASSERT_TRUE(test, wait_run(o, 20));
	KUNIT_EXPECT_GE(test, jiffies_since(t0, o->first_run), delay_jiffies(1500));
	owner_free(test, o);
	KUNIT_EXPECT_EQ(test, atomic_read(&o->runs), 1);
}

/* Requeueing an idle item queues it. */
static void work_requeue_idle(struct kunit *test)
{
	struct owner *o = owner_new(test, RUN_RECORD, 1);

	rtrs_env_work_requeue(o->w, 0);
	KUNIT_EXPECT_TRUE(test, wait_run(o, 10));
	owner_free(test, o);
}

/* A pending run cancelled never happens; the item can be queued again. */
static void work_cancel_pending(struct kunit *test)
{
	struct owner *o = owner_new(test, RUN_RECORD, 1);

	rtrs_env_work_queue(o->w, 60000);
	rtrs_env_work_cancel_sync(o->w);
	KUNIT_EXPECT_FALSE(test, delayed_work_pending(&o->w->dw));
	KUNIT_EXPECT_EQ(test, atomic_read(&o->runs), 0);
	/* Cancelling an idle item is harmless. */
	rtrs_env_work_cancel_sync(o->w);
	rtrs_env_work_queue(o->w, 0);
	KUNIT_EXPECT_TRUE(test, wait_run(o, 10));
	owner_free(test, o);
	KUNIT_EXPECT_EQ(test, atomic_read(&o->runs), 1);
}

struct cancel_thread {
	struct rtrs_env_work *w;
	struct completion done;
};

static int cancel_thread_fn(void *arg)
{
	struct cancel_thread *t = arg;

	rtrs_env_work_cancel_sync(t->w);
	complete(&t->done);
	return 0;
}

/* Cancelling a running item waits for its run to end. */
static void work_cancel_waits_running(struct kunit *test)
{
	struct owner *o = owner_new(test, RUN_BLOCK, 1);
	struct cancel_thread *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct task_struct *task;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->w = o->w;
	init_completion(&c->done);
	rtrs_env_work_queue(o->w, 0);
	/* From here on the run must be let go: no assertion may end the case. */
	if (!wait_for_completion_timeout(&o->entered, 10 * HZ)) {
		KUNIT_FAIL(test, "the work item never ran");
		complete(&o->resume);
		owner_free(test, o);
		return;
	}
	task = kthread_run(cancel_thread_fn, c, "kunit-cancel");
	if (IS_ERR(task)) {
		KUNIT_FAIL(test, "cannot start a thread: %ld", PTR_ERR(task));
		complete(&o->resume);
		owner_free(test, o);
		return;
	}
	KUNIT_EXPECT_EQ_MSG(test, wait_for_completion_timeout(&c->done, HZ / 2), 0UL,
			    "cancel_sync returned while the run was under way");
	complete(&o->resume);
	wait_for_completion(&c->done);
	KUNIT_EXPECT_EQ(test, atomic_read(&o->runs), 1);
	owner_free(test, o);
}

/* A run that frees its own work item (as a path's close work frees the path). */
static void work_frees_itself(struct kunit *test)
{
	struct owner *o = owner_new(test, RUN_FREE_SELF, 3);

	rtrs_env_work_queue(o->w, 10);
	KUNIT_ASSERT_TRUE(test, wait_run(o, 10));
	KUNIT_EXPECT_NULL(test, o->w);
	KUNIT_EXPECT_EQ(test, o->kind, 3U);
	/* Once more, with no delay. */
	o->w = rtrs_env_work_new(o, 4);
	KUNIT_ASSERT_NOT_NULL(test, o->w);
	rtrs_env_work_queue(o->w, 0);
	KUNIT_ASSERT_TRUE(test, wait_run(o, 10));
	KUNIT_EXPECT_NULL(test, o->w);
	KUNIT_EXPECT_EQ(test, atomic_read(&o->runs), 2);
}

/*
 * A run that finds itself queued again (a path's close work with its
 * disconnect deadline armed) cancels that without waiting and frees itself:
 * it runs once, and nothing runs on the freed item after.
 */
static void work_cancels_itself_and_frees(struct kunit *test)
{
	struct owner *o = owner_new(test, RUN_CANCEL_FREE_SELF, 5);

	rtrs_env_work_queue(o->w, 0);
	KUNIT_ASSERT_TRUE(test, wait_run(o, 10));
	KUNIT_EXPECT_FALSE(test, o->pending_after_cancel);
	KUNIT_EXPECT_NULL(test, o->w);
	msleep(100);
	KUNIT_EXPECT_EQ(test, atomic_read(&o->runs), 1);
}

/* A run that requeues itself (a timer): runs again, and cancel_sync stops it for good. */
static void work_requeue_from_run(struct kunit *test)
{
	struct owner *o = owner_new(test, RUN_REQUEUE_SELF, 1);
	int i, runs;

	o->requeues = 4;
	rtrs_env_work_queue(o->w, 0);
	for (i = 0; i < 5; i++)
		KUNIT_ASSERT_TRUE_MSG(test, wait_run(o, 10), "run %d", i + 1);
	msleep(50);
	KUNIT_EXPECT_EQ(test, atomic_read(&o->runs), 5);
	KUNIT_EXPECT_FALSE(test, delayed_work_pending(&o->w->dw));

	/* Forever, until cancelled. */
	o->requeues = INT_MAX;
	rtrs_env_work_queue(o->w, 0);
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_TRUE(test, wait_run(o, 10));
	rtrs_env_work_cancel_sync(o->w);
	runs = atomic_read(&o->runs);
	msleep(50);
	KUNIT_EXPECT_EQ(test, atomic_read(&o->runs), runs);
	KUNIT_EXPECT_FALSE(test, delayed_work_pending(&o->w->dw));
	owner_free(test, o);
}

/* Queueing and requeueing in atomic context (under a path's io lock). */
static void work_queue_atomic(struct kunit *test)
{
	struct owner *o = owner_new(test, RUN_RECORD, 1);
	struct rtrs_env_lock *io = rtrs_env_lock_new(RTRS_ENV_LOCK_PATH_IO);

	KUNIT_ASSERT_NOT_NULL(test, io);
	rtrs_env_lock_acquire(io);
	rtrs_env_work_queue(o->w, 20);
	rtrs_env_work_requeue(o->w, 0);
	rtrs_env_lock_release(io);
	KUNIT_EXPECT_TRUE(test, wait_run(o, 10));
	owner_free(test, o);
	rtrs_env_lock_free(io);
}

/* A waiter signalled before the wait (with interrupts off): the wait returns at once. */
static void waiter_done_before_wait(struct kunit *test)
{
	struct rtrs_env_waiter *w = rtrs_env_waiter_new();
	unsigned long flags;

	KUNIT_ASSERT_NOT_NULL(test, w);
	local_irq_save(flags);
	rtrs_env_waiter_done(w);
	local_irq_restore(flags);
	rtrs_env_waiter_wait(w);
	rtrs_env_waiter_free(w);
}

struct waiter_timer {
	struct timer_list timer;
	struct rtrs_env_waiter *w;
	bool in_softirq;
};

static void waiter_timer_fn(struct timer_list *t)
{
	struct waiter_timer *wt = from_timer(wt, t, timer);

	wt->in_softirq = in_serving_softirq();
	rtrs_env_waiter_done(wt->w);
}

/* A waiter signalled later, from a timer: the wait sleeps until then. */
static void waiter_done_from_timer(struct kunit *test)
{
	struct waiter_timer *wt = kunit_kzalloc(test, sizeof(*wt), GFP_KERNEL);
	unsigned long t0;

	KUNIT_ASSERT_NOT_NULL(test, wt);
	wt->w = rtrs_env_waiter_new();
	KUNIT_ASSERT_NOT_NULL(test, wt->w);
	timer_setup(&wt->timer, waiter_timer_fn, 0);
	t0 = jiffies;
	mod_timer(&wt->timer, jiffies + msecs_to_jiffies(100));
	rtrs_env_waiter_wait(wt->w);
	KUNIT_EXPECT_GE(test, jiffies_since(t0, jiffies), delay_jiffies(100));
	del_timer_sync(&wt->timer);
	KUNIT_EXPECT_TRUE(test, wt->in_softirq);
	rtrs_env_waiter_free(wt->w);
}

/* Milliseconds that never go back, follow the clock, and can be read with interrupts off. */
static void now_ms_monotonic(struct kunit *test)
{
	u64 prev = rtrs_env_now_ms(), now, before, clock;
	unsigned long flags;
	int i, back = 0;

	for (i = 0; i < 10000; i++) {
		now = rtrs_env_now_ms();
		back += now < prev;
		prev = now;
	}
	KUNIT_EXPECT_EQ(test, back, 0);
	before = rtrs_env_now_ms();
	msleep(30);
	KUNIT_EXPECT_GE(test, rtrs_env_now_ms() - before, 30ULL);
	now = rtrs_env_now_ms();
	clock = ktime_to_ms(ktime_get());
	KUNIT_EXPECT_GE(test, clock, now);
	KUNIT_EXPECT_LE(test, clock - now, 1ULL);
	local_irq_save(flags);
	now = rtrs_env_now_ms();
	local_irq_restore(flags);
	KUNIT_EXPECT_GE(test, now, before);
}

static struct kunit_case work_cases[] = {
	KUNIT_CASE(work_runs_in_process_context),
	KUNIT_CASE(work_queue_delay),
	KUNIT_CASE(work_queue_pending_keeps_time),
	KUNIT_CASE(work_requeue_earlier),
	KUNIT_CASE(work_requeue_later),
	KUNIT_CASE(work_requeue_idle),
	KUNIT_CASE(work_cancel_pending),
	KUNIT_CASE(work_cancel_waits_running),
	KUNIT_CASE(work_frees_itself),
	KUNIT_CASE(work_cancels_itself_and_frees),
	KUNIT_CASE(work_requeue_from_run),
	KUNIT_CASE(work_queue_atomic),
	KUNIT_CASE(waiter_done_before_wait),
	KUNIT_CASE(waiter_done_from_timer),
	KUNIT_CASE(now_ms_monotonic),
	{}
};

static struct kunit_suite work_suite = {
	.name = "rtrs_srv_env_work",
	.suite_init = work_suite_init,
	.suite_exit = work_suite_exit,
	.init = work_init,
	.exit = work_exit,
	.test_cases = work_cases,
};

/* ===== suite rtrs_srv_env_mem: allocations and chunks ============================ */

/* rtrs_env_alloc(): zeroed memory of the size asked, for rtrs_env_free(). */
static void mem_alloc_zeroed(struct kunit *test)
{
	static const size_t sizes[] = { 1, 200, PAGE_SIZE, 100000 };
	int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		unsigned char *p = rtrs_env_alloc(sizes[i], RTRS_ENV_GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, p);
		KUNIT_EXPECT_NULL_MSG(test, memchr_inv(p, 0, sizes[i]), "size %zu", sizes[i]);
		KUNIT_EXPECT_GE(test, ksize(p), sizes[i]);
		memset(p, 0xa5, sizes[i]);	/* all of it is ours (KASAN) */
		rtrs_env_free(p);
	}
	rtrs_env_free(NULL);
}

/* The atomic flavour, under a path's io lock. */
static void mem_alloc_atomic(struct kunit *test)
{
	struct rtrs_env_lock *io = rtrs_env_lock_new(RTRS_ENV_LOCK_PATH_IO);
	unsigned char *p;

	KUNIT_ASSERT_NOT_NULL(test, io);
	rtrs_env_lock_acquire(io);
	p = rtrs_env_alloc(512, RTRS_ENV_GFP_ATOMIC);
	rtrs_env_lock_release(io);
	KUNIT_EXPECT_NOT_NULL(test, p);
	if (p)
		KUNIT_EXPECT_NULL(test, memchr_inv(p, 0, 512));
	rtrs_env_free(p);
	rtrs_env_lock_free(io);
}

/* Chunks: zeroed, on a boundary of their size, every time (also after a dirty one). */
static void mem_chunk_zeroed_aligned(struct kunit *test)
{
	u32 size;
	int round;

	for (size = PAGE_SIZE; size <= SZ_1M; size <<= 1) {
		for (round = 0; round < 2; round++) {
			void *p = rtrs_env_chunk_alloc(size);

			KUNIT_ASSERT_NOT_NULL_MSG(test, p, "size %u", size);
			KUNIT_EXPECT_EQ_MSG(test, (unsigned long)p & (size - 1), 0UL, "size %u",
					    size);
			KUNIT_EXPECT_NULL_MSG(test, memchr_inv(p, 0, size), "size %u round %d",
					      size, round);
			memset(p, 0x5a, size);
			rtrs_env_chunk_free(p, size);
		}
	}
}

/*
 * rtrs_env_chunk_free() gives all of a chunk back: twice the machine's
 * memory allocated and freed 1 MiB at a time all succeeds.
 */
static void mem_chunk_free_returns_memory(struct kunit *test)
{
	u64 total = 2 * rtrs_env_total_ram();
	u64 n = total / SZ_1M, i;

	for (i = 0; i < n; i++) {
		void *p = rtrs_env_chunk_alloc(SZ_1M);

		if (!p) {
			KUNIT_FAIL(test, "chunk %llu of %llu: no memory", i + 1, n);
			return;
		}
		rtrs_env_chunk_free(p, SZ_1M);
		if (i % 64 == 0)
			cond_resched();
	}
}

static void mem_total_ram(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rtrs_env_total_ram(), (u64)totalram_pages() << PAGE_SHIFT);
	KUNIT_EXPECT_GT(test, rtrs_env_total_ram(), (u64)SZ_64M);
}

/* The available memory is the kernel's own estimate (MemAvailable), read now. */
static void mem_available_ram(struct kunit *test)
{
	u64 before = (u64)si_mem_available() << PAGE_SHIFT;
	u64 got = rtrs_env_available_ram();
	u64 after = (u64)si_mem_available() << PAGE_SHIFT;

	KUNIT_EXPECT_GT(test, got, 0ULL);
	KUNIT_EXPECT_LE(test, got, rtrs_env_total_ram());
	KUNIT_EXPECT_LE(test, got, max(before, after) + SZ_16M);
	KUNIT_EXPECT_GE(test, got + SZ_16M, min(before, after));
}

/* The log functions at each level (the core's messages): they print, nothing more. */
static void mem_log_levels(struct kunit *test)
{
	static const int levels[] = { RTRS_ENV_LOG_ERR, RTRS_ENV_LOG_WARN, RTRS_ENV_LOG_INFO,
				      RTRS_ENV_LOG_DEBUG };
	int i;

	for (i = 0; i < ARRAY_SIZE(levels); i++) {
		rtrs_env_log(levels[i], "kunit: a message of the core (not a problem)");
		rtrs_env_log_ratelimited(levels[i], "kunit: a rate-limited one (not a problem)");
	}
}

static struct kunit_case mem_cases[] = {
	KUNIT_CASE(mem_alloc_zeroed),
	KUNIT_CASE(mem_alloc_atomic),
	KUNIT_CASE(mem_chunk_zeroed_aligned),
	KUNIT_CASE(mem_chunk_free_returns_memory),
	KUNIT_CASE(mem_total_ram),
	KUNIT_CASE(mem_available_ram),
	KUNIT_CASE(mem_log_levels),
	{}
};

static struct kunit_suite mem_suite = {
	.name = "rtrs_srv_env_mem",
	.test_cases = mem_cases,
};

/* ===== suite rtrs_srv_env_held: what the module still holds when it unloads ====== */

/*
 * The core's counts as the case sets them, and a core exit that frees what
 * it still had (the counts drop to zero with it); the report main.c would
 * print, recorded (printed, it would be a problem line of the run).
 */
static struct {
	u64 sessions, paths;
	int exits, reports;
	bool reported_before_exit;
	char said[160];
} held_stub;

void rtrs_core_held(__UINT64_TYPE__ *sessions, __UINT64_TYPE__ *paths)
{
	*sessions = held_stub.sessions;
	*paths = held_stub.paths;
}

void rtrs_core_exit(void)
{
	held_stub.exits++;
	held_stub.sessions = 0;
	held_stub.paths = 0;
}

void rtrs_glue_unload_report(const char *held)
{
	held_stub.reports++;
	held_stub.reported_before_exit = held_stub.exits == 0;
	strscpy(held_stub.said, held, sizeof(held_stub.said));
}

static int held_init(struct kunit *test)
{
	memset(&held_stub, 0, sizeof(held_stub));
	/* The other suites give back all they take. */
	KUNIT_ASSERT_EQ(test, atomic64_read(&rtrs_glue_held.cons), 0);
	KUNIT_ASSERT_EQ(test, atomic64_read(&rtrs_glue_held.mrs), 0);
	KUNIT_ASSERT_EQ(test, atomic64_read(&rtrs_glue_held.chunk_pages), 0);
	return 0;
}

/* Nothing held: nothing said, the core exits. */
static void held_nothing_nothing_said(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, rtrs_glue_core_exit());
	KUNIT_EXPECT_EQ(test, held_stub.reports, 0);
	KUNIT_EXPECT_EQ(test, held_stub.exits, 1);
}

/*
 * Sessions and paths the core still has are said before its exit frees
 * them (said after it, the counts would be zero and the leak unsaid).
 */
static void held_core_said_before_its_exit(struct kunit *test)
{
	held_stub.sessions = 1;
	held_stub.paths = 2;
	KUNIT_EXPECT_TRUE(test, rtrs_glue_core_exit());
	KUNIT_EXPECT_EQ(test, held_stub.exits, 1);
	KUNIT_ASSERT_EQ(test, held_stub.reports, 1);
	KUNIT_EXPECT_TRUE(test, held_stub.reported_before_exit);
	KUNIT_EXPECT_STREQ(test, held_stub.said,
			   "sessions 1 paths 2 connections 0 mrs 0 chunk_pages 0");
}

/* The glue's own counts are said too, each of them. */
static void held_glue_counts_said(struct kunit *test)
{
	atomic64_add(3, &rtrs_glue_held.cons);
	atomic64_add(4, &rtrs_glue_held.mrs);
	atomic64_add(32, &rtrs_glue_held.chunk_pages);
	KUNIT_EXPECT_TRUE(test, rtrs_glue_core_exit());
	atomic64_sub(3, &rtrs_glue_held.cons);
	atomic64_sub(4, &rtrs_glue_held.mrs);
	atomic64_sub(32, &rtrs_glue_held.chunk_pages);
	KUNIT_ASSERT_EQ(test, held_stub.reports, 1);
	KUNIT_EXPECT_STREQ(test, held_stub.said,
			   "sessions 0 paths 0 connections 3 mrs 4 chunk_pages 32");
}

static struct kunit_case held_cases[] = {
	KUNIT_CASE(held_nothing_nothing_said),
	KUNIT_CASE(held_core_said_before_its_exit),
	KUNIT_CASE(held_glue_counts_said),
	{}
};

static struct kunit_suite held_suite = {
	.name = "rtrs_srv_env_held",
	.init = held_init,
	.test_cases = held_cases,
};

kunit_test_suites(&lock_suite, &work_suite, &mem_suite, &held_suite);
