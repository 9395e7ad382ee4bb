// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions, paths and connections: from a client's connection request to
 * the path's teardown.
 *
 * A client opens a path with cid_num connection requests carrying the same
 * path uuid; the first one of a new session must say first_conn. Once all
 * are accepted, the client sends an info request (the session name) on
 * connection 0, and we answer with the chunk descriptors: the path is then
 * up, in sysfs, and heartbeats run on connection 0.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/log2.h>
#include <net/ipv6.h>
#include <rdma/ib_cm.h>

#include "core/rtrs_core.h"
#include "kernel/srv.h"

/* Receives posted on the service connection (0) and per I/O connection. */
#define RTRS_SRV_SERVICE_QUEUE_DEPTH 512
#define RTRS_SRV_MAX_PATHS 128

static void rtrs_srv_recv_done(struct ib_cq *cq, struct ib_wc *wc);
static void rtrs_srv_send_done(struct ib_cq *cq, struct ib_wc *wc);
static void rtrs_srv_info_req_done(struct ib_cq *cq, struct ib_wc *wc);

static struct ib_cqe rtrs_srv_recv_cqe = { .done = rtrs_srv_recv_done };
struct ib_cqe rtrs_srv_send_cqe = { .done = rtrs_srv_send_done };

/* --- path state ---------------------------------------------------------- */

static bool rtrs_srv_path_set_state(struct rtrs_srv_path *path,
				    enum rtrs_srv_path_state next)
{
	bool changed = false;
	unsigned long flags;

	spin_lock_irqsave(&path->state_lock, flags);
	switch (next) {
	case RTRS_SRV_PATH_CONNECTED:
		changed = path->state == RTRS_SRV_PATH_CONNECTING;
		break;
	case RTRS_SRV_PATH_CLOSING:
		changed = path->state == RTRS_SRV_PATH_CONNECTING ||
			  path->state == RTRS_SRV_PATH_CONNECTED;
		break;
	case RTRS_SRV_PATH_CLOSED:
		changed = path->state == RTRS_SRV_PATH_CLOSING;
		break;
	default:
		break;
	}
	if (changed)
		path->state = next;
	spin_unlock_irqrestore(&path->state_lock, flags);
	return changed;
}

static enum rtrs_srv_path_state rtrs_srv_path_state(struct rtrs_srv_path *path)
{
	enum rtrs_srv_path_state s;
	unsigned long flags;

	spin_lock_irqsave(&path->state_lock, flags);
	s = path->state;
	spin_unlock_irqrestore(&path->state_lock, flags);
	return s;
}

/* Claims the teardown; only the first caller queues it. Any context. */
void rtrs_srv_close_path(struct rtrs_srv_path *path)
{
	if (rtrs_srv_path_set_state(path, RTRS_SRV_PATH_CLOSING))
		queue_work(rtrs_srv_wq, &path->close_work);
}

/* --- sessions ------------------------------------------------------------- */

static void rtrs_srv_free_chunks(struct rtrs_srv_sess *sess)
{
	int i;

	if (!sess->chunks)
		return;
	for (i = 0; i < sess->queue_depth; i++)
		if (sess->chunks[i])
			__free_pages(sess->chunks[i], get_order(rtrs_srv_max_chunk_size));
	kfree(sess->chunks);
	sess->chunks = NULL;
}

/* Frees a session that has no path left. Caller holds ctx->lock. */
static void rtrs_srv_sess_free_locked(struct rtrs_srv_sess *sess)
{
	list_del(&sess->entry);
	rtrs_srv_free_chunks(sess);
	put_device(&sess->dev);
}

static struct rtrs_srv_sess *rtrs_srv_find_sess(struct rtrs_srv_ctx *ctx,
						const uuid_t *paths_uuid)
{
	struct rtrs_srv_sess *sess;

	list_for_each_entry(sess, &ctx->sessions, entry)
		if (uuid_equal(&sess->paths_uuid, paths_uuid))
			return sess;
	return NULL;
}

static struct rtrs_srv_sess *rtrs_srv_create_sess(struct rtrs_srv_ctx *ctx,
						  const uuid_t *paths_uuid)
{
	struct rtrs_srv_sess *sess;
	int i;

	sess = kzalloc(sizeof(*sess), GFP_KERNEL);
	if (!sess)
		return NULL;
	rtrs_srv_sysfs_init_sess(sess);
	sess->ctx = ctx;
	uuid_copy(&sess->paths_uuid, paths_uuid);
	INIT_LIST_HEAD(&sess->paths);
	mutex_init(&sess->ev_lock);
	sess->queue_depth = rtrs_srv_sess_queue_depth;
	sess->chunks = kcalloc(sess->queue_depth, sizeof(*sess->chunks), GFP_KERNEL);
	if (!sess->chunks)
		goto err;
	for (i = 0; i < sess->queue_depth; i++) {
		sess->chunks[i] = alloc_pages(GFP_KERNEL | __GFP_ZERO,
					      get_order(rtrs_srv_max_chunk_size));
		if (!sess->chunks[i])
			goto err;
	}
	list_add_tail(&sess->entry, &ctx->sessions);
	return sess;
err:
	rtrs_srv_free_chunks(sess);
	put_device(&sess->dev);
	return NULL;
}

