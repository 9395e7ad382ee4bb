// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs-null: the smallest upper layer of rtrs-server, for using and testing
 * the server on its own. Writes are accepted and dropped; reads return
 * zeros. Load after rtrs-server: insmod rtrs-server.ko && insmod rtrs-null.ko
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "rtrs/rtrs-srv.h"

MODULE_DESCRIPTION("Null upper layer for rtrs-server: drops writes, reads zeros");
MODULE_LICENSE("GPL");
MODULE_VERSION(RTRS_SERVER_VERSION);

static ushort port = 1234;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "RDMA CM port to listen on (default: 1234)");

static struct rtrs_srv_ctx *rtrs_null_ctx;

static int rtrs_null_rdma_ev(void *priv, struct rtrs_srv_op *id, void *data,
			     size_t datalen, const void *usr, size_t usrlen)
{
	/*
	 * The buffer is the request's chunk: for a write it holds the data
	 * (dropped), for a read it is what goes back, so zero it.
	 */
	memset(data, 0, datalen);
	rtrs_srv_resp_rdma(id, 0);
	return 0;
}

static int rtrs_null_link_ev(struct rtrs_srv_sess *sess, enum rtrs_srv_link_ev ev,
			     void *priv)
{
	char name[256];

	if (rtrs_srv_get_path_name(sess, name, sizeof(name)))
		strscpy(name, "?", sizeof(name));
	pr_info("session %s %s\n", name,
		ev == RTRS_SRV_LINK_EV_CONNECTED ? "connected" : "disconnected");
	return 0;
}

static struct rtrs_srv_ops rtrs_null_ops = {
	.rdma_ev = rtrs_null_rdma_ev,
	.link_ev = rtrs_null_link_ev,
};

static int __init rtrs_null_init(void)
{
	rtrs_null_ctx = rtrs_srv_open(&rtrs_null_ops, port);
	if (IS_ERR(rtrs_null_ctx)) {
		pr_err("cannot listen on port %u: %ld\n", port, PTR_ERR(rtrs_null_ctx));
		return PTR_ERR(rtrs_null_ctx);
	}
	return 0;
}

static void __exit rtrs_null_exit(void)
{
	rtrs_srv_close(rtrs_null_ctx);
}

module_init(rtrs_null_init);
module_exit(rtrs_null_exit);
