// SPDX-License-Identifier: GPL-2.0
/*
 * The data plane. A client RDMA-writes data, its ULP header and the RTRS
 * request into one of the session's chunks and signals with an immediate
 * (chunk and offset of the request header). We hand data and header to the
 * ULP; when it answers (rtrs_srv_resp_rdma), a read's data is RDMA-written
 * into the client's buffer, then the response immediate goes out. With
 * always_invalidate the chunk's registration is invalidated on arrival and
 * registered again, under a new key that travels with the response.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/mm.h>

#include "core/rtrs_core.h"
#include "kernel/srv.h"

static void rtrs_srv_inv_done(struct ib_cq *cq, struct ib_wc *wc);

int rtrs_srv_io_init_path(struct rtrs_srv_path *path)
{
	struct ib_device *ib_dev = path->dev->ib_dev;
	size_t msg_len = rtrs_core_rkey_rsp_size();
	unsigned int i;

	path->ops = kcalloc(path->sess->queue_depth, sizeof(*path->ops), GFP_KERNEL);
	if (!path->ops)
		return -ENOMEM;
	if (!rtrs_srv_always_invalidate)
		return 0;
	for (i = 0; i < path->mrs_num; i++) {
		struct rtrs_srv_mr *m = &path->mrs[i];

		m->inv_cqe.done = rtrs_srv_inv_done;
		m->rkey_msg = kzalloc(msg_len, GFP_KERNEL);
		if (!m->rkey_msg)
			goto err;
		m->rkey_msg_dma = ib_dma_map_single(ib_dev, m->rkey_msg, msg_len, DMA_TO_DEVICE);
		if (ib_dma_mapping_error(ib_dev, m->rkey_msg_dma)) {
			kfree(m->rkey_msg);
			m->rkey_msg = NULL;
			goto err;
		}
	}
	return 0;
err:
	rtrs_srv_io_free_path(path);
	return -ENOMEM;
}

void rtrs_srv_io_free_path(struct rtrs_srv_path *path)
{
	unsigned int i;

	for (i = 0; i < path->mrs_num; i++) {
		struct rtrs_srv_mr *m = &path->mrs[i];

		if (!m->rkey_msg)
			continue;
		ib_dma_unmap_single(path->dev->ib_dev, m->rkey_msg_dma,
				    rtrs_core_rkey_rsp_size(), DMA_TO_DEVICE);
		kfree(m->rkey_msg);
		m->rkey_msg = NULL;
	}
	kfree(path->ops);
	path->ops = NULL;
}

void rtrs_srv_io_wait_answers(struct rtrs_srv_path *path)
{
	wait_event(path->inflight_wq, atomic_read(&path->stats.inflight) == 0);
}

static void rtrs_srv_op_done(struct rtrs_srv_path *path)
{
	if (atomic_dec_and_test(&path->stats.inflight))
		wake_up(&path->inflight_wq);
}

static void *rtrs_srv_chunk(struct rtrs_srv_path *path, u32 id)
{
	return page_address(path->sess->chunks[id]);
}

/*
 * Posts the response of op: [data write] [new registration] [remote
 * invalidation] and the immediate, in one chain whose last element alone is
 * signaled (its completion frees the send queue slots of the whole chain).
 */
