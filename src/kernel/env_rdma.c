// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel environment, part two: RDMA. Devices and their protection
 * domains, DMA mappings, memory regions, connections (cm_id, CQ, QP), work
 * requests built from the core's descriptors, and the three kinds of kernel
 * events that come back: RDMA CM events, completions, device removal. Each
 * event goes to the core as it is; the core decides what follows.
 * The calls that can fail are RTRS_INJECTABLE (glue.h): in the test build
 * the fault suite (test/fault) makes each fail in turn through fail_function.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>
#include <linux/scatterlist.h>
#include <net/net_namespace.h>
#include <rdma/ib.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "core/env.h"
#include "kernel/env_mr.h"
#include "kernel/glue.h"

/*
 * What a cm_id's context points to: the listener's carries its listener, a
 * connection's its connection (a connection request arrives on a new id
 * whose context is still the listener's). The first member says which.
 */
enum rtrs_glue_cm_kind {
	RTRS_GLUE_LISTENER = 0x4c53544e,	/* "LSTN" */
	RTRS_GLUE_CON = 0x434f4e4e,		/* "CONN" */
};

/* Two ids, as upstream's server has: IP (RDMA_PS_TCP) and native IB (RDMA_PS_IB). */
struct rtrs_env_listener {
	enum rtrs_glue_cm_kind kind;
	struct rdma_cm_id *ip_id;
	struct rdma_cm_id *ib_id;
	void *core_server;
};

/*
 * The I/O path's work requests of a connection (rtrs_env_post_resp() and
 * the two after it): what does not change is set once when the connection
 * is made, the rest filled in at each post. Posts on a connection hold its
 * io lock, and a provider copies a work request before ib_post_send()
 * returns, so one set per connection serves every request.
 */
struct rtrs_glue_io_wrs {
	struct ib_rdma_wr data;		/* RDMA_WRITE of the read's data */
	struct ib_reg_wr reg;		/* REG_MR: the chunk under its next key */
	struct ib_send_wr inv;		/* SEND_INV of the client's key */
	struct ib_rdma_wr msg;		/* RDMA_WRITE_IMM, or SEND_IMM of the new key */
	struct ib_send_wr local_inv;	/* LOCAL_INV of the chunk's key */
	struct ib_recv_wr recv;		/* a receive for an immediate */
	struct ib_sge data_sge;
	struct ib_sge msg_sge;
};

struct rtrs_env_con {
	enum rtrs_glue_cm_kind kind;
	struct rdma_cm_id *cm_id;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct rtrs_env_dev *dev;
	struct rtrs_env_lock *io_lock;
	void *core;
	struct rtrs_glue_io_wrs io;
	/*
	 * Where ib_post_send()/ib_post_recv() of the I/O path say which work
	 * request failed (unread: an address off the stack spares each post a
	 * stack canary).
	 */
	const struct ib_send_wr *bad_send;
	const struct ib_recv_wr *bad_recv;
};

struct rtrs_env_dev {
	struct ib_device *ib_dev;
	struct ib_pd *pd;
};

static struct rdma_cm_id *to_cm_id(struct rtrs_env_cm *cm)
{
	return (struct rdma_cm_id *)cm;
}

/* --- devices -------------------------------------------------------------------- */

RTRS_INJECTABLE_FN struct rtrs_env_dev *rtrs_env_dev_open(void *ib_dev,
							  struct rtrs_env_dev_attrs *attrs)
{
	struct ib_device *ibd = ib_dev;
	struct rtrs_env_dev *dev;

	might_sleep();
	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return NULL;
	dev->ib_dev = ibd;
	dev->pd = ib_alloc_pd(ibd, 0);
	if (IS_ERR(dev->pd)) {
		pr_err("%s: cannot allocate a protection domain: %ld\n", dev_name(&ibd->dev),
		       PTR_ERR(dev->pd));
		kfree(dev);
		return NULL;
	}
	strscpy(attrs->name, dev_name(&ibd->dev), sizeof(attrs->name));
	attrs->max_qp_wr = ibd->attrs.max_qp_wr;
	attrs->max_cqe = ibd->attrs.max_cqe;
	attrs->max_fast_reg_page_list_len = ibd->attrs.max_fast_reg_page_list_len;
	attrs->num_comp_vectors = ibd->num_comp_vectors;
	return dev;
}
RTRS_INJECTABLE(rtrs_env_dev_open, NULL);

