// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel environment, part six: who may connect (the core's admission,
 * src/core/admission.h), set through two module parameters:
 *
 *   admission        0644  the rules, as text (';' or a newline ends a
 *                          rule). Read: the refusals so far as a comment,
 *                          then the rules in effect. Given at load
 *                          (insmod, modprobe.d), they are in effect before
 *                          any upper layer can listen, and rules the core
 *                          refuses fail the load. Written later, they are
 *                          in effect from the next connection request on;
 *                          rules the core refuses change nothing (-EINVAL)
 *                          and the log says why.
 *   admission_close  0200  "1": close every path the rules in effect
 *                          refuse now (what is connected stays otherwise).
 *
 * The glue only carries the text: the core parses it and decides. Writes
 * of both and the module's init and exit are serialized by one mutex,
 * because the parameters' files exist from before init until after exit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "core/rtrs_core.h"
#include "kernel/glue.h"

static_assert(RTRS_CORE_ADMISSION_SHOW_MAX <= PAGE_SIZE);

static DEFINE_MUTEX(rtrs_glue_admission_lock);
/* Under the lock: the core is up (between init and exit). */
static bool rtrs_glue_admission_live;
/* Under the lock: the rules given before init, kept for it. */
static char *rtrs_glue_admission_at_load;

static int rtrs_glue_admission_apply(const char *text, const char *when)
{
	char why[160];
	int err;

	err = rtrs_core_admission_set(text, strlen(text), why, sizeof(why));
	if (err)
		pr_err("admission rules refused%s: %s\n", when, why);
	return err;
}

static int rtrs_glue_admission_set(const char *val, const struct kernel_param *kp)
{
	char *copy;
	int err = 0;

	mutex_lock(&rtrs_glue_admission_lock);
	if (rtrs_glue_admission_live) {
		err = rtrs_glue_admission_apply(val, "");
	} else {
		copy = kstrdup(val, GFP_KERNEL);
		if (copy) {
			kfree(rtrs_glue_admission_at_load);
			rtrs_glue_admission_at_load = copy;
		} else {
			err = -ENOMEM;
		}
	}
	mutex_unlock(&rtrs_glue_admission_lock);
	return err;
}

static int rtrs_glue_admission_get(char *buf, const struct kernel_param *kp)
{
	int n = 0;

	mutex_lock(&rtrs_glue_admission_lock);
	if (rtrs_glue_admission_live)
		n = rtrs_core_admission_show(buf, PAGE_SIZE);
	mutex_unlock(&rtrs_glue_admission_lock);
	return n;
}

static const struct kernel_param_ops rtrs_glue_admission_ops = {
	.set = rtrs_glue_admission_set,
	.get = rtrs_glue_admission_get,
};
module_param_cb(admission, &rtrs_glue_admission_ops, NULL, 0644);
MODULE_PARM_DESC(admission,
		 "Who may connect: rules 'allow ADDR[/PREFIX] [names=NAME,...]' and 'limit [sessions=N] [paths=N] [connections=N] [rate=R/s|R/m] [burst=B]', ended by ';' or a newline (default: none, every address may connect)");

static int rtrs_glue_admission_close_set(const char *val, const struct kernel_param *kp)
{
	bool yes;
	int n;

	if (kstrtobool(val, &yes) || !yes)
		return -EINVAL;
	mutex_lock(&rtrs_glue_admission_lock);
	n = rtrs_glue_admission_live ? rtrs_core_admission_close_refused() : -ENXIO;
	mutex_unlock(&rtrs_glue_admission_lock);
	if (n < 0)
		return n;
	pr_info("admission: %d path%s the rules refuse asked to close\n", n, n == 1 ? "" : "s");
	return 0;
}

static const struct kernel_param_ops rtrs_glue_admission_close_ops = {
	.set = rtrs_glue_admission_close_set,
};
module_param_cb(admission_close, &rtrs_glue_admission_close_ops, NULL, 0200);
MODULE_PARM_DESC(admission_close,
		 "Write 1: close every path the admission rules in effect refuse now");

int rtrs_glue_admission_init(void)
{
	int err = 0;

	mutex_lock(&rtrs_glue_admission_lock);
	if (rtrs_glue_admission_at_load)
		err = rtrs_glue_admission_apply(rtrs_glue_admission_at_load, " at load");
	kfree(rtrs_glue_admission_at_load);
	rtrs_glue_admission_at_load = NULL;
	rtrs_glue_admission_live = !err;
	mutex_unlock(&rtrs_glue_admission_lock);
	return err;
}

void rtrs_glue_admission_exit(void)
{
	mutex_lock(&rtrs_glue_admission_lock);
	rtrs_glue_admission_live = false;
	kfree(rtrs_glue_admission_at_load);
	rtrs_glue_admission_at_load = NULL;
	mutex_unlock(&rtrs_glue_admission_lock);
}