static int rtrs_srv_post_response(struct rtrs_srv_op *op, int status)
{
	struct rtrs_srv_path *path = op->path;
	struct rtrs_srv_con *con = op->con;
	bool send_data = !status && op->dir == READ && op->sg_cnt;
	bool need_inval = op->dir == READ && op->need_inval && op->sg_cnt;
	struct ib_rdma_wr data_wr = {}, imm_wr = {};
	struct ib_send_wr inv_wr = {};
	struct ib_reg_wr reg_wr = {};
	struct ib_send_wr *first = NULL, **link = &first;
	struct ib_sge data_sge, msg_sge;

	if (send_data) {
		if (op->len == 0 || op->len > rtrs_srv_max_chunk_size)
			return -EINVAL;
		data_sge.addr = path->chunk_dma[op->msg_id];
		data_sge.length = op->len;
		data_sge.lkey = path->dev->pd->local_dma_lkey;
		data_wr.wr.opcode = IB_WR_RDMA_WRITE;
		data_wr.wr.wr_cqe = &rtrs_srv_send_cqe;
		data_wr.wr.sg_list = &data_sge;
		data_wr.wr.num_sge = 1;
		data_wr.remote_addr = op->addr;
		data_wr.rkey = op->key;
		ib_dma_sync_single_for_device(path->dev->ib_dev, data_sge.addr, op->len,
					      DMA_BIDIRECTIONAL);
		*link = &data_wr.wr;
		link = &data_wr.wr.next;
	}
	if (rtrs_srv_always_invalidate) {
		struct rtrs_srv_mr *m = &path->mrs[op->msg_id];

		reg_wr.wr.opcode = IB_WR_REG_MR;
		reg_wr.wr.wr_cqe = &rtrs_srv_send_cqe;
		reg_wr.mr = m->mr;
		reg_wr.key = m->mr->rkey;
		reg_wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
		*link = &reg_wr.wr;
		link = &reg_wr.wr.next;
	}
	if (need_inval) {
		inv_wr.opcode = IB_WR_SEND_WITH_INV;
		inv_wr.wr_cqe = &rtrs_srv_send_cqe;
		inv_wr.ex.invalidate_rkey = op->key;
		*link = &inv_wr;
		link = &inv_wr.next;
	}
	imm_wr.wr.wr_cqe = &rtrs_srv_send_cqe;
	imm_wr.wr.send_flags = IB_SEND_SIGNALED;
	imm_wr.wr.ex.imm_data = cpu_to_be32(rtrs_core_io_rsp_imm(op->msg_id, status, need_inval));
	if (rtrs_srv_always_invalidate) {
		struct rtrs_srv_mr *m = &path->mrs[op->msg_id];

		rtrs_core_build_rkey_rsp(m->rkey_msg, op->msg_id, m->mr->rkey);
		ib_dma_sync_single_for_device(path->dev->ib_dev, m->rkey_msg_dma,
					      rtrs_core_rkey_rsp_size(), DMA_TO_DEVICE);
		msg_sge.addr = m->rkey_msg_dma;
		msg_sge.length = rtrs_core_rkey_rsp_size();
		msg_sge.lkey = path->dev->pd->local_dma_lkey;
		imm_wr.wr.opcode = IB_WR_SEND_WITH_IMM;
		imm_wr.wr.sg_list = &msg_sge;
		imm_wr.wr.num_sge = 1;
	} else {
		imm_wr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	}
	*link = &imm_wr.wr;
	return ib_post_send(con->qp, first, NULL);
}

static void rtrs_srv_stats_count(struct rtrs_srv_path *path, bool read, u32 bytes)
{
	struct rtrs_srv_stats *s = &path->stats;

	if (read) {
		atomic64_inc(&s->read_cnt);
		atomic64_add(bytes, &s->read_bytes);
	} else {
		atomic64_inc(&s->write_cnt);
		atomic64_add(bytes, &s->write_bytes);
	}
}