void rtrs_env_dev_close(struct rtrs_env_dev *dev)
{
	ib_dealloc_pd(dev->pd);
	kfree(dev);
}

/* --- DMA ------------------------------------------------------------------------- */

static enum dma_data_direction rtrs_glue_dir(enum rtrs_env_dma_dir dir)
{
	switch (dir) {
	case RTRS_ENV_DMA_TO_DEVICE:
		return DMA_TO_DEVICE;
	case RTRS_ENV_DMA_FROM_DEVICE:
		return DMA_FROM_DEVICE;
	default:
		return DMA_BIDIRECTIONAL;
	}
}

/* One mapping per chunk, so that a sync of a chunk is a sync of a mapping. */
RTRS_INJECTABLE_FN __UINT64_TYPE__ rtrs_env_dma_map_chunk(struct rtrs_env_dev *dev, void *chunk,
							  u32 size)
{
	u64 dma = ib_dma_map_page(dev->ib_dev, virt_to_page(chunk), 0, size, DMA_BIDIRECTIONAL);

	return ib_dma_mapping_error(dev->ib_dev, dma) ? 0 : dma;
}
RTRS_INJECTABLE(rtrs_env_dma_map_chunk, NULL);

void rtrs_env_dma_unmap_chunk(struct rtrs_env_dev *dev, __UINT64_TYPE__ dma, u32 size)
{
	ib_dma_unmap_page(dev->ib_dev, dma, size, DMA_BIDIRECTIONAL);
}

void rtrs_env_dma_sync_for_cpu(struct rtrs_env_dev *dev, __UINT64_TYPE__ dma, u32 len)
{
	ib_dma_sync_single_for_cpu(dev->ib_dev, dma, len, DMA_BIDIRECTIONAL);
}

void rtrs_env_dma_sync_for_device(struct rtrs_env_dev *dev, __UINT64_TYPE__ dma, u32 len)
{
	ib_dma_sync_single_for_device(dev->ib_dev, dma, len, DMA_BIDIRECTIONAL);
}

RTRS_INJECTABLE_FN int rtrs_env_buf_alloc(struct rtrs_env_dev *dev, u32 len,
					  enum rtrs_env_dma_dir dir, struct rtrs_env_buf *buf)
{
	void *cpu = kzalloc(len, GFP_KERNEL);
	u64 dma;

	if (!cpu)
		return -ENOMEM;
	dma = ib_dma_map_single(dev->ib_dev, cpu, len, rtrs_glue_dir(dir));
	if (ib_dma_mapping_error(dev->ib_dev, dma)) {
		kfree(cpu);
		return -ENOMEM;
	}
	buf->cpu = cpu;
	buf->dma = dma;
	buf->len = len;
	buf->dir = dir;
	return 0;
}
RTRS_INJECTABLE(rtrs_env_buf_alloc, ERRNO);

void rtrs_env_buf_free(struct rtrs_env_dev *dev, struct rtrs_env_buf *buf)
{
	ib_dma_unmap_single(dev->ib_dev, buf->dma, buf->len, rtrs_glue_dir(buf->dir));
	kfree(buf->cpu);
	buf->cpu = NULL;
}

void rtrs_env_buf_sync_for_device(struct rtrs_env_dev *dev, struct rtrs_env_buf *buf)
{
	ib_dma_sync_single_for_device(dev->ib_dev, buf->dma, buf->len, rtrs_glue_dir(buf->dir));
}

void rtrs_env_buf_sync_for_cpu(struct rtrs_env_dev *dev, struct rtrs_env_buf *buf)
{
	ib_dma_sync_single_for_cpu(dev->ib_dev, buf->dma, buf->len, rtrs_glue_dir(buf->dir));
}

/* --- memory regions ---------------------------------------------------------------- */

struct rtrs_env_mr {
	struct ib_mr *mr;
};

