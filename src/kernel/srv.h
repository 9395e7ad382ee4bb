/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rtrs-server's kernel objects and the functions the glue files share.
 *
 * Ownership, top down:
 *   rtrs_srv_ctx  - one per rtrs_srv_open(): the listening cm_id and the
 *                   sessions opened through it; ctx->lock guards the session
 *                   list, every session's path list and every path's
 *                   connection table.
 *   rtrs_srv_sess - a client session (paths sharing a paths uuid): the chunk
 *                   buffers and, from its first path on, a device in the
 *                   rtrs-server class. Freed with its last path.
 *   rtrs_srv_path - cid_num connections sharing a path uuid; a kobject under
 *                   the session's paths/ folder once the info exchange is done.
 *   rtrs_srv_con  - one RDMA CM connection: cm_id, QP and CQ.
 *
 * A path is torn down once (rtrs_srv_close_path() claims it) by close_work
 * on rtrs_srv_wq: disconnect, drain, remove from sysfs, notify the ULP,
 * destroy the connections, release memory.
 */
#ifndef RTRS_SRV_GLUE_H
#define RTRS_SRV_GLUE_H

#include <linux/device.h>
#include <linux/kobject.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/uuid.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "rtrs/rtrs-srv.h"

#define RTRS_SRV_NAME_MAX 255	/* session name bytes, NUL excluded: NAME_MAX */

extern bool rtrs_srv_always_invalidate;
extern int rtrs_srv_max_chunk_size;
extern int rtrs_srv_sess_queue_depth;
extern struct class *rtrs_srv_class;
struct class *rtrs_srv_class_create(const char *name);
extern struct workqueue_struct *rtrs_srv_wq;

/* An RDMA device and the protection domain all our paths on it share. */
struct rtrs_srv_dev {
	struct list_head entry;
	struct kref ref;
	struct ib_device *ib_dev;
	struct ib_pd *pd;
};

/*
 * What a cm_id's context points to: the listening id carries its context,
 * a connection's id its connection. The first member of both says which.
 */
enum rtrs_srv_cm_kind {
	RTRS_SRV_CM_LISTEN = 0x4c53544e,	/* "LSTN" */
	RTRS_SRV_CM_CON = 0x434f4e4e,		/* "CONN" */
};

struct rtrs_srv_ctx {
	enum rtrs_srv_cm_kind kind;	/* RTRS_SRV_CM_LISTEN */
	struct rtrs_srv_ops ops;
	u16 port;
	struct rdma_cm_id *listen_id;
	struct mutex lock;
	struct list_head sessions;
	struct list_head entry;	/* on the module's list of contexts */
};

struct rtrs_srv_sess {
	struct device dev;	/* in the class once dev_added */
	struct rtrs_srv_ctx *ctx;
	struct list_head entry;	/* on ctx->sessions */
	uuid_t paths_uuid;
	char name[RTRS_SRV_NAME_MAX + 1];
	struct list_head paths;
	unsigned int paths_num;
	bool dev_added;
	struct kobject *paths_kobj;
	struct mutex ev_lock;	/* orders link events */
	unsigned int paths_up;
	void *priv;
	int queue_depth;
	struct page **chunks;
};

enum rtrs_srv_path_state {
	RTRS_SRV_PATH_CONNECTING,
	RTRS_SRV_PATH_CONNECTED,
	RTRS_SRV_PATH_CLOSING,
	RTRS_SRV_PATH_CLOSED,
};

struct rtrs_srv_path;
struct rtrs_srv_con;

/* One memory registration over one or more chunks of the session. */
struct rtrs_srv_mr {
	struct ib_mr *mr;
	struct sg_table sgt;
	/* always_invalidate only (one chunk per registration): */
	struct ib_cqe inv_cqe;		/* the local invalidation before a request */
	struct rtrs_srv_con *inv_con;	/* where the request came in */
	u32 inv_off;			/* and the offset of its header */
	void *rkey_msg;			/* the new key, sent with the response */
	u64 rkey_msg_dma;
};

/*
 * One I/O request, from its arrival until the ULP answers it. The first
 * three fields are laid out as upstream's, because upstream rnbd-server's
 * trace event (rnbd-srv-trace.c, built with upstream's private header)
 * reads op->dir.
 */
struct rtrs_srv_op {
	struct rtrs_srv_con *con;
	u32 msg_id;			/* = its chunk */
	u8 dir;				/* READ or WRITE */
	struct rtrs_srv_path *path;
	bool need_inval;
	u8 sg_cnt;
	u64 addr;			/* read: the client's buffer */
	u32 key;
	u32 len;
};