/* The request whose header sits at off of chunk id, now ours to read. */
static void rtrs_srv_process(struct rtrs_srv_con *con, u32 id, u32 off)
{
	struct rtrs_srv_path *path = con->path;
	struct rtrs_srv_sess *sess = path->sess;
	struct rtrs_core_io_req req;
	struct rtrs_srv_op *op;
	char why[96];
	void *chunk;
	int err;

	if (READ_ONCE(path->state) != RTRS_SRV_PATH_CONNECTED)
		return;	/* closing: the drain flushes the rest */
	ib_dma_sync_single_for_cpu(path->dev->ib_dev, path->chunk_dma[id],
				   rtrs_srv_max_chunk_size, DMA_BIDIRECTIONAL);
	chunk = rtrs_srv_chunk(path, id);
	op = &path->ops[id];
	err = rtrs_core_parse_io_req(chunk, rtrs_srv_max_chunk_size, off, &req, why, sizeof(why));
	if (err == -EPROTO) {
		pr_err_ratelimited("%s: chunk %u: %s; closing the path\n", path->name, id, why);
		rtrs_srv_close_path(path);
		return;
	}
	*op = (struct rtrs_srv_op) {
		.path = path,
		.con = con,
		.msg_id = id,
		.dir = WRITE,
	};
	atomic_inc(&path->stats.inflight);
	if (err) {
		/* A request we cannot read is failed, not guessed at. */
		pr_err_ratelimited("%s: chunk %u: %s; failing the request\n", path->name, id, why);
		rtrs_srv_resp_rdma(op, err);
		return;
	}
	op->dir = req.type == RTRS_CORE_IO_READ ? READ : WRITE;
	op->need_inval = req.need_inval;
	op->sg_cnt = req.sg_cnt;
	op->addr = req.addr;
	op->key = req.key;
	op->len = req.len;
	rtrs_srv_stats_count(path, op->dir == READ, req.bytes);

	err = sess->ctx->ops.rdma_ev(sess->priv, op, chunk, req.data_len,
				     (u8 *)chunk + req.data_len, req.usr_len);
	if (err) {
		pr_err_ratelimited("%s: the upper layer failed request %u: %d\n", path->name, id, err);
		rtrs_srv_resp_rdma(op, err);
	}
}

static void rtrs_srv_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_mr *m = container_of(wc->wr_cqe, struct rtrs_srv_mr, inv_cqe);
	struct rtrs_srv_con *con = m->inv_con;
	struct rtrs_srv_path *path = con->path;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_err("%s: local invalidation failed: %s\n", path->name,
			       ib_wc_status_msg(wc->status));
		rtrs_srv_close_path(path);
		return;
	}
	rtrs_srv_process(con, m - path->mrs, m->inv_off);
}

/* An I/O request immediate arrived on con (completion context). */
void rtrs_srv_io_request(struct rtrs_srv_con *con, u32 payload)
{
	struct rtrs_srv_path *path = con->path;
	u32 id, off;

	if (rtrs_core_locate_io(payload, path->sess->queue_depth, rtrs_srv_max_chunk_size,
				&id, &off)) {
		pr_err_ratelimited("%s: I/O immediate 0x%x names no chunk of the session; closing the path\n",
				   path->name, payload);
		rtrs_srv_close_path(path);
		return;
	}
	if (rtrs_srv_always_invalidate) {
		struct rtrs_srv_mr *m = &path->mrs[id];
		struct ib_send_wr wr = {
			.opcode = IB_WR_LOCAL_INV,
			.wr_cqe = &m->inv_cqe,
			.send_flags = IB_SEND_SIGNALED,
			.ex.invalidate_rkey = m->mr->rkey,
		};

		m->inv_con = con;
		m->inv_off = off;
		if (ib_post_send(con->qp, &wr, NULL))
			rtrs_srv_close_path(path);
		return;
	}
	rtrs_srv_process(con, id, off);
}

bool rtrs_srv_resp_rdma(struct rtrs_srv_op *op, int status)
{
	struct rtrs_srv_path *path;
	int err;

	if (WARN_ON_ONCE(!op))
		return true;
	path = op->path;
	if (READ_ONCE(path->state) == RTRS_SRV_PATH_CONNECTED) {
		if (rtrs_srv_always_invalidate) {
			struct ib_mr *mr = path->mrs[op->msg_id].mr;

			ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
		}
		err = rtrs_srv_post_response(op, status);
		if (err) {
			pr_err_ratelimited("%s: cannot send the response of request %u: %d\n",
					   path->name, op->msg_id, err);
			rtrs_srv_close_path(path);
		}
	}
	rtrs_srv_op_done(path);
	return true;
}
EXPORT_SYMBOL(rtrs_srv_resp_rdma);