/* --- memory registrations of the session's chunks -------------------------- */

static void rtrs_srv_unmap_chunks(struct rtrs_srv_path *path)
{
	struct ib_device *ib_dev = path->dev->ib_dev;
	unsigned int i;

	for (i = 0; i < path->mrs_num; i++) {
		struct rtrs_srv_mr *m = &path->mrs[i];

		ib_dereg_mr(m->mr);
		ib_dma_unmap_sg(ib_dev, m->sgt.sgl, m->sgt.orig_nents, DMA_BIDIRECTIONAL);
		sg_free_table(&m->sgt);
	}
	kfree(path->mrs);
	path->mrs = NULL;
	path->mrs_num = 0;
	kfree(path->chunk_dma);
	path->chunk_dma = NULL;
}

/*
 * With always_invalidate every chunk gets its own registration (so that it
 * can be invalidated on its own); otherwise as many chunks share one as the
 * device's fast-registration page list allows.
 */
static int rtrs_srv_map_chunks(struct rtrs_srv_path *path)
{
	struct rtrs_srv_sess *sess = path->sess;
	struct ib_device *ib_dev = path->dev->ib_dev;
	unsigned int per_mr, mrs_num, i, first;
	int err;

	if (rtrs_srv_always_invalidate) {
		per_mr = 1;
	} else {
		per_mr = min_t(unsigned int, sess->queue_depth,
			       max_t(u32, ib_dev->attrs.max_fast_reg_page_list_len, 1));
	}
	mrs_num = DIV_ROUND_UP(sess->queue_depth, per_mr);
	path->mrs = kcalloc(mrs_num, sizeof(*path->mrs), GFP_KERNEL);
	path->chunk_dma = kcalloc(sess->queue_depth, sizeof(*path->chunk_dma), GFP_KERNEL);
	if (!path->mrs || !path->chunk_dma) {
		kfree(path->mrs);
		kfree(path->chunk_dma);
		path->mrs = NULL;
		path->chunk_dma = NULL;
		return -ENOMEM;
	}

	for (i = 0, first = 0; i < mrs_num; i++, first += per_mr) {
		struct rtrs_srv_mr *m = &path->mrs[i];
		unsigned int n = min_t(unsigned int, per_mr, sess->queue_depth - first);
		struct scatterlist *sg;
		int j, mapped, nr;

		err = sg_alloc_table(&m->sgt, n, GFP_KERNEL);
		if (err)
			goto err;
		for_each_sg(m->sgt.sgl, sg, n, j)
			sg_set_page(sg, sess->chunks[first + j], rtrs_srv_max_chunk_size, 0);
		mapped = ib_dma_map_sg(ib_dev, m->sgt.sgl, n, DMA_BIDIRECTIONAL);
		if (!mapped) {
			err = -EINVAL;
			goto free_sgt;
		}
		m->mr = ib_alloc_mr(path->dev->pd, IB_MR_TYPE_MEM_REG, mapped);
		if (IS_ERR(m->mr)) {
			err = PTR_ERR(m->mr);
			goto unmap_sg;
		}
		nr = ib_map_mr_sg(m->mr, m->sgt.sgl, mapped, NULL, rtrs_srv_max_chunk_size);
		if (nr < mapped) {
			err = nr < 0 ? nr : -EINVAL;
			goto dereg;
		}
		/* Mapped entries may merge chunks: walk them a chunk at a time. */
		{
			unsigned int c = first;

			for_each_sg(m->sgt.sgl, sg, mapped, j) {
				u64 dma = sg_dma_address(sg);
				u64 end = dma + sg_dma_len(sg);

				for (; dma < end && c < first + n; dma += rtrs_srv_max_chunk_size)
					path->chunk_dma[c++] = dma;
			}
		}
		ib_update_fast_reg_key(m->mr, ib_inc_rkey(m->mr->rkey));
		path->mrs_num++;
		continue;
dereg:
		ib_dereg_mr(m->mr);
unmap_sg:
		ib_dma_unmap_sg(ib_dev, m->sgt.sgl, n, DMA_BIDIRECTIONAL);
free_sgt:
		sg_free_table(&m->sgt);
		goto err;
	}
	return 0;
err:
	pr_err("%s: cannot register the session's chunks: %d\n", path->name, err);
	rtrs_srv_unmap_chunks(path);
	return err;
}

