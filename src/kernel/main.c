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
#include <linux/version.h>

#include "core/rtrs_core.h"
#include "kernel/srv.h"
#include "rt/errno.h"

MODULE_DESCRIPTION("RDMA Transport (RTRS) server, out-of-tree C++ implementation");
MODULE_LICENSE("GPL");
MODULE_VERSION(RTRS_SERVER_VERSION);

/* Names, types, permissions and defaults are the upstream server's. */
bool rtrs_srv_always_invalidate = true;
module_param_named(always_invalidate, rtrs_srv_always_invalidate, bool, 0444);
MODULE_PARM_DESC(always_invalidate,
		 "Invalidate and re-register a chunk's memory registration on every I/O (default: Y)");

int rtrs_srv_max_chunk_size = 128 << 10;
module_param_named(max_chunk_size, rtrs_srv_max_chunk_size, int, 0444);
MODULE_PARM_DESC(max_chunk_size,
		 "Size in bytes of one I/O buffer (chunk), headers included; a power of two >= 8192 (default: 131072)");

int rtrs_srv_sess_queue_depth = 512;
module_param_named(sess_queue_depth, rtrs_srv_sess_queue_depth, int, 0444);
MODULE_PARM_DESC(sess_queue_depth,
		 "Number of I/O buffers (chunks) per session, 1..65535 (default: 512)");

/*
 * Made by class_create(), not a static struct class: the class's release may
 * run after the module is gone (CONFIG_DEBUG_KOBJECT_RELEASE delays it by
 * seconds), and then it must not find the class in the module's memory.
 */
struct class *rtrs_srv_class;

struct class *rtrs_srv_class_create(const char *name)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 4, 0)
	return class_create(THIS_MODULE, name);
#else
	return class_create(name);
#endif
}

/* Path setup and teardown; not ordered, so a teardown can wait for a setup. */
struct workqueue_struct *rtrs_srv_wq;

/* The core spells errno values out; they must be the kernel's. */
#define RTRS_CHECK_ERRNO(macro, name, value) static_assert(macro == value, #macro);
RT_ERRNO_LIST(RTRS_CHECK_ERRNO)

static int __init rtrs_srv_init(void)
{
	char why[160];
	int err;

	err = rtrs_core_check_params(rtrs_srv_max_chunk_size, rtrs_srv_sess_queue_depth,
				     why, sizeof(why));
	if (err) {
		pr_err("refusing to load: %s\n", why);
		return err;
	}

	rtrs_srv_class = rtrs_srv_class_create("rtrs-server");
	if (IS_ERR(rtrs_srv_class)) {
		err = PTR_ERR(rtrs_srv_class);
		pr_err("cannot register class rtrs-server: %d\n", err);
		return err;
	}
	rtrs_srv_wq = alloc_workqueue("rtrs_server", 0, 0);
	if (!rtrs_srv_wq) {
		err = -ENOMEM;
		goto unregister_class;
	}
	err = rtrs_srv_dev_init();
	if (err) {
		pr_err("cannot register as an RDMA client: %d\n", err);
		goto destroy_wq;
	}

	pr_info("loaded %s: max_chunk_size %d, sess_queue_depth %d, always_invalidate %c\n",
		RTRS_SERVER_VERSION, rtrs_srv_max_chunk_size, rtrs_srv_sess_queue_depth,
		rtrs_srv_always_invalidate ? 'Y' : 'N');
	return 0;

destroy_wq:
	destroy_workqueue(rtrs_srv_wq);
unregister_class:
	class_destroy(rtrs_srv_class);
	return err;
}

static void __exit rtrs_srv_exit(void)
{
	rtrs_srv_dev_exit();
	destroy_workqueue(rtrs_srv_wq);
	class_destroy(rtrs_srv_class);
	pr_info("unloaded\n");
}

module_init(rtrs_srv_init);
module_exit(rtrs_srv_exit);