RTRS_INJECTABLE_FN struct rtrs_env_mr *rtrs_env_mr_alloc(struct rtrs_env_dev *dev,
							 const __UINT64_TYPE__ *dma, unsigned int n,
							 u32 size, struct rtrs_env_mr_info *info)
{
	struct rtrs_env_mr *m;
	struct sg_table sgt;
	int mapped;

	might_sleep();
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return NULL;
	m->mr = ib_alloc_mr(dev->pd, RTRS_GLUE_CHUNK_MR_TYPE, n);
	if (IS_ERR(m->mr))
		goto free;
	/* The chunks are mapped already: a list of their DMA addresses. */
	if (sg_alloc_table(&sgt, n, GFP_KERNEL))
		goto dereg;
	rtrs_glue_chunk_sg(sgt.sgl, dma, n, size);
	mapped = ib_map_mr_sg(m->mr, sgt.sgl, n, NULL, size);
	sg_free_table(&sgt);
	if (mapped != n)
		goto dereg;
	info->rkey = m->mr->rkey;
	info->iova = m->mr->iova;
	info->length = m->mr->length;
	atomic64_inc(&rtrs_glue_held.mrs);
	return m;
dereg:
	ib_dereg_mr(m->mr);
free:
	kfree(m);
	return NULL;
}
RTRS_INJECTABLE(rtrs_env_mr_alloc, NULL);

void rtrs_env_mr_free(struct rtrs_env_mr *m)
{
	ib_dereg_mr(m->mr);
	kfree(m);
	atomic64_dec(&rtrs_glue_held.mrs);
}

u32 rtrs_env_mr_next_rkey(struct rtrs_env_mr *m)
{
	ib_update_fast_reg_key(m->mr, ib_inc_rkey(m->mr->rkey));
	return m->mr->rkey;
}

/* --- connection requests ---------------------------------------------------------- */

RTRS_INJECTABLE_FN int rtrs_env_cm_accept(struct rtrs_env_cm *cm, const void *priv,
					  unsigned int len)
{
	struct rdma_conn_param param = {
		.rnr_retry_count = 7,
		.private_data = priv,
		.private_data_len = len,
	};

	return rdma_accept(to_cm_id(cm), &param);
}
RTRS_INJECTABLE(rtrs_env_cm_accept, ERRNO);

void rtrs_env_cm_reject(struct rtrs_env_cm *cm, const void *priv, unsigned int len)
{
	int err = rdma_reject(to_cm_id(cm), priv, len, IB_CM_REJ_CONSUMER_DEFINED);

	if (err)
		pr_err_ratelimited("rdma_reject: %d\n", err);
}

/* --- completions ------------------------------------------------------------------- */

/* What is not an I/O path's success: the completion described to the core. */
static noinline void rtrs_glue_done_wc(struct rtrs_env_con *con, struct rtrs_core_cqe *cqe,
				       struct ib_wc *wc)
{
	struct rtrs_core_wc w = {
		.ok = wc->status == IB_WC_SUCCESS,
		.flushed = wc->status == IB_WC_WR_FLUSH_ERR,
		.status = wc->status == IB_WC_SUCCESS ? "success" : ib_wc_status_msg(wc->status),
		.opcode = RTRS_CORE_WC_SEND,
		.byte_len = wc->byte_len,
	};

	if (w.ok) {
		if (wc->opcode == IB_WC_RECV)
			w.opcode = RTRS_CORE_WC_RECV;
		else if (wc->opcode & IB_WC_RECV)
			w.opcode = RTRS_CORE_WC_OTHER;
	}
	rtrs_core_on_wc(con->core, cqe, &w);
}

/*
 * Every work request of ours completes here, through its rtrs_core_cqe; the
 * two that every request has (an immediate, a send's success) take a short
 * way into the core.
 */