/* --- connections ------------------------------------------------------------ */

static void rtrs_srv_qp_event(struct ib_event *ev, void *ctx)
{
	struct rtrs_srv_con *con = ctx;

	if (ev->event == IB_EVENT_COMM_EST)
		rdma_notify(con->cm_id, IB_EVENT_COMM_EST);
	else
		pr_info("%s: connection %u: QP event %s\n", con->path->name, con->cid,
			ib_event_msg(ev->event));
}

static int rtrs_srv_post_recv_info(struct rtrs_srv_con *con)
{
	struct ib_recv_wr wr = {};
	struct ib_sge sge = {
		.addr = con->info_dma,
		.length = rtrs_core_info_req_size(),
		.lkey = con->path->dev->pd->local_dma_lkey,
	};

	con->info_cqe.done = rtrs_srv_info_req_done;
	wr.wr_cqe = &con->info_cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ib_post_recv(con->qp, &wr, NULL);
}

/* Releases the QP, CQ and buffers; the cm_id and the struct stay. */
static void rtrs_srv_release_con(struct rtrs_srv_con *con)
{
	struct ib_device *ib_dev = con->path->dev->ib_dev;

	if (con->qp)
		rdma_destroy_qp(con->cm_id);
	con->qp = NULL;
	if (con->cq)
		ib_free_cq(con->cq);
	con->cq = NULL;
	if (con->info_buf) {
		ib_dma_unmap_single(ib_dev, con->info_dma, rtrs_core_info_req_size(),
				    DMA_FROM_DEVICE);
		kfree(con->info_buf);
	}
	con->info_buf = NULL;
}

static struct rtrs_srv_con *rtrs_srv_create_con(struct rtrs_srv_path *path,
						struct rdma_cm_id *cm_id,
						unsigned int cid)
{
	struct rtrs_srv_sess *sess = path->sess;
	struct ib_device *ib_dev = path->dev->ib_dev;
	struct ib_qp_init_attr qp_attr = {};
	u32 wr_limit = ib_dev->attrs.max_qp_wr;
	u32 max_send, max_recv;
	struct rtrs_srv_con *con;
	int err;

	con = kzalloc(sizeof(*con), GFP_KERNEL);
	if (!con)
		return ERR_PTR(-ENOMEM);
	con->kind = RTRS_SRV_CM_CON;
	con->path = path;
	con->cm_id = cm_id;
	con->cid = cid;

	if (cid == 0) {
		/* service traffic: info exchange, heartbeats and their acks */
		max_send = min_t(u32, wr_limit, RTRS_SRV_SERVICE_QUEUE_DEPTH * 2 + 2);
		max_recv = max_send;
	} else {
		/* per request: data write, response, and with invalidation two more */
		max_send = min_t(u32, wr_limit,
				 sess->queue_depth * (rtrs_srv_always_invalidate ? 5 : 3) + 1);
		max_recv = min_t(u32, wr_limit, sess->queue_depth + 1);
	}

	con->cq = ib_alloc_cq(ib_dev, con, max_send + max_recv,
			      cid % max(ib_dev->num_comp_vectors, 1), IB_POLL_WORKQUEUE);
	if (IS_ERR(con->cq)) {
		err = PTR_ERR(con->cq);
		con->cq = NULL;
		goto err;
	}
	qp_attr.event_handler = rtrs_srv_qp_event;
	qp_attr.qp_context = con;
	qp_attr.send_cq = con->cq;
	qp_attr.recv_cq = con->cq;
	qp_attr.cap.max_send_wr = max_send;
	qp_attr.cap.max_recv_wr = max_recv;
	qp_attr.cap.max_send_sge = 1;
	qp_attr.cap.max_recv_sge = 1;
	qp_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	qp_attr.qp_type = IB_QPT_RC;
	err = rdma_create_qp(cm_id, path->dev->pd, &qp_attr);
	if (err)
		goto err;
	con->qp = cm_id->qp;

	if (cid == 0) {
		con->info_buf = kzalloc(rtrs_core_info_req_size(), GFP_KERNEL);
		if (!con->info_buf) {
			err = -ENOMEM;
			goto err;
		}
		con->info_dma = ib_dma_map_single(ib_dev, con->info_buf,
						  rtrs_core_info_req_size(), DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(ib_dev, con->info_dma)) {
			kfree(con->info_buf);
			con->info_buf = NULL;
			err = -ENOMEM;
			goto err;
		}
		err = rtrs_srv_post_recv_info(con);
		if (err)
			goto err;
	}
	return con;
err:
	pr_err("%s: cannot set up connection %u: %d\n", path->name, cid, err);
	rtrs_srv_release_con(con);
	kfree(con);
	return ERR_PTR(err);
}

