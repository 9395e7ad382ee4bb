// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel environment, part six: who may connect (the core's admission,
 * src/core/admission.h), set through /sys/module/rtrs_server/parameters:
 *
 *   admission        the rules, as text (';' or a newline ends a rule).
 *                    Given at load (insmod, modprobe.d: a module
 *                    parameter), they are in effect before any upper layer
 *                    can listen, and rules the core refuses fail the load.
 *                    From init to exit the file of that name is ours (a
 *                    module attribute in the parameters folder, 0644):
 *                    read, the refusals so far as a comment, then the rules
 *                    in effect; written, the rules are in effect from the
 *                    next connection request on, and rules the core refuses
 *                    change nothing (-EINVAL; the log says why).
 *   admission_close  0200, "1": close every path the rules in effect refuse
 *                    now (what is connected stays otherwise).
 *
 * Why the file is ours and not the parameter's: a parameter's set() gets a
 * C string, so a write with a NUL in it reached it cut at the NUL
 * ("limit sessions=8\0allow 10.77.0.2" took effect as the limit alone,
 * turning the allow-list off), and a write longer than a page reached it
 * cut at the page. A module attribute's store() gets the length sysfs
 * took, and the core gets the text with it: a NUL byte is refused there
 * like any bad text, and a write of a whole page (sysfs passes no more, so
 * the rest may have been cut off) here; either changes nothing (-EINVAL).
 * The parameter itself (mode 0, no file of its own) takes the text of the
 * command line, which cannot hold a NUL.
 *
 * The glue only carries the text: the core parses it and decides. Writes
 * of both and the module's init and exit are serialized by one mutex,
 * because admission_close's file exists from before init until after exit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "core/rtrs_core.h"
#include "kernel/compat.h"
#include "kernel/glue.h"

static_assert(RTRS_CORE_ADMISSION_SHOW_MAX <= PAGE_SIZE);

static DEFINE_MUTEX(rtrs_glue_admission_lock);
/* Under the lock: the core is up (between init and exit). */
static bool rtrs_glue_admission_live;
/*
 * Under the lock: the rules given at load, kept for init, which frees
 * them; a load that fails before init leaves them to the parameter's
 * free(), which the module loader calls on every way out.
 */
static char *rtrs_glue_admission_at_load;

static int rtrs_glue_admission_apply(const char *text, size_t len, const char *when)
{
	char why[160];
	int err;

	err = rtrs_core_admission_set(text, len, why, sizeof(why));
	if (err)
		pr_err("admission rules refused%s: %s\n", when, why);
	return err;
}

/* --- the parameter: the rules given at load ------------------------------------- */

static int rtrs_glue_admission_param_set(const char *val, const struct kernel_param *kp)
{
	char *copy;
	int err = 0;

	mutex_lock(&rtrs_glue_admission_lock);
	if (rtrs_glue_admission_live) {
		/* Mode 0: no file reaches this after load. */
		err = -EPERM;
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

static void rtrs_glue_admission_param_free(void *arg)
{
	mutex_lock(&rtrs_glue_admission_lock);
	kfree(rtrs_glue_admission_at_load);
	rtrs_glue_admission_at_load = NULL;
	mutex_unlock(&rtrs_glue_admission_lock);
}

static const struct kernel_param_ops rtrs_glue_admission_param_ops = {
	.set = rtrs_glue_admission_param_set,
	.free = rtrs_glue_admission_param_free,
};
module_param_cb(admission, &rtrs_glue_admission_param_ops, NULL, 0);
MODULE_PARM_DESC(admission,
		 "Who may connect: rules 'allow ADDR[/PREFIX] [names=NAME,...]' and 'limit [sessions=N] [paths=N] [connections=N] [rate=R/s|R/m] [burst=B]', ended by ';' or a newline (default: none, every address may connect)");

/* --- the file: the rules read and written while the module is up ---------------- */

static ssize_t rtrs_glue_admission_show(RTRS_MODULE_ATTR_CONST struct module_attribute *attr,
					struct module_kobject *mk, char *buf)
{
	int n = 0;

	mutex_lock(&rtrs_glue_admission_lock);
	if (rtrs_glue_admission_live)
		n = rtrs_core_admission_show(buf, PAGE_SIZE);
	mutex_unlock(&rtrs_glue_admission_lock);
	return n;
}

/*
 * The text goes to the core with its length, NUL bytes and all (the core
 * refuses a NUL: "line N: a NUL byte"). A whole page is refused here: it is
 * all sysfs hands over of a write, which may have been longer.
 */
static ssize_t rtrs_glue_admission_store(RTRS_MODULE_ATTR_CONST struct module_attribute *attr,
					 struct module_kobject *mk, const char *buf, size_t count)
{
	int err;

	if (count >= PAGE_SIZE) {
		pr_err("admission rules refused: a write of %lu bytes or more may have been cut (sysfs passes %lu of a write): nothing changed\n",
		       PAGE_SIZE, PAGE_SIZE);
		return -EINVAL;
	}
	mutex_lock(&rtrs_glue_admission_lock);
	err = rtrs_glue_admission_live ? rtrs_glue_admission_apply(buf, count, "") : -ENXIO;
	mutex_unlock(&rtrs_glue_admission_lock);
	return err ? err : count;
}

static struct module_attribute rtrs_glue_admission_attr =
	__ATTR(admission, 0644, rtrs_glue_admission_show, rtrs_glue_admission_store);

/* --- admission_close ----------------------------------------------------------- */

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

/* --- init and exit --------------------------------------------------------------- */

/* The rules given at load put in effect (and freed); the file's writes taken. */
static int rtrs_glue_admission_start(void)
{
	int err = 0;

	mutex_lock(&rtrs_glue_admission_lock);
	if (rtrs_glue_admission_at_load)
		err = rtrs_glue_admission_apply(rtrs_glue_admission_at_load,
						strlen(rtrs_glue_admission_at_load), " at load");
	kfree(rtrs_glue_admission_at_load);
	rtrs_glue_admission_at_load = NULL;
	rtrs_glue_admission_live = !err;
	mutex_unlock(&rtrs_glue_admission_lock);
	return err;
}

/* From here on the core is not reached, whatever is written. */
static void rtrs_glue_admission_stop(void)
{
	mutex_lock(&rtrs_glue_admission_lock);
	rtrs_glue_admission_live = false;
	mutex_unlock(&rtrs_glue_admission_lock);
}

int rtrs_glue_admission_init(void)
{
	int err = rtrs_glue_admission_start();

	if (err)
		return err;
	/* The parameters folder is there: admission_close has a file in it. */
	err = sysfs_add_file_to_group(&THIS_MODULE->mkobj.kobj, &rtrs_glue_admission_attr.attr,
				      "parameters");
	if (err) {
		pr_err("cannot add parameters/admission: %d\n", err);
		rtrs_glue_admission_stop();
	}
	return err;
}

void rtrs_glue_admission_exit(void)
{
	/* Waits for a read or write of it that is running; none starts after. */
	sysfs_remove_file_from_group(&THIS_MODULE->mkobj.kobj, &rtrs_glue_admission_attr.attr,
				     "parameters");
	rtrs_glue_admission_stop();
}