static void rtrs_glue_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_env_con *con = cq->cq_context;
	struct rtrs_core_cqe *cqe = container_of((void *)wc->wr_cqe, struct rtrs_core_cqe, env);

	if (likely(wc->status == IB_WC_SUCCESS)) {
		if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM) {
			rtrs_core_on_imm(con->core, be32_to_cpu(wc->ex.imm_data));
			return;
		}
		if (!(wc->opcode & IB_WC_RECV)) {
			rtrs_core_on_send_done(con->core, cqe);
			return;
		}
	}
	rtrs_glue_done_wc(con, cqe, wc);
}

static struct ib_cqe *rtrs_glue_cqe(struct rtrs_core_cqe *cqe)
{
	struct ib_cqe *e = (struct ib_cqe *)cqe->env;

	e->done = rtrs_glue_done;
	return e;
}

/* --- connections ---------------------------------------------------------------- */

static void rtrs_glue_qp_event(struct ib_event *ev, void *ctx)
{
	struct rtrs_env_con *con = ctx;

	if (ev->event == IB_EVENT_COMM_EST)
		rdma_notify(con->cm_id, IB_EVENT_COMM_EST);
	else
		pr_info_ratelimited("QP event %s\n", ib_event_msg(ev->event));
}

/* What never changes in a connection's I/O work requests (kzalloc'd). */
static void rtrs_glue_io_wrs_init(struct rtrs_glue_io_wrs *io, u32 lkey)
{
	io->data.wr.opcode = IB_WR_RDMA_WRITE;
	io->data.wr.sg_list = &io->data_sge;
	io->data.wr.num_sge = 1;
	io->data_sge.lkey = lkey;
	io->reg.wr.opcode = IB_WR_REG_MR;
	io->reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	io->inv.opcode = IB_WR_SEND_WITH_INV;
	io->msg.wr.sg_list = &io->msg_sge;
	io->msg_sge.lkey = lkey;
	io->local_inv.opcode = IB_WR_LOCAL_INV;
	io->local_inv.send_flags = IB_SEND_SIGNALED;
}

/* The sizes are the core's, ib_drain_qp()'s own work requests included. */
RTRS_INJECTABLE_FN struct rtrs_env_con *
rtrs_env_con_create(struct rtrs_env_cm *cm, struct rtrs_env_dev *dev,
		    const struct rtrs_env_con_sizes *sizes, struct rtrs_env_lock *io_lock,
		    void *core_con)
{
	struct rdma_cm_id *cm_id = to_cm_id(cm);
	struct ib_qp_init_attr qp = {};
	struct rtrs_env_con *con;
	int err;

	might_sleep();
	con = kzalloc(sizeof(*con), GFP_KERNEL);
	if (!con)
		return NULL;
	con->kind = RTRS_GLUE_CON;
	con->cm_id = cm_id;
	con->dev = dev;
	con->io_lock = io_lock;
	con->core = core_con;
	rtrs_glue_io_wrs_init(&con->io, dev->pd->local_dma_lkey);
	con->cq = ib_alloc_cq(dev->ib_dev, con, sizes->cq_size, sizes->comp_vector,
			      IB_POLL_WORKQUEUE);
	if (IS_ERR(con->cq)) {
		pr_err("cannot allocate a CQ of %u: %ld\n", sizes->cq_size, PTR_ERR(con->cq));
		goto free;
	}
	qp.event_handler = rtrs_glue_qp_event;
	qp.qp_context = con;
	qp.send_cq = con->cq;
	qp.recv_cq = con->cq;
	qp.cap.max_send_wr = sizes->max_send_wr;
	qp.cap.max_recv_wr = sizes->max_recv_wr;
	qp.cap.max_send_sge = 1;
	qp.cap.max_recv_sge = 1;
	qp.sq_sig_type = IB_SIGNAL_REQ_WR;
	qp.qp_type = IB_QPT_RC;
	err = rdma_create_qp(cm_id, dev->pd, &qp);
	if (err) {
		pr_err("cannot create a QP of %u+%u: %d\n", qp.cap.max_send_wr,
		       qp.cap.max_recv_wr, err);
		goto free_cq;
	}
	con->qp = cm_id->qp;
	/* From here on its CM events reach the core with its connection. */
	cm_id->context = con;
	atomic64_inc(&rtrs_glue_held.cons);
	return con;
free_cq:
	ib_free_cq(con->cq);
free:
	kfree(con);
	return NULL;
}
RTRS_INJECTABLE(rtrs_env_con_create, NULL);

