/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels the glue builds for (Debian's 5.10, 6.1,
 * 6.12 and 7.2), in one place. Each difference is tested where the kernel
 * shows it (Kbuild greps the headers for it, as RTRS_HAVE_*); the kernel's
 * version decides only the upper layer's API (include/rtrs/rtrs-srv.h),
 * which no header of the kernel tells.
 */
#ifndef RTRS_KERNEL_COMPAT_H
#define RTRS_KERNEL_COMPAT_H

#include <linux/workqueue.h>

/*
 * A workqueue bound to the CPU that queues, as every kernel's default was;
 * 6.17 made that a flag (WQ_PERCPU), and 7.x warns when a workqueue says
 * neither it nor WQ_UNBOUND.
 */
#ifdef RTRS_HAVE_WQ_PERCPU
#define RTRS_WQ_PERCPU WQ_PERCPU
#else
#define RTRS_WQ_PERCPU 0
#endif

/*
 * A module attribute's show() and store() (the module's own files in
 * /sys/module/<name>/) take it const from 6.14 on.
 */
#ifdef RTRS_HAVE_CONST_MODULE_ATTR
#define RTRS_MODULE_ATTR_CONST const
#else
#define RTRS_MODULE_ATTR_CONST
#endif

#endif /* RTRS_KERNEL_COMPAT_H */
