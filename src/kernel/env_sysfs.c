// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel environment, part three: the rtrs-server class and its files.
 *   /sys/class/rtrs-server/<session>/paths/<client>@<server>/
 *       hca_name hca_port src_addr dst_addr disconnect stats/rdma
 * Every kobject here is allocated on its own and freed by its own release,
 * which may run long after it left sysfs (CONFIG_DEBUG_KOBJECT_RELEASE
 * delays each by seconds): no memory holding a kobject is freed otherwise.
 * The files' show and store ask the core; they can only run while the file
 * exists, and kobject_del() waits for those running.
 * The calls that can fail are RTRS_INJECTABLE (glue.h): in the test build
 * the fault suite (test/fault) makes each fail in turn through fail_function.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/wait_bit.h>
#include <linux/version.h>

#include "core/env.h"
#include "kernel/glue.h"

/*
 * Our kobjects not yet released. Their releases are code of this module,
 * and may run seconds after the last put (CONFIG_DEBUG_KOBJECT_RELEASE):
 * the module's exit waits for them.
 */
static atomic_t rtrs_glue_sysfs_live = ATOMIC_INIT(0);

static void rtrs_glue_sysfs_made(void)
{
	atomic_inc(&rtrs_glue_sysfs_live);
}

/* The last thing a release does. */
static void rtrs_glue_sysfs_released(void)
{
	if (atomic_dec_and_test(&rtrs_glue_sysfs_live))
		wake_up_var(&rtrs_glue_sysfs_live);
}

/*
 * Made by class_create(), not a static struct class: the class's release may
 * run after the module is gone (CONFIG_DEBUG_KOBJECT_RELEASE delays it by
 * seconds), and then it must not find the class in the module's memory.
 */
static struct class *rtrs_glue_class;

/* --- a session: a device in the class, with its paths/ folder --------------------- */

struct rtrs_env_sysfs_sess {
	struct device dev;
	struct kobject *paths;
};

static void rtrs_glue_sess_release(struct device *dev)
{
	kfree(container_of(dev, struct rtrs_env_sysfs_sess, dev));
	rtrs_glue_sysfs_released();
}

RTRS_INJECTABLE_FN int rtrs_env_sysfs_sess_add(const char *name, struct rtrs_env_sysfs_sess **out)
{
	struct rtrs_env_sysfs_sess *s;
	int err;

	might_sleep();
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	device_initialize(&s->dev);	/* from here on freed by its put */
	rtrs_glue_sysfs_made();
	s->dev.class = rtrs_glue_class;
	s->dev.release = rtrs_glue_sess_release;
	err = dev_set_name(&s->dev, "%s", name);
	if (err)
		goto put;
	/* Announced once its paths/ folder exists. */
	dev_set_uevent_suppress(&s->dev, true);
	err = device_add(&s->dev);
	if (err)
		goto put;
	s->paths = kobject_create_and_add("paths", &s->dev.kobj);
	if (!s->paths) {
		err = -ENOMEM;
		device_del(&s->dev);
		goto put;
	}
	dev_set_uevent_suppress(&s->dev, false);
	kobject_uevent(&s->dev.kobj, KOBJ_ADD);
	*out = s;
	return 0;
put:
	put_device(&s->dev);
	return err;
}
RTRS_INJECTABLE(rtrs_env_sysfs_sess_add, ERRNO);

void rtrs_env_sysfs_sess_del(struct rtrs_env_sysfs_sess *s)
{
	kobject_del(s->paths);
	kobject_put(s->paths);
	device_del(&s->dev);	/* sends the remove uevent */
	put_device(&s->dev);
}

/* --- a path and its stats/ -------------------------------------------------------- */

struct rtrs_glue_stats {
	struct kobject kobj;
	void *core_path;
};

struct rtrs_env_sysfs_path {
	struct kobject kobj;
	void *core_path;
	struct rtrs_glue_stats *stats;
};

static void *rtrs_glue_path_of(struct kobject *kobj)
{
	return container_of(kobj, struct rtrs_env_sysfs_path, kobj)->core_path;
}

static void *rtrs_glue_stats_of(struct kobject *kobj)
{
	return container_of(kobj, struct rtrs_glue_stats, kobj)->core_path;
}

static ssize_t rtrs_glue_show(void *core_path, enum rtrs_core_path_attr attr, char *buf)
{
	return rtrs_core_path_show(core_path, attr, buf, PAGE_SIZE);
}

static ssize_t rtrs_glue_store(void *core_path, enum rtrs_core_path_attr attr, const char *buf,
			       size_t count)
{
	int err = rtrs_core_path_store(core_path, attr, buf, count);

	return err < 0 ? err : count;
}

#define RTRS_GLUE_SHOW(name, attr)							\
static ssize_t name##_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)	\
{											\
	return rtrs_glue_show(rtrs_glue_path_of(kobj), attr, buf);			\
}

