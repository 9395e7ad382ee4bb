// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs-server: the module (parameters, setup, teardown) and the six
 * functions an upper layer (ULP) calls, each handed to the core as it is.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/errno.h>
#include <linux/init.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "core/env.h"
#include "core/rtrs_core.h"
#include "kernel/glue.h"
#include "rt/errno.h"
#include "rtrs/rtrs-srv.h"

MODULE_DESCRIPTION("RDMA Transport (RTRS) server, out-of-tree C++ implementation");
MODULE_LICENSE("GPL");
MODULE_VERSION(RTRS_SERVER_VERSION);
#ifdef RTRS_TEST_BUILD
/* modinfo tells the test variant from the shipped one (tools/check-module.sh). */
MODULE_INFO(test_build, "fail_function entry points; for the test suites only");
#endif

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

/* Ours: upstream has no limit. */
static unsigned int max_chunk_mem_mb;
module_param(max_chunk_mem_mb, uint, 0444);
MODULE_PARM_DESC(max_chunk_mem_mb,
		 "MiB of memory all sessions together may hold (chunks, and what their paths and connections are charged); a new session, path or connection past it is refused with ENOMEM (default 0: half of the machine's memory)");

/* Ours: upstream signals one send in min(queue depth, 512), fixed. */
static unsigned int signal_interval;
module_param(signal_interval, uint, 0444);
MODULE_PARM_DESC(signal_interval,
		 "One I/O response in N asks for a completion, which is also one sample of the transport latency histogram; 1: every response (default 0: 512)");

/* The core spells errno values out; they must be the kernel's. */
#define RTRS_CHECK_ERRNO(macro, name, value) static_assert((macro) == (value), #macro);
RT_ERRNO_LIST(RTRS_CHECK_ERRNO)
static_assert(RTRS_CORE_LINK_CONNECTED == RTRS_SRV_LINK_EV_CONNECTED);
static_assert(RTRS_CORE_LINK_DISCONNECTED == RTRS_SRV_LINK_EV_DISCONNECTED);
static_assert(RTRS_CORE_DIR_READ == READ && RTRS_CORE_DIR_WRITE == WRITE);

/* --- the upper layer ----------------------------------------------------------- */

struct rtrs_env_ulp {
	struct rtrs_srv_ops ops;
};

/*
 * The session handle the core gives the ULP is its Session; the ULP's API
 * names it struct rtrs_srv (5.10) or struct rtrs_srv_sess (6.1 on).
 */
#ifdef RTRS_SRV_API_5_10
#define rtrs_ulp_sess rtrs_srv
#else
#define rtrs_ulp_sess rtrs_srv_sess
#endif

int rtrs_env_ulp_rdma_ev(struct rtrs_env_ulp *ulp, void *sess, void *priv,
			 struct rtrs_srv_op *op, int dir, void *data, u32 datalen,
			 const void *usr, u32 usrlen)
{
#ifdef RTRS_SRV_API_5_10
	return ulp->ops.rdma_ev(sess, priv, op, dir, data, datalen, usr, usrlen);
#else
	return ulp->ops.rdma_ev(priv, op, data, datalen, usr, usrlen);
#endif
}

int rtrs_env_ulp_link_ev(struct rtrs_env_ulp *ulp, void *sess, int ev, void *priv)
{
	return ulp->ops.link_ev(sess, ev, priv);
}

struct rtrs_srv_ctx *rtrs_srv_open(struct rtrs_srv_ops *ops, u16 port)
{
	struct rtrs_env_ulp *ulp;
	struct rtrs_srv_ctx *ctx;
	int err;

	if (!ops || !ops->rdma_ev || !ops->link_ev)
		return ERR_PTR(-EINVAL);
	ulp = kzalloc(sizeof(*ulp), GFP_KERNEL);
	if (!ulp)
		return ERR_PTR(-ENOMEM);
	ulp->ops = *ops;
	err = rtrs_core_server_open(ulp, port, &ctx);
	if (err) {
		kfree(ulp);
		return ERR_PTR(err);
	}
	return ctx;
}
EXPORT_SYMBOL(rtrs_srv_open);

void rtrs_srv_close(struct rtrs_srv_ctx *ctx)
{
	kfree(rtrs_core_server_close(ctx));
}
EXPORT_SYMBOL(rtrs_srv_close);