void rtrs_env_con_disconnect(struct rtrs_env_con *con)
{
	rdma_disconnect(con->cm_id);
}

void rtrs_env_con_drain(struct rtrs_env_con *con)
{
	might_sleep();
	ib_drain_qp(con->qp);
}

void rtrs_env_con_destroy_qp(struct rtrs_env_con *con)
{
	might_sleep();
	rdma_destroy_qp(con->cm_id);
	ib_free_cq(con->cq);
	con->cq = NULL;
	atomic64_dec(&rtrs_glue_held.cons);
}

void rtrs_env_con_destroy(struct rtrs_env_con *con)
{
	might_sleep();
	/*
	 * Waits for a CM handler still running on the id; none runs after, so
	 * the connection it would find in the id's context may go.
	 */
	rdma_destroy_id(con->cm_id);
	kfree(con);
}

/*
 * With CONFIG_INIT_STACK_ALL_ZERO (Debian's kernels) the compiler zeroes a
 * local array in full at each call: 72 quadwords for the two below, on every
 * post. Each entry used is written before ib_post_send() reads it (the wr
 * cleared first, its sge only when it has one) and the others are never read.
 */
#if __has_attribute(__uninitialized__)
#define RTRS_GLUE_NOINIT __attribute__((__uninitialized__))
#else
#define RTRS_GLUE_NOINIT
#endif

/* Sized for the largest chain the core posts. */
union rtrs_glue_wr {
	struct ib_send_wr send;
	struct ib_rdma_wr rdma;
	struct ib_reg_wr reg;
};

RTRS_INJECTABLE_FN int rtrs_env_post_send(struct rtrs_env_con *con, const struct rtrs_env_wr *wrs,
					  unsigned int n)
	__must_hold(con->io_lock)
{
	union rtrs_glue_wr chain[RTRS_ENV_MAX_CHAIN] RTRS_GLUE_NOINIT;
	struct ib_sge sge[RTRS_ENV_MAX_CHAIN] RTRS_GLUE_NOINIT;
	unsigned int i;

	rtrs_glue_assert_held(con->io_lock);
	if (WARN_ON_ONCE(n == 0 || n > RTRS_ENV_MAX_CHAIN))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const struct rtrs_env_wr *d = &wrs[i];
		struct ib_send_wr *w = &chain[i].send;

		/* Only the n used: most posts are of one or two. */
		memset(&chain[i], 0, sizeof(chain[i]));
		w->wr_cqe = rtrs_glue_cqe(d->cqe);
		w->send_flags = d->signaled ? IB_SEND_SIGNALED : 0;
		w->next = i + 1 < n ? &chain[i + 1].send : NULL;
		if (d->len) {
			sge[i].addr = d->addr;
			sge[i].length = d->len;
			sge[i].lkey = con->dev->pd->local_dma_lkey;
			w->sg_list = &sge[i];
			w->num_sge = 1;
		}
		switch (d->op) {
		case RTRS_ENV_WR_RDMA_WRITE:
		case RTRS_ENV_WR_RDMA_WRITE_IMM:
			w->opcode = d->op == RTRS_ENV_WR_RDMA_WRITE ? IB_WR_RDMA_WRITE :
								      IB_WR_RDMA_WRITE_WITH_IMM;
			w->ex.imm_data = cpu_to_be32(d->imm);
			chain[i].rdma.remote_addr = d->remote_addr;
			chain[i].rdma.rkey = d->rkey;
			break;
		case RTRS_ENV_WR_SEND:
			w->opcode = IB_WR_SEND;
			break;
		case RTRS_ENV_WR_SEND_IMM:
			w->opcode = IB_WR_SEND_WITH_IMM;
			w->ex.imm_data = cpu_to_be32(d->imm);
			break;
		case RTRS_ENV_WR_SEND_INV:
			w->opcode = IB_WR_SEND_WITH_INV;
			w->ex.invalidate_rkey = d->inv_rkey;
			break;
		case RTRS_ENV_WR_REG_MR:
			w->opcode = IB_WR_REG_MR;
			chain[i].reg.mr = d->mr->mr;
			chain[i].reg.key = d->mr_key;
			chain[i].reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
			break;
		case RTRS_ENV_WR_LOCAL_INV:
			w->opcode = IB_WR_LOCAL_INV;
			w->ex.invalidate_rkey = d->inv_rkey;
			break;
		}
	}
	return ib_post_send(con->qp, &chain[0].send, NULL);
}
RTRS_INJECTABLE(rtrs_env_post_send, ERRNO);

