// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA devices in use: one protection domain per device, shared by every
 * path on it and released with the last one. An ib_client tells us when a
 * device goes away, so that its paths are closed (and their cm_ids, QPs and
 * PD released) before the device is.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "kernel/srv.h"

static LIST_HEAD(rtrs_srv_devs);
static DEFINE_MUTEX(rtrs_srv_devs_lock);

struct rtrs_srv_dev *rtrs_srv_dev_get(struct ib_device *ib_dev)
{
	struct rtrs_srv_dev *dev;

	mutex_lock(&rtrs_srv_devs_lock);
	list_for_each_entry(dev, &rtrs_srv_devs, entry) {
		if (dev->ib_dev == ib_dev && kref_get_unless_zero(&dev->ref))
			goto out;
	}
	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		goto out;
	dev->pd = ib_alloc_pd(ib_dev, 0);
	if (IS_ERR(dev->pd)) {
		pr_err("%s: cannot allocate a protection domain: %ld\n",
		       dev_name(&ib_dev->dev), PTR_ERR(dev->pd));
		kfree(dev);
		dev = NULL;
		goto out;
	}
	dev->ib_dev = ib_dev;
	kref_init(&dev->ref);
	list_add(&dev->entry, &rtrs_srv_devs);
out:
	mutex_unlock(&rtrs_srv_devs_lock);
	return dev;
}

static void rtrs_srv_dev_release(struct kref *ref)
{
	struct rtrs_srv_dev *dev = container_of(ref, struct rtrs_srv_dev, ref);

	list_del(&dev->entry);
	ib_dealloc_pd(dev->pd);
	kfree(dev);
}

void rtrs_srv_dev_put(struct rtrs_srv_dev *dev)
{
	mutex_lock(&rtrs_srv_devs_lock);
	kref_put(&dev->ref, rtrs_srv_dev_release);
	mutex_unlock(&rtrs_srv_devs_lock);
}

static int rtrs_srv_ib_add(struct ib_device *ib_dev)
{
	return 0;
}

/* Called before the device goes; must not return while we still use it. */
static void rtrs_srv_ib_remove(struct ib_device *ib_dev, void *client_data)
{
	rtrs_srv_close_dev_paths(ib_dev);
	flush_workqueue(rtrs_srv_wq);
}

static struct ib_client rtrs_srv_ib_client = {
	.name = "rtrs_server",
	.add = rtrs_srv_ib_add,
	.remove = rtrs_srv_ib_remove,
};

int rtrs_srv_dev_init(void)
{
	return ib_register_client(&rtrs_srv_ib_client);
}

void rtrs_srv_dev_exit(void)
{
	ib_unregister_client(&rtrs_srv_ib_client);
	WARN_ON(!list_empty(&rtrs_srv_devs));
}