bool rtrs_srv_resp_rdma(struct rtrs_srv_op *id, int errno)
{
	if (WARN_ON_ONCE(!id))
		return true;
	rtrs_core_answer(id, errno);
	return true;
}
EXPORT_SYMBOL(rtrs_srv_resp_rdma);

static struct rtrs_srv_sess *core_sess(struct rtrs_ulp_sess *sess)
{
	return (struct rtrs_srv_sess *)sess;
}

void rtrs_srv_set_sess_priv(struct rtrs_ulp_sess *sess, void *priv)
{
	rtrs_core_set_sess_priv(core_sess(sess), priv);
}
EXPORT_SYMBOL(rtrs_srv_set_sess_priv);

/* The session's name: 5.10 calls it rtrs_srv_get_sess_name. */
#ifdef RTRS_SRV_API_5_10
int rtrs_srv_get_sess_name(struct rtrs_srv *sess, char *name, size_t len)
{
	return rtrs_core_get_path_name(core_sess(sess), name, len);
}
EXPORT_SYMBOL(rtrs_srv_get_sess_name);
#else
int rtrs_srv_get_path_name(struct rtrs_srv_sess *sess, char *name, size_t len)
{
	return rtrs_core_get_path_name(core_sess(sess), name, len);
}
EXPORT_SYMBOL(rtrs_srv_get_path_name);
#endif

int rtrs_srv_get_queue_depth(struct rtrs_ulp_sess *sess)
{
	return rtrs_core_get_queue_depth(core_sess(sess));
}
EXPORT_SYMBOL(rtrs_srv_get_queue_depth);

/* --- the module --------------------------------------------------------------- */

static int __init rtrs_srv_init(void)
{
	struct rtrs_core_config cfg = {
		.always_invalidate = always_invalidate,
		.max_chunk_size = max_chunk_size,
		.sess_queue_depth = sess_queue_depth,
		.chunk_mem_mb = max_chunk_mem_mb,
		.page_size = PAGE_SIZE,
		.signal_interval = signal_interval,
	};
	u32 budget_mb;
	char why[160];
	int err;

	err = rtrs_core_check_params(max_chunk_size, sess_queue_depth, why, sizeof(why));
	if (err) {
		pr_err("refusing to load: %s\n", why);
		return err;
	}
	err = rtrs_core_init(&cfg, &budget_mb);
	if (err)
		return err;
	err = rtrs_glue_admission_init();
	if (err)
		goto core_exit;
	err = rtrs_glue_base_init();
	if (err)
		goto admission_exit;
	err = rtrs_glue_sysfs_init();
	if (err) {
		pr_err("cannot register the rtrs-server class: %d\n", err);
		goto base_exit;
	}
	rtrs_glue_debugfs_init();
	err = rtrs_glue_rdma_init();
	if (err) {
		pr_err("cannot register as an RDMA client: %d\n", err);
		goto sysfs_exit;
	}
	pr_info("loaded %s: max_chunk_size %d, sess_queue_depth %d, always_invalidate %c, chunk memory budget %u MiB\n",
		RTRS_SERVER_VERSION, max_chunk_size, sess_queue_depth,
		always_invalidate ? 'Y' : 'N', budget_mb);
	return 0;

sysfs_exit:
	rtrs_glue_debugfs_exit();
	rtrs_glue_sysfs_exit();
base_exit:
	rtrs_glue_base_exit();
admission_exit:
	rtrs_glue_admission_exit();
core_exit:
	rtrs_core_exit();
	return err;
}

/* Called by rtrs_glue_core_exit() with what the module still holds. */
void rtrs_glue_unload_report(const char *held)
{
	pr_err("unloaded while still holding: %s\n", held);
}

/* The ULPs on top of us have closed their servers by now (they use us). */
static void __exit rtrs_srv_exit(void)
{
	rtrs_glue_rdma_exit();
	rtrs_glue_base_exit();
	rtrs_glue_debugfs_exit();
	rtrs_glue_sysfs_exit();
	rtrs_glue_admission_exit();
	if (rtrs_glue_core_exit())
		return;
	pr_info("unloaded\n");
}

module_init(rtrs_srv_init);
module_exit(rtrs_srv_exit);