/* Zero-length RDMA write carrying only an immediate (heartbeats). */
static int rtrs_srv_post_imm(struct rtrs_srv_con *con, u32 imm)
{
	struct ib_rdma_wr wr = {
		.wr.wr_cqe = &rtrs_srv_send_cqe,
		.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.ex.imm_data = cpu_to_be32(imm),
	};

	return ib_post_send(con->qp, &wr.wr, NULL);
}

static int rtrs_srv_post_empty_recvs(struct rtrs_srv_con *con, unsigned int n)
{
	struct ib_recv_wr wr = { .wr_cqe = &rtrs_srv_recv_cqe };
	unsigned int i;
	int err;

	for (i = 0; i < n; i++) {
		err = ib_post_recv(con->qp, &wr, NULL);
		if (err)
			return err;
	}
	return 0;
}

/* --- completions ---------------------------------------------------------- */

static void rtrs_srv_wc_error(struct rtrs_srv_con *con, struct ib_wc *wc, const char *what)
{
	/* Flushes are the normal end of a QP, not news. */
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_err("%s: connection %u: %s failed: %s\n", con->path->name, con->cid,
		       what, ib_wc_status_msg(wc->status));
	rtrs_srv_close_path(con->path);
}

static void rtrs_srv_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_con *con = cq->cq_context;

	if (wc->status != IB_WC_SUCCESS)
		rtrs_srv_wc_error(con, wc, "send");
}

static void rtrs_srv_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_con *con = cq->cq_context;
	struct rtrs_srv_path *path = con->path;
	u32 imm, type;

	if (wc->status != IB_WC_SUCCESS) {
		rtrs_srv_wc_error(con, wc, "receive");
		return;
	}
	if (wc->opcode != IB_WC_RECV_RDMA_WITH_IMM) {
		pr_err_ratelimited("%s: connection %u: unexpected receive opcode %d\n",
				   path->name, con->cid, wc->opcode);
		rtrs_srv_close_path(path);
		return;
	}
	WRITE_ONCE(path->hb_missed, 0);
	if (rtrs_srv_post_empty_recvs(con, 1)) {
		rtrs_srv_close_path(path);
		return;
	}
	imm = be32_to_cpu(wc->ex.imm_data);
	type = rtrs_core_imm_type(imm);
	switch (type) {
	case RTRS_CORE_IMM_HB_MSG:
		if (rtrs_srv_post_imm(con, rtrs_core_imm(RTRS_CORE_IMM_HB_ACK, 0)))
			rtrs_srv_close_path(path);
		break;
	case RTRS_CORE_IMM_HB_ACK:
		break;
	case RTRS_CORE_IMM_IO_REQ:
		rtrs_srv_io_request(con, rtrs_core_imm_payload(imm));
		break;
	default:
		pr_err_ratelimited("%s: unknown immediate type %u; closing the path\n",
				   path->name, type);
		rtrs_srv_close_path(path);
		break;
	}
}

/* --- heartbeats ----------------------------------------------------------- */

static void rtrs_srv_hb_work(struct work_struct *work)
{
	struct rtrs_srv_path *path = container_of(to_delayed_work(work),
						  struct rtrs_srv_path, hb_work);
	unsigned int missed = READ_ONCE(path->hb_missed);

	switch (rtrs_core_hb_tick(&missed)) {
	case RTRS_CORE_HB_DEAD:
		pr_err("%s: no heartbeat from the client; closing the path\n", path->name);
		rtrs_srv_close_path(path);
		return;
	case RTRS_CORE_HB_SEND:
		if (rtrs_srv_post_imm(path->cons[0], rtrs_core_imm(RTRS_CORE_IMM_HB_MSG, 0))) {
			rtrs_srv_close_path(path);
			return;
		}
		break;
	case RTRS_CORE_HB_WAIT:
		break;
	}
	WRITE_ONCE(path->hb_missed, missed);
	queue_delayed_work(rtrs_srv_wq, &path->hb_work,
			   msecs_to_jiffies(RTRS_CORE_HB_INTERVAL_MS));
}

/* --- the info exchange --------------------------------------------------- */

static void rtrs_srv_info_req_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_con *con = cq->cq_context;
	struct rtrs_srv_path *path = con->path;

	if (wc->status != IB_WC_SUCCESS) {
		rtrs_srv_wc_error(con, wc, "info request receive");
		return;
	}
	if (wc->opcode != IB_WC_RECV) {
		pr_err("%s: info request: unexpected opcode %d\n", path->name, wc->opcode);
		rtrs_srv_close_path(path);
		return;
	}
	ib_dma_sync_single_for_cpu(path->dev->ib_dev, con->info_dma,
				   rtrs_core_info_req_size(), DMA_FROM_DEVICE);
	path->info_req_len = wc->byte_len;
	/* The work may sleep (sysfs, ULP callback); completions should not. */
	queue_work(rtrs_srv_wq, &path->info_work);
}

