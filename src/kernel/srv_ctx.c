// SPDX-License-Identifier: GPL-2.0
/*
 * Server contexts (rtrs_srv_open/rtrs_srv_close), the RDMA CM event handler,
 * and the rest of the exported upper-layer API.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in6.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "kernel/srv.h"

static LIST_HEAD(rtrs_srv_ctxs);
static DEFINE_MUTEX(rtrs_srv_ctxs_lock);

static int rtrs_srv_cm_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev)
{
	struct rtrs_srv_con *con;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return rtrs_srv_handle_connect(cm_id->context, cm_id,
					       ev->param.conn.private_data,
					       ev->param.conn.private_data_len);

	if (*(enum rtrs_srv_cm_kind *)cm_id->context != RTRS_SRV_CM_CON) {
		/* the listener: it is not bound to a device, so this is news */
		pr_info("listener: ignoring %s (%d)\n", rdma_event_msg(ev->event), ev->status);
		return 0;
	}
	con = cm_id->context;
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		pr_err("%s: connection %u: %s (%d)\n", con->path->name, con->cid,
		       rdma_event_msg(ev->event), ev->status);
		fallthrough;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * For DEVICE_REMOVAL the device's removal waits for this cm_id to
		 * be destroyed, which close_work does; returning non-zero here
		 * would destroy it under the path's feet.
		 */
		rtrs_srv_close_path(con->path);
		break;
	default:
		pr_info("%s: connection %u: ignoring %s\n", con->path->name, con->cid,
			rdma_event_msg(ev->event));
		break;
	}
	return 0;
}

static int rtrs_srv_listen(struct rtrs_srv_ctx *ctx)
{
	/* in6addr_any takes IPv4 clients too (bindv6only is off by default). */
	struct sockaddr_in6 any = {
		.sin6_family = AF_INET6,
		.sin6_addr = IN6ADDR_ANY_INIT,
		.sin6_port = htons(ctx->port),
	};
	struct rdma_cm_id *id;
	int err;

	id = rdma_create_id(&init_net, rtrs_srv_cm_handler, ctx, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	err = rdma_bind_addr(id, (struct sockaddr *)&any);
	if (err) {
		pr_err("cannot bind to port %u: %d\n", ctx->port, err);
		goto destroy;
	}
	err = rdma_listen(id, 64);
	if (err) {
		pr_err("cannot listen on port %u: %d\n", ctx->port, err);
		goto destroy;
	}
	ctx->listen_id = id;
	return 0;
destroy:
	rdma_destroy_id(id);
	return err;
}

struct rtrs_srv_ctx *rtrs_srv_open(struct rtrs_srv_ops *ops, u16 port)
{
	struct rtrs_srv_ctx *ctx;
	int err;

	if (!ops || !ops->rdma_ev || !ops->link_ev)
		return ERR_PTR(-EINVAL);
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return ERR_PTR(-ENOMEM);
	ctx->kind = RTRS_SRV_CM_LISTEN;
	ctx->ops = *ops;
	ctx->port = port;
	mutex_init(&ctx->lock);
	INIT_LIST_HEAD(&ctx->sessions);
	err = rtrs_srv_listen(ctx);
	if (err) {
		mutex_destroy(&ctx->lock);
		kfree(ctx);
		return ERR_PTR(err);
	}
	mutex_lock(&rtrs_srv_ctxs_lock);
	list_add_tail(&ctx->entry, &rtrs_srv_ctxs);
	mutex_unlock(&rtrs_srv_ctxs_lock);
	pr_info("listening on port %u\n", port);
	return ctx;
}
EXPORT_SYMBOL(rtrs_srv_open);

void rtrs_srv_close(struct rtrs_srv_ctx *ctx)
{
	/* No new connection requests, then close what exists and wait. */
	rdma_destroy_id(ctx->listen_id);
	rtrs_srv_close_ctx_paths(ctx);
	flush_workqueue(rtrs_srv_wq);

	mutex_lock(&rtrs_srv_ctxs_lock);
	list_del(&ctx->entry);
	mutex_unlock(&rtrs_srv_ctxs_lock);
	WARN_ON(!list_empty(&ctx->sessions));
	mutex_destroy(&ctx->lock);
	pr_info("stopped listening on port %u\n", ctx->port);
	kfree(ctx);
}
EXPORT_SYMBOL(rtrs_srv_close);

/* Closes every path on a device that is going away. */
void rtrs_srv_close_dev_paths(struct ib_device *ib_dev)
{
	struct rtrs_srv_ctx *ctx;
	struct rtrs_srv_sess *sess;
	struct rtrs_srv_path *path;

	mutex_lock(&rtrs_srv_ctxs_lock);
	list_for_each_entry(ctx, &rtrs_srv_ctxs, entry) {
		mutex_lock(&ctx->lock);
		list_for_each_entry(sess, &ctx->sessions, entry)
			list_for_each_entry(path, &sess->paths, entry)
				if (path->dev->ib_dev == ib_dev)
					rtrs_srv_close_path(path);
		mutex_unlock(&ctx->lock);
	}
	mutex_unlock(&rtrs_srv_ctxs_lock);
}

void rtrs_srv_set_sess_priv(struct rtrs_srv_sess *sess, void *priv)
{
	sess->priv = priv;
}
EXPORT_SYMBOL(rtrs_srv_set_sess_priv);

/* As upstream: the name once a path is up (else -ENOTCONN), cut to fit. */
int rtrs_srv_get_path_name(struct rtrs_srv_sess *sess, char *pathname, size_t len)
{
	if (!sess->name[0])
		return -ENOTCONN;
	strscpy(pathname, sess->name, len);
	return 0;
}
EXPORT_SYMBOL(rtrs_srv_get_path_name);

int rtrs_srv_get_queue_depth(struct rtrs_srv_sess *sess)
{
	return sess->queue_depth;
}
EXPORT_SYMBOL(rtrs_srv_get_queue_depth);
