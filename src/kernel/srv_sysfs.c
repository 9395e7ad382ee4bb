// SPDX-License-Identifier: GPL-2.0
/*
 * The rtrs-server sysfs ABI:
 *   /sys/class/rtrs-server/<session>/paths/<client>@<server>/
 *       hca_name hca_port src_addr dst_addr disconnect stats/rdma
 * The session device is added with the session's first path in sysfs and
 * deleted with its last one. Callers hold ctx->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <rdma/ib.h>

#include "core/rtrs_core.h"
#include "kernel/srv.h"

int rtrs_srv_format_addr(const struct sockaddr *addr, char *buf, size_t len)
{
	switch (addr->sa_family) {
	case AF_INET:
		return scnprintf(buf, len, "ip:%pI4",
				 &((const struct sockaddr_in *)addr)->sin_addr);
	case AF_INET6:
		return scnprintf(buf, len, "ip:%pI6c",
				 &((const struct sockaddr_in6 *)addr)->sin6_addr);
	case AF_IB:
		return scnprintf(buf, len, "gid:%pI6",
				 &((const struct sockaddr_ib *)addr)->sib_addr);
	}
	return scnprintf(buf, len, "<unknown address family %u>", addr->sa_family);
}

static struct rtrs_srv_path *to_path(struct kobject *kobj)
{
	return container_of(kobj, struct rtrs_srv_path, kobj);
}

static ssize_t hca_name_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%s\n", dev_name(&to_path(kobj)->dev->ib_dev->dev));
}

static ssize_t hca_port_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%u\n", to_path(kobj)->hca_port);
}

/* src_addr is where the path starts: the client. */
static ssize_t src_addr_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	int n = rtrs_srv_format_addr((struct sockaddr *)&to_path(kobj)->client_addr,
				     buf, PAGE_SIZE);

	return n + sysfs_emit_at(buf, n, "\n");
}

static ssize_t dst_addr_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	int n = rtrs_srv_format_addr((struct sockaddr *)&to_path(kobj)->server_addr,
				     buf, PAGE_SIZE);

	return n + sysfs_emit_at(buf, n, "\n");
}

static ssize_t disconnect_show(struct kobject *kobj, struct kobj_attribute *attr,
			       char *buf)
{
	return sysfs_emit(buf, "Usage: echo 1 > %s\n", attr->attr.name);
}

/*
 * Only starts the teardown: close_work removes this very file later, and
 * that removal waits for this store to return, so nothing here may wait
 * for close_work.
 */
static ssize_t disconnect_store(struct kobject *kobj, struct kobj_attribute *attr,
				const char *buf, size_t count)
{
	struct rtrs_srv_path *path = to_path(kobj);

	if (rtrs_core_parse_one(buf, count) != 0)
		return -EINVAL;
	pr_info("%s: disconnect of path %s requested\n", path->sess->name, path->name);
	rtrs_srv_close_path(path);
	return count;
}

static struct kobj_attribute hca_name_attr = __ATTR_RO(hca_name);
static struct kobj_attribute hca_port_attr = __ATTR_RO(hca_port);
static struct kobj_attribute src_addr_attr = __ATTR_RO(src_addr);
static struct kobj_attribute dst_addr_attr = __ATTR_RO(dst_addr);
static struct kobj_attribute disconnect_attr = __ATTR_RW(disconnect);

static struct attribute *rtrs_srv_path_attrs[] = {
	&hca_name_attr.attr,
	&hca_port_attr.attr,
	&src_addr_attr.attr,
	&dst_addr_attr.attr,
	&disconnect_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(rtrs_srv_path);

static struct rtrs_srv_path *stats_to_path(struct kobject *kobj)
{
	return container_of(kobj, struct rtrs_srv_stats_kobj, kobj)->path;
}

static ssize_t rdma_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	struct rtrs_srv_stats *s = &stats_to_path(kobj)->stats;
	int n;

	n = rtrs_core_format_rdma_stats(buf, PAGE_SIZE,
					atomic64_read(&s->read_cnt),
					atomic64_read(&s->read_bytes),
					atomic64_read(&s->write_cnt),
					atomic64_read(&s->write_bytes),
					atomic_read(&s->inflight));
	return n;
}

/* "1" zeroes the four counters; the inflight count is not a counter. */
static ssize_t rdma_store(struct kobject *kobj, struct kobj_attribute *attr,
			  const char *buf, size_t count)
{
	struct rtrs_srv_stats *s = &stats_to_path(kobj)->stats;

	if (rtrs_core_parse_one(buf, count) != 0)
		return -EINVAL;
	atomic64_set(&s->read_cnt, 0);
	atomic64_set(&s->read_bytes, 0);
	atomic64_set(&s->write_cnt, 0);
	atomic64_set(&s->write_bytes, 0);
	return count;
}

static struct kobj_attribute rdma_attr = __ATTR_RW(rdma);

static struct attribute *rtrs_srv_stats_attrs[] = {
	&rdma_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(rtrs_srv_stats);

/* The path is freed with its kobject; see rtrs_srv_sysfs_put_path(). */
static void rtrs_srv_path_release(struct kobject *kobj)
{
	kfree(to_path(kobj));
}

/* Its own memory only: the path may be long gone by now. */
static void rtrs_srv_stats_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct rtrs_srv_stats_kobj, kobj));
}