static bool rtrs_srv_name_taken(struct rtrs_srv_ctx *ctx, struct rtrs_srv_sess *self,
				const char *name)
{
	struct rtrs_srv_sess *sess;

	list_for_each_entry(sess, &ctx->sessions, entry)
		if (sess != self && sess->name[0] && !strcmp(sess->name, name))
			return true;
	return false;
}

static int rtrs_srv_link_up(struct rtrs_srv_path *path)
{
	struct rtrs_srv_sess *sess = path->sess;
	int err = 0;

	mutex_lock(&sess->ev_lock);
	if (sess->paths_up == 0)
		err = sess->ctx->ops.link_ev(sess, RTRS_SRV_LINK_EV_CONNECTED, NULL);
	if (!err) {
		sess->paths_up++;
		path->established = true;
	}
	mutex_unlock(&sess->ev_lock);
	return err;
}

static void rtrs_srv_link_down(struct rtrs_srv_path *path)
{
	struct rtrs_srv_sess *sess = path->sess;

	if (!path->established)
		return;
	mutex_lock(&sess->ev_lock);
	path->established = false;
	if (--sess->paths_up == 0)
		sess->ctx->ops.link_ev(sess, RTRS_SRV_LINK_EV_DISCONNECTED, sess->priv);
	mutex_unlock(&sess->ev_lock);
}

/* Registers the chunks and sends their descriptors, in one chain. */
static int rtrs_srv_send_info_rsp(struct rtrs_srv_path *path)
{
	struct rtrs_srv_con *con = path->cons[0];
	struct ib_device *ib_dev = path->dev->ib_dev;
	size_t len = rtrs_core_info_rsp_size(path->mrs_num);
	struct ib_reg_wr *reg;
	struct ib_send_wr send = {};
	struct ib_sge sge;
	unsigned int i;
	int err;

	if (!path->info_rsp) {
		path->info_rsp_len = len;
		path->info_rsp = kzalloc(len, GFP_KERNEL);
		if (!path->info_rsp)
			return -ENOMEM;
		path->info_rsp_dma = ib_dma_map_single(ib_dev, path->info_rsp, len, DMA_TO_DEVICE);
		if (ib_dma_mapping_error(ib_dev, path->info_rsp_dma)) {
			kfree(path->info_rsp);
			path->info_rsp = NULL;
			return -ENOMEM;
		}
	}
	reg = kcalloc(path->mrs_num, sizeof(*reg), GFP_KERNEL);
	if (!reg)
		return -ENOMEM;

	rtrs_core_build_info_rsp(path->info_rsp, path->mrs_num);
	for (i = 0; i < path->mrs_num; i++) {
		struct ib_mr *mr = path->mrs[i].mr;

		rtrs_core_info_rsp_set_desc(path->info_rsp, i, mr->iova, mr->rkey, mr->length);
		reg[i].wr.opcode = IB_WR_REG_MR;
		reg[i].wr.wr_cqe = &rtrs_srv_send_cqe;
		reg[i].wr.next = i + 1 < path->mrs_num ? &reg[i + 1].wr : &send;
		reg[i].mr = mr;
		reg[i].key = mr->rkey;
		reg[i].access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	}
	ib_dma_sync_single_for_device(ib_dev, path->info_rsp_dma, len, DMA_TO_DEVICE);
	sge.addr = path->info_rsp_dma;
	sge.length = len;
	sge.lkey = path->dev->pd->local_dma_lkey;
	send.wr_cqe = &rtrs_srv_send_cqe;
	send.opcode = IB_WR_SEND;
	send.send_flags = IB_SEND_SIGNALED;
	send.sg_list = &sge;
	send.num_sge = 1;
	err = ib_post_send(con->qp, path->mrs_num ? &reg[0].wr : &send, NULL);
	kfree(reg);
	return err;
}