/*
 * Where a post of the I/O path learns which work request failed: the
 * connection's own, said non-NULL so that ib_post_send()'s fallback to one
 * on the stack (and the stack canary that costs) folds away.
 */
static inline const struct ib_send_wr **rtrs_glue_bad_send(struct rtrs_env_con *con)
{
	const struct ib_send_wr **bad = &con->bad_send;

	if (!bad)
		__builtin_unreachable();
	return bad;
}

static inline const struct ib_recv_wr **rtrs_glue_bad_recv(struct rtrs_env_con *con)
{
	const struct ib_recv_wr **bad = &con->bad_recv;

	if (!bad)
		__builtin_unreachable();
	return bad;
}

RTRS_INJECTABLE_FN int rtrs_env_post_resp(struct rtrs_env_con *con, const struct rtrs_env_resp *r)
	__must_hold(con->io_lock)
{
	struct rtrs_glue_io_wrs *io = &con->io;
	struct ib_cqe *cqe = rtrs_glue_cqe(r->cqe);
	struct ib_send_wr *first, **link = &first;

	rtrs_glue_assert_held(con->io_lock);
	if (r->data_len) {
		ib_dma_sync_single_for_device(con->dev->ib_dev, r->data_addr, r->data_len,
					      DMA_BIDIRECTIONAL);
		io->data.wr.wr_cqe = cqe;
		io->data_sge.addr = r->data_addr;
		io->data_sge.length = r->data_len;
		io->data.remote_addr = r->remote_addr;
		io->data.rkey = r->rkey;
		*link = &io->data.wr;
		link = &io->data.wr.next;
	}
	if (r->mr) {
		ib_update_fast_reg_key(r->mr->mr, (u8)r->mr_key);
		io->reg.wr.wr_cqe = cqe;
		io->reg.mr = r->mr->mr;
		io->reg.key = r->mr_key;
		*link = &io->reg.wr;
		link = &io->reg.wr.next;
	}
	if (r->send_inv) {
		io->inv.wr_cqe = cqe;
		io->inv.ex.invalidate_rkey = r->inv_rkey;
		*link = &io->inv;
		link = &io->inv.next;
	}
	*link = &io->msg.wr;
	io->msg.wr.wr_cqe = cqe;
	io->msg.wr.send_flags = r->signaled ? IB_SEND_SIGNALED : 0;
	io->msg.wr.ex.imm_data = cpu_to_be32(r->imm);
	if (r->msg_len) {
		ib_dma_sync_single_for_device(con->dev->ib_dev, r->msg_addr, r->msg_len,
					      DMA_TO_DEVICE);
		io->msg.wr.opcode = IB_WR_SEND_WITH_IMM;
		io->msg.wr.num_sge = 1;
		io->msg_sge.addr = r->msg_addr;
		io->msg_sge.length = r->msg_len;
	} else {
		io->msg.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
		io->msg.wr.num_sge = 0;
	}
	return ib_post_send(con->qp, first, rtrs_glue_bad_send(con));
}
RTRS_INJECTABLE(rtrs_env_post_resp, ERRNO);

RTRS_INJECTABLE_FN int rtrs_env_post_local_inv(struct rtrs_env_con *con, u32 rkey,
					       struct rtrs_core_cqe *cqe)
	__must_hold(con->io_lock)
{
	struct ib_send_wr *wr = &con->io.local_inv;

	rtrs_glue_assert_held(con->io_lock);
	wr->wr_cqe = rtrs_glue_cqe(cqe);
	wr->ex.invalidate_rkey = rkey;
	return ib_post_send(con->qp, wr, rtrs_glue_bad_send(con));
}
RTRS_INJECTABLE(rtrs_env_post_local_inv, ERRNO);

