// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs-null: the smallest upper layer of rtrs-server, for using and testing
 * the server on its own. Writes are accepted and dropped; reads return
 * zeros. Load after rtrs-server: insmod rtrs-server.ko && insmod rtrs-null.ko
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "rtrs/rtrs-srv.h"

MODULE_DESCRIPTION("Null upper layer for rtrs-server: drops writes, reads zeros");
MODULE_LICENSE("GPL");
MODULE_VERSION(RTRS_SERVER_VERSION);

static ushort port = 1234;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "RDMA CM port to listen on (default: 1234)");

static unsigned int link_delay_ms;
module_param(link_delay_ms, uint, 0644);
MODULE_PARM_DESC(link_delay_ms,
		 "Sleep this long in each CONNECTED event before taking the session (tests; default 0)");

static unsigned int answer_delay_ms;
module_param(answer_delay_ms, uint, 0644);
MODULE_PARM_DESC(answer_delay_ms,
		 "Answer each I/O request this long after it came, from a work item, so that requests are in flight with the ULP (tests; default 0: at once)");

/* A request answered later (answer_delay_ms). */
struct rtrs_null_late {
	struct delayed_work dw;
	struct rtrs_srv_op *id;
};

static struct workqueue_struct *rtrs_null_wq;

static void rtrs_null_answer_late(struct work_struct *w)
{
	struct rtrs_null_late *late = container_of(to_delayed_work(w), struct rtrs_null_late, dw);

	rtrs_srv_resp_rdma(late->id, 0);
	kfree(late);
}

/*
 * What a session's priv says (rtrs_srv_set_sess_priv): NULL, never told of
 * it; connected, once its CONNECTED event is done with; gone, after its
 * DISCONNECTED. No I/O may come unless it is connected (FAILURES.md row
 * 24): such I/O is counted in early_io and logged (the first lines only).
 */
static char rtrs_null_connected, rtrs_null_gone;
static atomic_t early_io = ATOMIC_INIT(0);

static int early_io_get(char *buf, const struct kernel_param *kp)
{
	return sprintf(buf, "%d\n", atomic_read(&early_io));
}

static const struct kernel_param_ops early_io_ops = {
	.get = early_io_get,
};
module_param_cb(early_io, &early_io_ops, NULL, 0444);
MODULE_PARM_DESC(early_io,
		 "I/O requests that came for a session not connected (before CONNECTED or after DISCONNECTED)");

static struct rtrs_srv_ctx *rtrs_null_ctx;

/*
 * The upper-layer API of the kernel built for (include/rtrs/rtrs-srv.h):
 * 5.10's names the session struct rtrs_srv, passes it and the direction to
 * rdma_ev, and calls the name function rtrs_srv_get_sess_name.
 */
#ifdef RTRS_SRV_API_5_10
#define rtrs_null_sess rtrs_srv
#define rtrs_null_sess_name rtrs_srv_get_sess_name
static int rtrs_null_rdma_ev(struct rtrs_srv *sess, void *priv, struct rtrs_srv_op *id,
			     int dir, void *data, size_t datalen, const void *usr,
			     size_t usrlen)
#else
#define rtrs_null_sess rtrs_srv_sess
#define rtrs_null_sess_name rtrs_srv_get_path_name
static int rtrs_null_rdma_ev(void *priv, struct rtrs_srv_op *id, void *data,
			     size_t datalen, const void *usr, size_t usrlen)
#endif
{
	if (priv != &rtrs_null_connected) {
		int n = atomic_inc_return(&early_io);

		if (n <= 10)
			pr_err("I/O for a session %s (%d so far)\n",
			       priv == &rtrs_null_gone ? "after its DISCONNECTED" :
			       priv ? "of unknown state" : "before its CONNECTED", n);
	}
	/*
	 * The buffer is the request's chunk: for a write it holds the data
	 * (dropped), for a read it is what goes back, so zero it.
	 */
	memset(data, 0, datalen);
	if (answer_delay_ms) {
		/* Completion context: no sleeping allocation. */
		struct rtrs_null_late *late = kmalloc(sizeof(*late), GFP_ATOMIC);

		if (late) {
			late->id = id;
			INIT_DELAYED_WORK(&late->dw, rtrs_null_answer_late);
			queue_delayed_work(rtrs_null_wq, &late->dw,
					   msecs_to_jiffies(answer_delay_ms));
			return 0;
		}
	}
	rtrs_srv_resp_rdma(id, 0);
	return 0;
}

static int rtrs_null_link_ev(struct rtrs_null_sess *sess, enum rtrs_srv_link_ev ev,
			     void *priv)
{
	char name[256];

	if (rtrs_null_sess_name(sess, name, sizeof(name)))
		strscpy(name, "?", sizeof(name));
	if (ev == RTRS_SRV_LINK_EV_CONNECTED && link_delay_ms) {
		pr_info("session %s: delaying CONNECTED by %u ms\n", name, link_delay_ms);
		msleep(link_delay_ms);
	}
	pr_info("session %s %s\n", name,
		ev == RTRS_SRV_LINK_EV_CONNECTED ? "connected" : "disconnected");
	rtrs_srv_set_sess_priv(sess, ev == RTRS_SRV_LINK_EV_CONNECTED ?
			       &rtrs_null_connected : &rtrs_null_gone);
	return 0;
}

static struct rtrs_srv_ops rtrs_null_ops = {
	.rdma_ev = rtrs_null_rdma_ev,
	.link_ev = rtrs_null_link_ev,
};

static int __init rtrs_null_init(void)
{
	rtrs_null_wq = alloc_workqueue("rtrs_null", WQ_UNBOUND, 0);
	if (!rtrs_null_wq)
		return -ENOMEM;
	rtrs_null_ctx = rtrs_srv_open(&rtrs_null_ops, port);
	if (IS_ERR(rtrs_null_ctx)) {
		pr_err("cannot listen on port %u: %ld\n", port, PTR_ERR(rtrs_null_ctx));
		destroy_workqueue(rtrs_null_wq);
		return PTR_ERR(rtrs_null_ctx);
	}
	return 0;
}

/* The server's close waits for the answers still due: none is left after. */
static void __exit rtrs_null_exit(void)
{
	rtrs_srv_close(rtrs_null_ctx);
	destroy_workqueue(rtrs_null_wq);
}

module_init(rtrs_null_init);
module_exit(rtrs_null_exit);