static void rtrs_srv_info_work(struct work_struct *work)
{
	struct rtrs_srv_path *path = container_of(work, struct rtrs_srv_path, info_work);
	struct rtrs_srv_sess *sess = path->sess;
	struct rtrs_srv_ctx *ctx = sess->ctx;
	char name[RTRS_SRV_NAME_MAX + 1];
	char why[128];
	unsigned int cid;
	int err;

	err = rtrs_core_parse_info_req(path->cons[0]->info_buf, path->info_req_len,
				       name, sizeof(name), why, sizeof(why));
	if (err) {
		pr_err("%s: bad info request: %s\n", path->name, why);
		goto close;
	}

	mutex_lock(&ctx->lock);
	if (rtrs_srv_path_state(path) != RTRS_SRV_PATH_CONNECTING) {
		mutex_unlock(&ctx->lock);
		return;	/* already being closed */
	}
	for (cid = 0; cid < path->con_num; cid++) {
		if (!path->cons[cid]) {
			pr_err("%s: info request before connection %u of %u is up\n",
			       path->name, cid, path->con_num);
			err = -EIO;
			goto unlock_close;
		}
	}
	if (rtrs_srv_name_taken(ctx, sess, name)) {
		pr_err("%s: session name '%s' is taken by another session\n", path->name, name);
		err = -EPERM;
		goto unlock_close;
	}
	if (!sess->name[0])
		strscpy(sess->name, name, sizeof(sess->name));
	else if (strcmp(sess->name, name)) {
		pr_err("%s: path names session '%s', but it joined session '%s'\n",
		       path->name, name, sess->name);
		err = -EINVAL;
		goto unlock_close;
	}

	for (cid = 0; cid < path->con_num; cid++) {
		err = rtrs_srv_post_empty_recvs(path->cons[cid], cid == 0 ?
						RTRS_SRV_SERVICE_QUEUE_DEPTH :
						sess->queue_depth);
		if (err) {
			pr_err("%s: cannot post receives on connection %u: %d\n",
			       path->name, cid, err);
			goto unlock_close;
		}
	}
	err = rtrs_srv_sysfs_add_path(path);
	if (err)
		goto unlock_close;
	if (!rtrs_srv_path_set_state(path, RTRS_SRV_PATH_CONNECTED)) {
		mutex_unlock(&ctx->lock);
		return;
	}
	mutex_unlock(&ctx->lock);

	err = rtrs_srv_link_up(path);
	if (err) {
		pr_err("%s: the upper layer refused the session: %d\n", path->name, err);
		goto close;
	}
	err = rtrs_srv_send_info_rsp(path);
	if (err) {
		pr_err("%s: cannot send the info response: %d\n", path->name, err);
		goto close;
	}
	queue_delayed_work(rtrs_srv_wq, &path->hb_work,
			   msecs_to_jiffies(RTRS_CORE_HB_INTERVAL_MS));
	pr_info("%s: path %s is up\n", sess->name, path->name);
	return;

unlock_close:
	mutex_unlock(&ctx->lock);
close:
	rtrs_srv_close_path(path);
}

/* --- teardown ------------------------------------------------------------- */

static void rtrs_srv_close_work(struct work_struct *work)
{
	struct rtrs_srv_path *path = container_of(work, struct rtrs_srv_path, close_work);
	struct rtrs_srv_sess *sess = path->sess;
	struct rtrs_srv_ctx *ctx = sess->ctx;
	unsigned int cid;

	/* A connect handler still attaching a connection finishes first. */
	mutex_lock(&ctx->lock);
	mutex_unlock(&ctx->lock);

	/* Stop the traffic: no completion runs after the drains. */
	for (cid = 0; cid < path->con_num; cid++) {
		struct rtrs_srv_con *con = path->cons[cid];

		if (!con)
			continue;
		rdma_disconnect(con->cm_id);
		ib_drain_qp(con->qp);
	}
	cancel_delayed_work_sync(&path->hb_work);
	cancel_work_sync(&path->info_work);
	/* Requests the ULP holds are answered (into the void) before it is told. */
	rtrs_srv_io_wait_answers(path);

	mutex_lock(&ctx->lock);
	rtrs_srv_sysfs_remove_path(path);
	mutex_unlock(&ctx->lock);

	rtrs_srv_link_down(path);

	for (cid = 0; cid < path->con_num; cid++) {
		struct rtrs_srv_con *con = path->cons[cid];
		struct rdma_cm_id *cm_id;

		if (!con)
			continue;
		cm_id = con->cm_id;
		rtrs_srv_release_con(con);
		/*
		 * Waits for a CM callback still running on it (they only ask for
		 * the close that is running here) and stops further ones; only
		 * then may the struct they find in cm_id->context go.
		 */
		rdma_destroy_id(cm_id);
		kfree(con);
		path->cons[cid] = NULL;
	}
	rtrs_srv_io_free_path(path);
	rtrs_srv_unmap_chunks(path);
	if (path->info_rsp) {
		ib_dma_unmap_single(path->dev->ib_dev, path->info_rsp_dma,
				    path->info_rsp_len, DMA_TO_DEVICE);
		kfree(path->info_rsp);
	}
	rtrs_srv_dev_put(path->dev);

	mutex_lock(&ctx->lock);
	list_del(&path->entry);
	if (--sess->paths_num == 0)
		rtrs_srv_sess_free_locked(sess);
	mutex_unlock(&ctx->lock);

	rtrs_srv_path_set_state(path, RTRS_SRV_PATH_CLOSED);
	kfree(path->cons);
	rtrs_srv_sysfs_put_path(path);
}