RTRS_INJECTABLE_FN int rtrs_env_post_recv_imm(struct rtrs_env_con *con, struct rtrs_core_cqe *cqe)
	__must_hold(con->io_lock)
{
	rtrs_glue_assert_held(con->io_lock);
	con->io.recv.wr_cqe = rtrs_glue_cqe(cqe);
	return ib_post_recv(con->qp, &con->io.recv, rtrs_glue_bad_recv(con));
}
RTRS_INJECTABLE(rtrs_env_post_recv_imm, ERRNO);

RTRS_INJECTABLE_FN int rtrs_env_post_recv(struct rtrs_env_con *con, struct rtrs_env_buf *buf,
					  struct rtrs_core_cqe *cqe, unsigned int count)
{
	struct ib_sge sge;
	struct ib_recv_wr wr = { .wr_cqe = rtrs_glue_cqe(cqe) };
	unsigned int i;
	int err;

	if (buf) {
		sge.addr = buf->dma;
		sge.length = buf->len;
		sge.lkey = con->dev->pd->local_dma_lkey;
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}
	for (i = 0; i < count; i++) {
		err = ib_post_recv(con->qp, &wr, NULL);
		if (err)
			return err;
	}
	return 0;
}
RTRS_INJECTABLE(rtrs_env_post_recv, ERRNO);

/* --- RDMA CM events -------------------------------------------------------------- */

static void rtrs_glue_addr(const struct sockaddr_storage *ss, struct rtrs_core_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->family = ss->ss_family;
	switch (ss->ss_family) {
	case AF_INET:
		memcpy(a->bytes, &((const struct sockaddr_in *)ss)->sin_addr, 4);
		break;
	case AF_INET6:
		memcpy(a->bytes, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
		break;
	case AF_IB:
		memcpy(a->bytes, &((const struct sockaddr_ib *)ss)->sib_addr, 16);
		break;
	}
}

static enum rtrs_core_cm_event rtrs_glue_cm_event(enum rdma_cm_event_type ev)
{
	switch (ev) {
	case RDMA_CM_EVENT_ESTABLISHED:
		return RTRS_CORE_CM_ESTABLISHED;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		return RTRS_CORE_CM_ERROR;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return RTRS_CORE_CM_DISCONNECTED;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return RTRS_CORE_CM_DEVICE_REMOVAL;
	default:
		return RTRS_CORE_CM_OTHER;
	}
}

/*
 * One handler for the listener and every connection. Returning non-zero
 * makes the CM destroy the id: only for a connection request the core
 * refused. DEVICE_REMOVAL waits for the id's destruction, which the path's
 * teardown does; the handler must not do it here.
 */
static int rtrs_glue_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rtrs_env_con *con;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		struct rtrs_env_listener *l = id->context;
		struct rtrs_core_addr client, server;

		rtrs_glue_addr(&id->route.addr.dst_addr, &client);
		rtrs_glue_addr(&id->route.addr.src_addr, &server);
		return rtrs_core_on_connect_request(l->core_server, (struct rtrs_env_cm *)id,
						    id->device, id->port_num, &client, &server,
						    ev->param.conn.private_data,
						    ev->param.conn.private_data_len);
	}
	if (*(enum rtrs_glue_cm_kind *)id->context != RTRS_GLUE_CON) {
		/* the listener: it is bound to no device, so this is news */
		pr_info_ratelimited("listener: ignoring %s (%d)\n", rdma_event_msg(ev->event),
				    ev->status);
		return 0;
	}
	con = id->context;
	if (ev->event != RDMA_CM_EVENT_ESTABLISHED && ev->event != RDMA_CM_EVENT_DISCONNECTED &&
	    ev->event != RDMA_CM_EVENT_TIMEWAIT_EXIT)
		pr_info_ratelimited("connection event %s (%d)\n", rdma_event_msg(ev->event),
				    ev->status);
	rtrs_core_on_cm_event(con->core, rtrs_glue_cm_event(ev->event), ev->status);
	return 0;
}

