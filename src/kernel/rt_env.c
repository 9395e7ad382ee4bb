// SPDX-License-Identifier: GPL-2.0
/*
 * The services of src/rt/env.h on top of the kernel.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/printk.h>
#include <linux/slab.h>

#include "rt/env.h"

void *rtrs_env_alloc(size_t size, unsigned int gfp)
{
	return kzalloc(size, gfp == RTRS_ENV_GFP_ATOMIC ? GFP_ATOMIC : GFP_KERNEL);
}

void rtrs_env_free(void *ptr)
{
	kfree(ptr);
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

void rtrs_env_warn(const char *what)
{
	WARN(1, KBUILD_MODNAME ": %s\n", what);
}

/*
 * Never set. It keeps a visible return path in rtrs_env_fatal(): the C++
 * callers cannot be told that it does not return (objtool checks C++
 * objects one by one on 6.1 and would call the code after the call a
 * fall-through), and on 6.12 objtool, which sees the whole module, insists
 * that a function that never returns be annotated so.
 */
static bool rtrs_env_fatal_returns;

void rtrs_env_fatal(const char *what)
{
	pr_emerg("fatal: %s\n", what);
	if (!READ_ONCE(rtrs_env_fatal_returns))
		BUG();
}
