// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs-server: module entry, parameters and the rtrs-server device class.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/device.h>
#include <linux/errno.h>
#include <linux/init.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "core/rtrs_core.h"
#include "rt/errno.h"

MODULE_DESCRIPTION("RDMA Transport (RTRS) server, out-of-tree C++ implementation");
MODULE_LICENSE("GPL");
MODULE_VERSION(RTRS_SERVER_VERSION);

/* Names, types, permissions and defaults are the upstream server's. */
static bool always_invalidate = true;
module_param(always_invalidate, bool, 0444);
MODULE_PARM_DESC(always_invalidate,
		 "Invalidate and re-register a chunk's memory registration on every I/O (default: Y)");

static int max_chunk_size = 128 << 10;
module_param(max_chunk_size, int, 0444);
MODULE_PARM_DESC(max_chunk_size,
		 "Size in bytes of one I/O buffer (chunk), headers included; a power of two >= 8192 (default: 131072)");

static int sess_queue_depth = 512;
module_param(sess_queue_depth, int, 0444);
MODULE_PARM_DESC(sess_queue_depth,
		 "Number of I/O buffers (chunks) per session, 1..65535 (default: 512)");

static struct class rtrs_srv_class = {
	.name = "rtrs-server",
};

/* The core spells errno values out; they must be the kernel's. */
#define RTRS_CHECK_ERRNO(macro, name, value) static_assert(macro == value, #macro);
RT_ERRNO_LIST(RTRS_CHECK_ERRNO)

static int __init rtrs_srv_init(void)
{
	char why[160];
	int err;

	err = rtrs_core_check_params(max_chunk_size, sess_queue_depth, why, sizeof(why));
	if (err) {
		pr_err("refusing to load: %s\n", why);
		return err;
	}

	err = class_register(&rtrs_srv_class);
	if (err) {
		pr_err("cannot register class %s: %d\n", rtrs_srv_class.name, err);
		return err;
	}

	pr_info("loaded %s: max_chunk_size %d, sess_queue_depth %d, always_invalidate %c\n",
		RTRS_SERVER_VERSION, max_chunk_size, sess_queue_depth,
		always_invalidate ? 'Y' : 'N');
	return 0;
}

static void __exit rtrs_srv_exit(void)
{
	class_unregister(&rtrs_srv_class);
	pr_info("unloaded\n");
}

module_init(rtrs_srv_init);
module_exit(rtrs_srv_exit);