static struct rdma_cm_id *rtrs_glue_listen_one(struct rtrs_env_listener *l,
					       struct sockaddr *addr, enum rdma_ucm_port_space ps,
					       const char *what, u16 port)
{
	struct rdma_cm_id *id;
	int err;

	id = rdma_create_id(&init_net, rtrs_glue_cm_handler, l, ps, IB_QPT_RC);
	if (IS_ERR(id)) {
		pr_err("cannot create the %s listener: %ld\n", what, PTR_ERR(id));
		return id;
	}
	err = rdma_bind_addr(id, addr);
	if (err) {
		pr_err("cannot bind the %s listener to port %u: %d\n", what, port, err);
		goto destroy;
	}
	err = rdma_listen(id, 64);
	if (err) {
		pr_err("cannot listen on %s port %u: %d\n", what, port, err);
		goto destroy;
	}
	return id;
destroy:
	rdma_destroy_id(id);
	return ERR_PTR(err);
}

int rtrs_env_listen(void *core_server, u16 port, struct rtrs_env_listener **out)
{
	/* in6addr_any takes IPv4 clients too (bindv6only is off by default). */
	struct sockaddr_in6 ip_any = {
		.sin6_family = AF_INET6,
		.sin6_addr = IN6ADDR_ANY_INIT,
		.sin6_port = htons(port),
	};
	/* Any GID, any P_Key; the service id is the IB port space's plus port. */
	struct sockaddr_ib ib_any = {
		.sib_family = AF_IB,
		.sib_pkey = cpu_to_be16(0xffff),
		.sib_sid = cpu_to_be64(RDMA_IB_IP_PS_IB | port),
		.sib_sid_mask = cpu_to_be64(~0ULL),
	};
	struct rtrs_env_listener *l;
	int err;

	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	l->kind = RTRS_GLUE_LISTENER;
	l->core_server = core_server;
	l->ip_id = rtrs_glue_listen_one(l, (struct sockaddr *)&ip_any, RDMA_PS_TCP, "IP", port);
	if (IS_ERR(l->ip_id)) {
		err = PTR_ERR(l->ip_id);
		goto free;
	}
	l->ib_id = rtrs_glue_listen_one(l, (struct sockaddr *)&ib_any, RDMA_PS_IB, "IB", port);
	if (IS_ERR(l->ib_id)) {
		err = PTR_ERR(l->ib_id);
		rdma_destroy_id(l->ip_id);
		goto free;
	}
	*out = l;
	return 0;
free:
	kfree(l);
	return err;
}

void rtrs_env_listen_stop(struct rtrs_env_listener *l)
{
	/* Each waits for connection request handlers still running on it. */
	rdma_destroy_id(l->ib_id);
	rdma_destroy_id(l->ip_id);
	kfree(l);
}

/* --- devices going away ------------------------------------------------------------- */

static int rtrs_glue_ib_add(struct ib_device *ib_dev)
{
	return rtrs_core_on_device_add(ib_dev);
}

/* Must not return while anything of ours still uses the device. */
static void rtrs_glue_ib_remove(struct ib_device *ib_dev, void *client_data)
{
	rtrs_core_on_device_remove(ib_dev);
}

static struct ib_client rtrs_glue_ib_client = {
	.name = "rtrs_server",
	.add = rtrs_glue_ib_add,
	.remove = rtrs_glue_ib_remove,
};

int rtrs_glue_rdma_init(void)
{
	return ib_register_client(&rtrs_glue_ib_client);
}

void rtrs_glue_rdma_exit(void)
{
	ib_unregister_client(&rtrs_glue_ib_client);
}

/* The core spells these out; they must be the kernel's. */
static_assert(RTRS_CORE_AF_INET == AF_INET);
static_assert(RTRS_CORE_AF_INET6 == AF_INET6);
static_assert(RTRS_CORE_AF_IB == AF_IB);
static_assert(sizeof(((struct rtrs_core_cqe *)0)->env) >= sizeof(struct ib_cqe));
static_assert(offsetof(struct rtrs_core_cqe, env) == 0);