static struct kobj_type rtrs_srv_path_ktype = {
	.sysfs_ops = &kobj_sysfs_ops,
	.release = rtrs_srv_path_release,
	.default_groups = rtrs_srv_path_groups,
};

static struct kobj_type rtrs_srv_stats_ktype = {
	.sysfs_ops = &kobj_sysfs_ops,
	.release = rtrs_srv_stats_release,
	.default_groups = rtrs_srv_stats_groups,
};

static void rtrs_srv_sess_dev_release(struct device *dev)
{
	struct rtrs_srv_sess *sess = container_of(dev, struct rtrs_srv_sess, dev);

	kfree(sess);
}

/* The session is freed by put_device() from here on, added or not. */
void rtrs_srv_sysfs_init_sess(struct rtrs_srv_sess *sess)
{
	device_initialize(&sess->dev);
	sess->dev.class = rtrs_srv_class;
	sess->dev.release = rtrs_srv_sess_dev_release;
}

static int rtrs_srv_sysfs_add_sess(struct rtrs_srv_sess *sess)
{
	int err;

	if (sess->dev_added)
		return 0;
	err = dev_set_name(&sess->dev, "%s", sess->name);
	if (err)
		return err;
	/* Announce the device once its paths/ folder exists. */
	dev_set_uevent_suppress(&sess->dev, true);
	err = device_add(&sess->dev);
	if (err) {
		pr_err("%s: cannot add the session device: %d\n", sess->name, err);
		return err;
	}
	sess->paths_kobj = kobject_create_and_add("paths", &sess->dev.kobj);
	if (!sess->paths_kobj) {
		device_del(&sess->dev);
		return -ENOMEM;
	}
	dev_set_uevent_suppress(&sess->dev, false);
	kobject_uevent(&sess->dev.kobj, KOBJ_ADD);
	sess->dev_added = true;
	return 0;
}

static void rtrs_srv_sysfs_remove_sess(struct rtrs_srv_sess *sess)
{
	kobject_del(sess->paths_kobj);
	kobject_put(sess->paths_kobj);
	sess->paths_kobj = NULL;
	device_del(&sess->dev);	/* sends the remove uevent */
	sess->dev_added = false;
}

/* Whether any other path of the session is in sysfs. */
static bool rtrs_srv_sess_has_sysfs_paths(struct rtrs_srv_sess *sess,
					  struct rtrs_srv_path *except)
{
	struct rtrs_srv_path *p;

	list_for_each_entry(p, &sess->paths, entry)
		if (p != except && p->kobj_added)
			return true;
	return false;
}

void rtrs_srv_sysfs_init_path(struct rtrs_srv_path *path)
{
	kobject_init(&path->kobj, &rtrs_srv_path_ktype);
}

int rtrs_srv_sysfs_add_path(struct rtrs_srv_path *path)
{
	struct rtrs_srv_sess *sess = path->sess;
	struct rtrs_srv_stats_kobj *stats;
	int err;

	err = rtrs_srv_sysfs_add_sess(sess);
	if (err)
		return err;
	err = kobject_add(&path->kobj, sess->paths_kobj, "%s", path->name);
	if (err) {
		pr_err("%s: cannot add path %s to sysfs: %d\n", sess->name, path->name, err);
		goto remove_sess;
	}
	path->kobj_added = true;
	stats = kzalloc(sizeof(*stats), GFP_KERNEL);
	if (!stats) {
		err = -ENOMEM;
		goto remove_path;
	}
	stats->path = path;
	err = kobject_init_and_add(&stats->kobj, &rtrs_srv_stats_ktype, &path->kobj, "stats");
	if (err) {
		pr_err("%s: cannot add stats of path %s: %d\n", sess->name, path->name, err);
		kobject_put(&stats->kobj);	/* its release frees it */
		goto remove_path;
	}
	path->stats_kobj = stats;
	return 0;

remove_path:
	rtrs_srv_sysfs_remove_path(path);
	return err;
remove_sess:
	if (!rtrs_srv_sess_has_sysfs_paths(sess, path))
		rtrs_srv_sysfs_remove_sess(sess);
	return err;
}

/* Removes the path's files (and the session's, with its last path). */
void rtrs_srv_sysfs_remove_path(struct rtrs_srv_path *path)
{
	struct rtrs_srv_sess *sess = path->sess;

	if (path->stats_kobj) {
		kobject_del(&path->stats_kobj->kobj);
		kobject_put(&path->stats_kobj->kobj);
		path->stats_kobj = NULL;
	}
	if (path->kobj_added) {
		kobject_del(&path->kobj);
		path->kobj_added = false;
		if (!rtrs_srv_sess_has_sysfs_paths(sess, path))
			rtrs_srv_sysfs_remove_sess(sess);
	}
}

/* Drops the path's last reference: frees it. */
void rtrs_srv_sysfs_put_path(struct rtrs_srv_path *path)
{
	kobject_put(&path->kobj);
}