/* --- connection requests ---------------------------------------------------- */

/* Refuses a request; the non-zero return makes RDMA CM destroy the cm_id. */
static int rtrs_srv_reject(struct rdma_cm_id *cm_id, int err)
{
	u8 rsp[64];
	size_t len = rtrs_core_conn_rsp_size();
	int ret;

	if (WARN_ON_ONCE(len > sizeof(rsp)))
		len = sizeof(rsp);
	rtrs_core_build_conn_rsp(rsp, err, 0, 0, 0, 0);
	ret = rdma_reject(cm_id, rsp, len, IB_CM_REJ_CONSUMER_DEFINED);
	if (ret)
		pr_err("rdma_reject: %d\n", ret);
	return err;
}

static int rtrs_srv_accept(struct rtrs_srv_path *path, struct rdma_cm_id *cm_id)
{
	u8 rsp[64];
	struct rdma_conn_param param = {
		.rnr_retry_count = 7,
		.private_data = rsp,
		.private_data_len = rtrs_core_conn_rsp_size(),
	};

	/* The first page of a chunk is for the request's headers. */
	rtrs_core_build_conn_rsp(rsp, 0, path->sess->queue_depth,
				 rtrs_srv_max_chunk_size - PAGE_SIZE, PAGE_SIZE,
				 rtrs_srv_always_invalidate ? RTRS_CORE_CONN_RSP_NEW_RKEY : 0);
	return rdma_accept(cm_id, &param);
}

static struct rtrs_srv_path *rtrs_srv_find_path(struct rtrs_srv_sess *sess,
						const uuid_t *uuid)
{
	struct rtrs_srv_path *path;

	list_for_each_entry(path, &sess->paths, entry)
		if (uuid_equal(&path->uuid, uuid))
			return path;
	return NULL;
}

static bool rtrs_srv_same_ip(const struct sockaddr_storage *a,
			     const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	switch (a->ss_family) {
	case AF_INET:
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	case AF_INET6:
		return ipv6_addr_equal(&((const struct sockaddr_in6 *)a)->sin6_addr,
				       &((const struct sockaddr_in6 *)b)->sin6_addr);
	}
	return !memcmp(a, b, sizeof(*a));
}

static bool rtrs_srv_path_addr_taken(struct rtrs_srv_sess *sess,
				     struct rdma_cm_id *cm_id)
{
	struct rtrs_srv_path *path;

	list_for_each_entry(path, &sess->paths, entry)
		if (rtrs_srv_same_ip(&path->client_addr, &cm_id->route.addr.dst_addr) &&
		    rtrs_srv_same_ip(&path->server_addr, &cm_id->route.addr.src_addr))
			return true;
	return false;
}

static struct rtrs_srv_path *rtrs_srv_alloc_path(struct rtrs_srv_sess *sess,
						 struct rdma_cm_id *cm_id,
						 const struct rtrs_core_conn_req *req)
{
	struct rtrs_srv_path *path;
	int n, err = -ENOMEM;

	path = kzalloc(sizeof(*path), GFP_KERNEL);
	if (!path)
		return ERR_PTR(-ENOMEM);
	rtrs_srv_sysfs_init_path(path);	/* from here on freed by its put */
	path->sess = sess;
	import_uuid(&path->uuid, req->sess_uuid);
	path->con_num = req->cid_num;
	path->recon_cnt = req->recon_cnt;
	spin_lock_init(&path->state_lock);
	path->state = RTRS_SRV_PATH_CONNECTING;
	INIT_WORK(&path->close_work, rtrs_srv_close_work);
	INIT_WORK(&path->info_work, rtrs_srv_info_work);
	INIT_DELAYED_WORK(&path->hb_work, rtrs_srv_hb_work);
	init_waitqueue_head(&path->inflight_wq);
	memcpy(&path->client_addr, &cm_id->route.addr.dst_addr, sizeof(path->client_addr));
	memcpy(&path->server_addr, &cm_id->route.addr.src_addr, sizeof(path->server_addr));
	n = rtrs_srv_format_addr((struct sockaddr *)&path->client_addr, path->name,
				 sizeof(path->name));
	n += scnprintf(path->name + n, sizeof(path->name) - n, "@");
	rtrs_srv_format_addr((struct sockaddr *)&path->server_addr, path->name + n,
			     sizeof(path->name) - n);
	path->hca_port = cm_id->port_num;

	path->cons = kcalloc(path->con_num, sizeof(*path->cons), GFP_KERNEL);
	if (!path->cons)
		goto put;
	path->dev = rtrs_srv_dev_get(cm_id->device);
	if (!path->dev)
		goto free_cons;
	err = rtrs_srv_map_chunks(path);
	if (err)
		goto put_dev;
	err = rtrs_srv_io_init_path(path);
	if (err)
		goto unmap;
	list_add_tail(&path->entry, &sess->paths);
	sess->paths_num++;
	return path;

unmap:
	rtrs_srv_unmap_chunks(path);
put_dev:
	rtrs_srv_dev_put(path->dev);
free_cons:
	kfree(path->cons);
put:
	rtrs_srv_sysfs_put_path(path);
	return ERR_PTR(err);
}