RTRS_GLUE_SHOW(hca_name, RTRS_CORE_ATTR_HCA_NAME)
RTRS_GLUE_SHOW(hca_port, RTRS_CORE_ATTR_HCA_PORT)
RTRS_GLUE_SHOW(src_addr, RTRS_CORE_ATTR_SRC_ADDR)
RTRS_GLUE_SHOW(dst_addr, RTRS_CORE_ATTR_DST_ADDR)
RTRS_GLUE_SHOW(disconnect, RTRS_CORE_ATTR_DISCONNECT)

static ssize_t disconnect_store(struct kobject *kobj, struct kobj_attribute *a, const char *buf,
				size_t count)
{
	return rtrs_glue_store(rtrs_glue_path_of(kobj), RTRS_CORE_ATTR_DISCONNECT, buf, count);
}

static ssize_t rdma_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	return rtrs_glue_show(rtrs_glue_stats_of(kobj), RTRS_CORE_ATTR_STATS_RDMA, buf);
}

static ssize_t rdma_store(struct kobject *kobj, struct kobj_attribute *a, const char *buf,
			  size_t count)
{
	return rtrs_glue_store(rtrs_glue_stats_of(kobj), RTRS_CORE_ATTR_STATS_RDMA, buf, count);
}

static struct kobj_attribute hca_name_attr = __ATTR_RO(hca_name);
static struct kobj_attribute hca_port_attr = __ATTR_RO(hca_port);
static struct kobj_attribute src_addr_attr = __ATTR_RO(src_addr);
static struct kobj_attribute dst_addr_attr = __ATTR_RO(dst_addr);
static struct kobj_attribute disconnect_attr = __ATTR_RW(disconnect);
static struct kobj_attribute rdma_attr = __ATTR_RW(rdma);

static struct attribute *rtrs_glue_path_attrs[] = {
	&hca_name_attr.attr,
	&hca_port_attr.attr,
	&src_addr_attr.attr,
	&dst_addr_attr.attr,
	&disconnect_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(rtrs_glue_path);

static struct attribute *rtrs_glue_stats_attrs[] = {
	&rdma_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(rtrs_glue_stats);

static void rtrs_glue_path_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct rtrs_env_sysfs_path, kobj));
	rtrs_glue_sysfs_released();
}

static void rtrs_glue_stats_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct rtrs_glue_stats, kobj));
	rtrs_glue_sysfs_released();
}

static struct kobj_type rtrs_glue_path_ktype = {
	.sysfs_ops = &kobj_sysfs_ops,
	.release = rtrs_glue_path_release,
	.default_groups = rtrs_glue_path_groups,
};

static struct kobj_type rtrs_glue_stats_ktype = {
	.sysfs_ops = &kobj_sysfs_ops,
	.release = rtrs_glue_stats_release,
	.default_groups = rtrs_glue_stats_groups,
};

RTRS_INJECTABLE_FN int rtrs_env_sysfs_path_add(struct rtrs_env_sysfs_sess *s, const char *name,
					       void *core_path, struct rtrs_env_sysfs_path **out)
{
	struct rtrs_env_sysfs_path *p;
	struct rtrs_glue_stats *st;
	int err;

	might_sleep();
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->core_path = core_path;
	rtrs_glue_sysfs_made();
	err = kobject_init_and_add(&p->kobj, &rtrs_glue_path_ktype, s->paths, "%s", name);
	if (err)
		goto put_path;
	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st) {
		err = -ENOMEM;
		goto del_path;
	}
	st->core_path = core_path;
	rtrs_glue_sysfs_made();
	err = kobject_init_and_add(&st->kobj, &rtrs_glue_stats_ktype, &p->kobj, "stats");
	if (err) {
		kobject_put(&st->kobj);
		goto del_path;
	}
	p->stats = st;
	*out = p;
	return 0;
del_path:
	kobject_del(&p->kobj);
put_path:
	kobject_put(&p->kobj);
	return err;
}
RTRS_INJECTABLE(rtrs_env_sysfs_path_add, ERRNO);

void rtrs_env_sysfs_path_del(struct rtrs_env_sysfs_path *p)
{
	kobject_del(&p->stats->kobj);
	kobject_put(&p->stats->kobj);
	kobject_del(&p->kobj);
	kobject_put(&p->kobj);
}

int rtrs_glue_sysfs_init(void)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 4, 0)
	rtrs_glue_class = class_create(THIS_MODULE, "rtrs-server");
#else
	rtrs_glue_class = class_create("rtrs-server");
#endif
	return PTR_ERR_OR_ZERO(rtrs_glue_class);
}

void rtrs_glue_sysfs_exit(void)
{
	wait_var_event(&rtrs_glue_sysfs_live, !atomic_read(&rtrs_glue_sysfs_live));
	class_destroy(rtrs_glue_class);
}