struct rtrs_srv_stats {
	atomic64_t read_cnt;
	atomic64_t read_bytes;
	atomic64_t write_cnt;
	atomic64_t write_bytes;
	atomic_t inflight;
};

/*
 * stats/ of a path: a kobject of its own, freed by its own release, which may
 * run after the path is gone (CONFIG_DEBUG_KOBJECT_RELEASE delays it by
 * seconds). Its show and store use the path only while the file exists:
 * kobject_del() waits for them.
 */
struct rtrs_srv_stats_kobj {
	struct kobject kobj;
	struct rtrs_srv_path *path;
};

struct rtrs_srv_path {
	struct kobject kobj;
	struct rtrs_srv_stats_kobj *stats_kobj;	/* in sysfs when set */
	bool kobj_added;
	struct rtrs_srv_sess *sess;
	struct list_head entry;	/* on sess->paths */
	uuid_t uuid;
	u16 recon_cnt;
	unsigned int con_num;
	struct rtrs_srv_con **cons;
	struct sockaddr_storage client_addr;	/* the client's end */
	struct sockaddr_storage server_addr;	/* our end */
	char name[2 * 64];	/* "<client>@<server>" */
	struct rtrs_srv_dev *dev;
	u8 hca_port;

	spinlock_t state_lock;
	enum rtrs_srv_path_state state;
	bool established;	/* counted in sess->paths_up */

	struct rtrs_srv_mr *mrs;
	unsigned int mrs_num;
	u64 *chunk_dma;	/* DMA address of each chunk on this path's device */
	struct rtrs_srv_op *ops;	/* one per chunk */
	wait_queue_head_t inflight_wq;	/* teardown waits for answers */

	struct delayed_work hb_work;
	unsigned int hb_missed;
	struct work_struct info_work;
	size_t info_req_len;	/* bytes of the received info request */
	void *info_rsp;		/* the info response, DMA-mapped */
	u64 info_rsp_dma;
	size_t info_rsp_len;
	struct work_struct close_work;

	struct rtrs_srv_stats stats;
};

struct rtrs_srv_con {
	enum rtrs_srv_cm_kind kind;	/* RTRS_SRV_CM_CON */
	struct rtrs_srv_path *path;
	struct rdma_cm_id *cm_id;
	struct ib_qp *qp;
	struct ib_cq *cq;
	unsigned int cid;
	/* con 0 only: the buffer for the client's info request */
	void *info_buf;
	u64 info_dma;
	struct ib_cqe info_cqe;
};

static_assert(offsetof(struct rtrs_srv_op, con) == 0);
static_assert(offsetof(struct rtrs_srv_op, msg_id) == 8);
static_assert(offsetof(struct rtrs_srv_op, dir) == 12);

/* srv_dev.c */
struct rtrs_srv_dev *rtrs_srv_dev_get(struct ib_device *ib_dev);
void rtrs_srv_dev_put(struct rtrs_srv_dev *dev);
int rtrs_srv_dev_init(void);
void rtrs_srv_dev_exit(void);

/* srv_path.c */
int rtrs_srv_handle_connect(struct rtrs_srv_ctx *ctx, struct rdma_cm_id *cm_id,
			    const void *data, size_t len);
void rtrs_srv_close_path(struct rtrs_srv_path *path);
void rtrs_srv_close_ctx_paths(struct rtrs_srv_ctx *ctx);
void rtrs_srv_close_dev_paths(struct ib_device *ib_dev);

/* srv_io.c */
void rtrs_srv_io_request(struct rtrs_srv_con *con, u32 payload);
int rtrs_srv_io_init_path(struct rtrs_srv_path *path);
void rtrs_srv_io_free_path(struct rtrs_srv_path *path);
void rtrs_srv_io_wait_answers(struct rtrs_srv_path *path);

/* srv_path.c, for srv_io.c */
extern struct ib_cqe rtrs_srv_send_cqe;

/* srv_sysfs.c */
void rtrs_srv_sysfs_init_sess(struct rtrs_srv_sess *sess);
void rtrs_srv_sysfs_init_path(struct rtrs_srv_path *path);
int rtrs_srv_sysfs_add_path(struct rtrs_srv_path *path);
void rtrs_srv_sysfs_remove_path(struct rtrs_srv_path *path);
void rtrs_srv_sysfs_put_path(struct rtrs_srv_path *path);
int rtrs_srv_format_addr(const struct sockaddr *addr, char *buf, size_t len);

#endif /* RTRS_SRV_GLUE_H */