/*
 * A connection request, in the CM handler of its new cm_id. On a non-zero
 * return RDMA CM destroys the cm_id; once a connection holds it, it is the
 * path's to destroy and we return 0 whatever happens.
 */
int rtrs_srv_handle_connect(struct rtrs_srv_ctx *ctx, struct rdma_cm_id *cm_id,
			    const void *data, size_t len)
{
	struct rtrs_core_conn_req req;
	struct rtrs_srv_sess *sess;
	struct rtrs_srv_path *path;
	struct rtrs_srv_con *con;
	uuid_t uuid;
	char why[128];
	int err;

	err = rtrs_core_parse_conn_req(data, len, &req, why, sizeof(why));
	if (err) {
		pr_err_ratelimited("connection request refused: %s\n", why);
		return rtrs_srv_reject(cm_id, err);
	}

	mutex_lock(&ctx->lock);
	import_uuid(&uuid, req.paths_uuid);
	sess = rtrs_srv_find_sess(ctx, &uuid);
	if (!sess) {
		if (!req.first_conn) {
			pr_err_ratelimited("connection request refused: no such session, and not the first connection of a new one\n");
			err = -ENXIO;
			goto unlock_reject;
		}
		sess = rtrs_srv_create_sess(ctx, &uuid);
		if (!sess) {
			err = -ENOMEM;
			goto unlock_reject;
		}
	}

	import_uuid(&uuid, req.sess_uuid);
	path = rtrs_srv_find_path(sess, &uuid);
	if (path) {
		if (rtrs_srv_path_state(path) != RTRS_SRV_PATH_CONNECTING) {
			pr_err_ratelimited("%s: connection %u refused: the path is already %s\n",
					   path->name, req.cid,
					   rtrs_srv_path_state(path) == RTRS_SRV_PATH_CONNECTED ?
					   "established" : "closing");
			err = -ECONNRESET;
			goto unlock_reject;
		}
		if (req.cid_num != path->con_num || path->cons[req.cid]) {
			pr_err_ratelimited("%s: connection %u of %u refused: %s\n", path->name,
					   req.cid, req.cid_num,
					   req.cid_num != path->con_num ?
					   "the path has another connection count" :
					   "that connection exists");
			err = -ECONNRESET;
			goto unlock_reject;
		}
	} else {
		if (sess->paths_num >= RTRS_SRV_MAX_PATHS) {
			pr_err_ratelimited("session has %u paths: refusing another\n",
					   sess->paths_num);
			err = -ECONNRESET;
			goto unlock_reject_sess;
		}
		if (rtrs_srv_path_addr_taken(sess, cm_id)) {
			pr_err_ratelimited("session has a path with the same addresses already\n");
			err = -EEXIST;
			goto unlock_reject_sess;
		}
		path = rtrs_srv_alloc_path(sess, cm_id, &req);
		if (IS_ERR(path)) {
			err = PTR_ERR(path);
			goto unlock_reject_sess;
		}
	}

	con = rtrs_srv_create_con(path, cm_id, req.cid);
	if (IS_ERR(con)) {
		err = PTR_ERR(con);
		rtrs_srv_close_path(path);
		goto unlock_reject;
	}
	path->cons[req.cid] = con;
	cm_id->context = con;

	err = rtrs_srv_accept(path, cm_id);
	if (err) {
		pr_err("%s: rdma_accept of connection %u: %d\n", path->name, req.cid, err);
		rtrs_srv_close_path(path);
	}
	mutex_unlock(&ctx->lock);
	return 0;

unlock_reject_sess:
	if (!sess->paths_num)
		rtrs_srv_sess_free_locked(sess);
unlock_reject:
	mutex_unlock(&ctx->lock);
	return rtrs_srv_reject(cm_id, err);
}

/* --- closing many paths -------------------------------------------------- */

void rtrs_srv_close_ctx_paths(struct rtrs_srv_ctx *ctx)
{
	struct rtrs_srv_sess *sess;
	struct rtrs_srv_path *path;

	mutex_lock(&ctx->lock);
	list_for_each_entry(sess, &ctx->sessions, entry)
		list_for_each_entry(path, &sess->paths, entry)
			rtrs_srv_close_path(path);
	mutex_unlock(&ctx->lock);
}
