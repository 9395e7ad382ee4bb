/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel environment: everything the C++ core asks of the kernel, and
 * nothing else. The C glue (src/kernel/env_*.c) implements it on top of the
 * kernel; the host tests implement it with a fake that records every call,
 * fails any of them on demand and delivers events in any order
 * (test/unit/core/fake_env.*).
 *
 * Plain C types and opaque handles only: the glue cannot see C++ and the
 * core cannot see kernel headers. Every handle is created and destroyed by
 * the core through the calls below; the glue never keeps one alive on its
 * own (sysfs objects excepted: see rtrs_env_sysfs_path_del()).
 *
 * Context: unless a call says otherwise it may sleep, and is made with no
 * lock of ours held. "io lock" is the spinlock of a path
 * (RTRS_ENV_LOCK_PATH_IO), "connection lock" that of one connection
 * (RTRS_ENV_LOCK_CON_IO), each taken with interrupts saved; the glue
 * asserts (lockdep) what a call says it needs.
 */
#ifndef RTRS_CORE_ENV_H
#define RTRS_CORE_ENV_H

#include "core/rtrs_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- locks ---------------------------------------------------------------- */

/*
 * Each kind is its own lockdep class. Order, outermost first:
 * SERVERS > SERVER > MODULE > CON_IO > PATH_IO (the list of servers is
 * held while a server's lock is: closing what a new admission policy
 * refuses; a server's lock while the module's is taken: claiming a
 * session's name, a path's device; the module's while a path's io lock
 * is: closing a device's paths; a connection's while its path's io lock
 * is: the I/O path closing the path on an error, the info response posted
 * on connection 0). SESSION_EV is taken with
 * none of the others held (it orders the upper layer's link events of one
 * session), and the ULP's link_ev callback (rtrs_env_ulp_link_ev()) runs
 * under it.
 */
enum rtrs_env_lock_kind {
	RTRS_ENV_LOCK_MODULE,		/* mutex: servers, devices, memory budget */
	RTRS_ENV_LOCK_SERVER,		/* mutex: its sessions, paths, connections */
	RTRS_ENV_LOCK_SESSION_EV,	/* mutex: one session's link events */
	RTRS_ENV_LOCK_PATH_IO,		/* spinlock, irqsave: one path's I/O state */
	RTRS_ENV_LOCK_SERVERS,		/* mutex: the module's list of servers */
	RTRS_ENV_LOCK_CON_IO,		/* spinlock, irqsave: one connection's I/O state */
	RTRS_ENV_LOCK_KINDS
};
struct rtrs_env_lock;
struct rtrs_env_lock *rtrs_env_lock_new(enum rtrs_env_lock_kind kind);
void rtrs_env_lock_free(struct rtrs_env_lock *lock);
/* Any context for PATH_IO and CON_IO (each saves the interrupt state in the lock). */
void rtrs_env_lock_acquire(struct rtrs_env_lock *lock);
void rtrs_env_lock_release(struct rtrs_env_lock *lock);

/* --- time, deferred work, waiting -------------------------------------------- */

/* Milliseconds on a monotonic clock; any context. */
__UINT64_TYPE__ rtrs_env_now_ms(void);
/*
 * Nanoseconds of a cheap clock, not comparable with rtrs_env_now_ms(); any
 * context (the I/O path reads it for its latency histograms). Two readings
 * may be taken on two CPUs: the core copes with a later one that is smaller.
 */
__UINT64_TYPE__ rtrs_env_now_ns(void);

/*
 * A work item that calls rtrs_core_run_work(owner, kind) in process
 * context on the module's workqueue, after delay_ms. Queueing one that is
 * already pending does nothing (its earlier time stands). Queueing: any
 * context. kind is below 8: each kind is a lockdep class of its own, so
 * that a work may wait for the work of another kind.
 */
struct rtrs_env_work;
struct rtrs_env_work *rtrs_env_work_new(void *owner, unsigned int kind);
void rtrs_env_work_queue(struct rtrs_env_work *work, unsigned int delay_ms);
/* The same, but a pending run moves to delay_ms from now. Any context. */
void rtrs_env_work_requeue(struct rtrs_env_work *work, unsigned int delay_ms);
/* Cancels a pending run and waits for a running one to end. */
void rtrs_env_work_cancel_sync(struct rtrs_env_work *work);
/* Cancels a pending run without waiting: a work may call it on itself. */
void rtrs_env_work_cancel(struct rtrs_env_work *work);
/* Must be neither pending nor running. */
void rtrs_env_work_free(struct rtrs_env_work *work);

/* A one-shot event: wait() sleeps until done() (any context) was called. */
struct rtrs_env_waiter;
struct rtrs_env_waiter *rtrs_env_waiter_new(void);
void rtrs_env_waiter_done(struct rtrs_env_waiter *w);
void rtrs_env_waiter_wait(struct rtrs_env_waiter *w);
void rtrs_env_waiter_free(struct rtrs_env_waiter *w);

/* --- memory ----------------------------------------------------------------- */

/*
 * One chunk: size bytes (a power of two, at least a page), zeroed, on a
 * boundary of its size; NULL when memory is short, without the kernel's
 * allocation-failure report (the core refuses the session and says why).
 */
void *rtrs_env_chunk_alloc(__UINT32_TYPE__ size);
void rtrs_env_chunk_free(void *chunk, __UINT32_TYPE__ size);
/* Bytes of RAM the machine has (for the default memory budget). */
__UINT64_TYPE__ rtrs_env_total_ram(void);
/*
 * Bytes the machine could give now without swapping (the kernel's estimate
 * behind MemAvailable), for the headroom a new session must leave.
 */
__UINT64_TYPE__ rtrs_env_available_ram(void);

/* --- RDMA devices ------------------------------------------------------------ */

/* What the core needs to know of a device. */
struct rtrs_env_dev_attrs {
	char name[64];				/* "rxe0" */
	__UINT32_TYPE__ max_qp_wr;		/* work requests per queue */
	__UINT32_TYPE__ max_cqe;		/* completions per CQ */
	__UINT32_TYPE__ max_fast_reg_page_list_len;
	__UINT32_TYPE__ num_comp_vectors;
};

/*
 * The device a connection request came in on (ib_dev: the opaque value
 * rtrs_core_on_connect_request() was given) with a protection domain of
 * ours on it. NULL on failure.
 */
struct rtrs_env_dev;
struct rtrs_env_dev *rtrs_env_dev_open(void *ib_dev, struct rtrs_env_dev_attrs *attrs);
void rtrs_env_dev_close(struct rtrs_env_dev *dev);

/* DMA directions. */
enum rtrs_env_dma_dir {
	RTRS_ENV_DMA_BIDIRECTIONAL,
	RTRS_ENV_DMA_TO_DEVICE,
	RTRS_ENV_DMA_FROM_DEVICE,
};

/* A chunk mapped for DMA on dev: its DMA address, or 0 on failure. */
__UINT64_TYPE__ rtrs_env_dma_map_chunk(struct rtrs_env_dev *dev, void *chunk,
				       __UINT32_TYPE__ size);
void rtrs_env_dma_unmap_chunk(struct rtrs_env_dev *dev, __UINT64_TYPE__ dma,
			      __UINT32_TYPE__ size);
/* Ownership of [dma, dma + len) of a mapped chunk; any context. */
void rtrs_env_dma_sync_for_cpu(struct rtrs_env_dev *dev, __UINT64_TYPE__ dma,
			       __UINT32_TYPE__ len);
void rtrs_env_dma_sync_for_device(struct rtrs_env_dev *dev, __UINT64_TYPE__ dma,
				  __UINT32_TYPE__ len);

/* A small zeroed buffer mapped for DMA in one direction (messages). */
struct rtrs_env_buf {
	void *cpu;
	__UINT64_TYPE__ dma;
	__UINT32_TYPE__ len;
	enum rtrs_env_dma_dir dir;
	void *priv;	/* the glue's */
};
int rtrs_env_buf_alloc(struct rtrs_env_dev *dev, __UINT32_TYPE__ len,
		       enum rtrs_env_dma_dir dir, struct rtrs_env_buf *buf);
void rtrs_env_buf_free(struct rtrs_env_dev *dev, struct rtrs_env_buf *buf);
/* Before the device reads it / after it wrote it; any context. */
void rtrs_env_buf_sync_for_device(struct rtrs_env_dev *dev, struct rtrs_env_buf *buf);
void rtrs_env_buf_sync_for_cpu(struct rtrs_env_dev *dev, struct rtrs_env_buf *buf);

/*
 * A fast-registration memory region over n mapped chunks (dma[i], size
 * bytes each, in this order), page size = chunk size, not yet registered:
 * a REG_MR work request does that. Fills rkey, iova and length.
 */
struct rtrs_env_mr;
struct rtrs_env_mr_info {
	__UINT32_TYPE__ rkey;
	__UINT64_TYPE__ iova;
	__UINT64_TYPE__ length;
};
struct rtrs_env_mr *rtrs_env_mr_alloc(struct rtrs_env_dev *dev, const __UINT64_TYPE__ *dma,
				      unsigned int n, __UINT32_TYPE__ size,
				      struct rtrs_env_mr_info *info);
void rtrs_env_mr_free(struct rtrs_env_mr *mr);
/* Moves the region's rkey to its next value and returns it; any context. */
__UINT32_TYPE__ rtrs_env_mr_next_rkey(struct rtrs_env_mr *mr);

/* --- connections -------------------------------------------------------------- */

/*
 * A connection request's cm_id, as rtrs_core_on_connect_request() got it:
 * the core accepts or rejects it there (in the CM handler of that id).
 */
struct rtrs_env_cm;
int rtrs_env_cm_accept(struct rtrs_env_cm *cm, const void *priv, unsigned int len);
/* The CM destroys the id when the handler returns non-zero: no more calls. */
void rtrs_env_cm_reject(struct rtrs_env_cm *cm, const void *priv, unsigned int len);

/*
 * Queue sizes of a connection's QP and CQ, computed by the core: the glue
 * creates exactly these (each within the device's limits). They include
 * the one work request ib_drain_qp() posts on each queue, and its CQ
 * entries: the core posts at most max_send_wr - 1 sends and
 * max_recv_wr - 1 receives at a time.
 */
struct rtrs_env_con_sizes {
	__UINT32_TYPE__ max_send_wr;
	__UINT32_TYPE__ max_recv_wr;
	__UINT32_TYPE__ cq_size;
	__UINT32_TYPE__ comp_vector;
};

/*
 * Gives the cm_id of a connection request a CQ and a QP on dev's PD. From
 * then on its CM events and completions reach the core with core_con, and
 * the connection owns the cm_id: rtrs_env_con_destroy_qp() ends its QP
 * and CQ, rtrs_env_con_destroy() the rest.
 * The core keeps the rtrs_env_cm handle for accept/reject in the handler.
 * NULL on failure (the cm_id stays the CM handler's).
 */
struct rtrs_env_con;
/*
 * io_lock: the connection's CON_IO lock, held around every post on it (the
 * glue asserts it, and reuses its work requests under it).
 */
struct rtrs_env_con *rtrs_env_con_create(struct rtrs_env_cm *cm, struct rtrs_env_dev *dev,
					 const struct rtrs_env_con_sizes *sizes,
					 struct rtrs_env_lock *io_lock, void *core_con);
/* Starts a disconnect; returns at once. Any process context. */
void rtrs_env_con_disconnect(struct rtrs_env_con *con);
/*
 * Moves the QP to the error state and waits until every posted work request
 * has completed (flushed): no completion of this connection runs after it.
 * Nothing may post on the connection from then on.
 */
void rtrs_env_con_drain(struct rtrs_env_con *con);
/* Destroys the QP and the CQ (after the drain); the cm_id stays. */
void rtrs_env_con_destroy_qp(struct rtrs_env_con *con);
/*
 * Destroys the cm_id and the rest of the connection (its QP and CQ are
 * gone); waits for a CM handler of the id that is still running. Never
 * from the CM handler of that id.
 */
void rtrs_env_con_destroy(struct rtrs_env_con *con);

/* One work request, as the core describes it; the glue builds the verbs. */
enum rtrs_env_wr_op {
	RTRS_ENV_WR_RDMA_WRITE,		/* sge -> remote_addr/rkey */
	RTRS_ENV_WR_RDMA_WRITE_IMM,	/* sge (may be empty) -> remote, with imm */
	RTRS_ENV_WR_SEND,		/* sge */
	RTRS_ENV_WR_SEND_IMM,		/* sge, with imm */
	RTRS_ENV_WR_SEND_INV,		/* sge (may be empty); invalidates inv_rkey */
	RTRS_ENV_WR_REG_MR,		/* registers mr under mr_key */
	RTRS_ENV_WR_LOCAL_INV,		/* invalidates inv_rkey here */
};
struct rtrs_env_wr {
	enum rtrs_env_wr_op op;
	/* signaled: a completion with cqe; else only a failure (or a flush)
	 * completes it, with cqe too. Never NULL. */
	unsigned char signaled;
	struct rtrs_core_cqe *cqe;
	__UINT64_TYPE__ addr;		/* sge: local DMA address (PD's local key) */
	__UINT32_TYPE__ len;		/* sge length; 0: no sge */
	__UINT64_TYPE__ remote_addr;
	__UINT32_TYPE__ rkey;
	__UINT32_TYPE__ imm;		/* host order */
	__UINT32_TYPE__ inv_rkey;
	struct rtrs_env_mr *mr;
	__UINT32_TYPE__ mr_key;
};
/* At most this many work requests in one post. */
#define RTRS_ENV_MAX_CHAIN 8
/*
 * Posts n work requests in this order, as one chain. 0 or a negative
 * errno (nothing posted then). Any context; the core holds the
 * connection's lock and has counted the send queue's room.
 */
int rtrs_env_post_send(struct rtrs_env_con *con, const struct rtrs_env_wr *wrs, unsigned int n);
/*
 * Posts count receives completing with cqe: with a buffer (buf, for a
 * message) or without one (buf NULL: for RDMA writes with immediate).
 */
int rtrs_env_post_recv(struct rtrs_env_con *con, struct rtrs_env_buf *buf,
		       struct rtrs_core_cqe *cqe, unsigned int count);

/*
 * The I/O path's posts: the same work requests as rtrs_env_post_send() and
 * rtrs_env_post_recv() would post, through work requests the glue keeps
 * per connection and fills in (no chain built from descriptors at each
 * request). The connection's lock is held around each (the glue reuses
 * its work requests), and the core has counted the send queue's room.
 *
 * A response, one chain in this order:
 *   data_len != 0   RDMA_WRITE of [data_addr, data_addr + data_len) to
 *                   remote_addr under rkey (a range of a mapped chunk,
 *                   synced for the device first)
 *   mr != NULL      REG_MR of mr under mr_key, which becomes the region's
 *                   key (rtrs_env_mr_next_rkey()'s rule: the key's low
 *                   byte is the part that changes, mr_key's is taken)
 *   send_inv        SEND_INV without data, invalidating inv_rkey
 *   the message     msg_len != 0: SEND_IMM of [msg_addr, msg_addr + msg_len)
 *                   (a buffer mapped to the device, synced first); else
 *                   RDMA_WRITE_IMM without data; imm in host order
 * Only the message may be signaled; each of them completes on cqe (a
 * failure or a flush of any, and the message's success when signaled).
 */
struct rtrs_env_resp {
	__UINT64_TYPE__ data_addr;
	__UINT64_TYPE__ remote_addr;
	__UINT32_TYPE__ data_len;
	__UINT32_TYPE__ rkey;
	struct rtrs_env_mr *mr;
	__UINT32_TYPE__ mr_key;
	__UINT32_TYPE__ inv_rkey;
	__UINT64_TYPE__ msg_addr;
	__UINT32_TYPE__ msg_len;
	__UINT32_TYPE__ imm;
	unsigned char send_inv;
	unsigned char signaled;
	struct rtrs_core_cqe *cqe;
};
int rtrs_env_post_resp(struct rtrs_env_con *con, const struct rtrs_env_resp *r);
/* A signaled LOCAL_INV of rkey, completing on cqe. */
int rtrs_env_post_local_inv(struct rtrs_env_con *con, __UINT32_TYPE__ rkey,
			    struct rtrs_core_cqe *cqe);
/* One receive without a buffer (for an RDMA write with immediate), on cqe. */
int rtrs_env_post_recv_imm(struct rtrs_env_con *con, struct rtrs_core_cqe *cqe);

/* --- the listener ----------------------------------------------------------------- */

/*
 * Listens for RDMA CM connection requests on port, as upstream's server
 * does: on any IP address (IPv4 and IPv6, RDMA_PS_TCP) and on any native IB
 * address (AF_IB, RDMA_PS_IB, service id from port); fails if either
 * cannot listen. Requests from both reach
 * rtrs_core_on_connect_request(core_server, ...).
 */
struct rtrs_env_listener;
int rtrs_env_listen(void *core_server, __UINT16_TYPE__ port, struct rtrs_env_listener **out);
/* Stops listening; waits for connect handlers still running. */
void rtrs_env_listen_stop(struct rtrs_env_listener *l);

/* --- the upper layer (ULP) ------------------------------------------------------ */

/*
 * The ULP's callbacks, as rtrs_srv_open() got them. rdma_ev: never under a
 * lock of ours; link_ev: under the session's SESSION_EV lock only.
 * rdma_ev gets all a kernel release's API may pass on (5.10's takes the
 * session and the direction too): sess is the session (as link_ev's),
 * dir RTRS_CORE_DIR_READ (the client reads) or RTRS_CORE_DIR_WRITE.
 */
struct rtrs_env_ulp;
int rtrs_env_ulp_rdma_ev(struct rtrs_env_ulp *ulp, void *sess, void *priv,
			 struct rtrs_srv_op *op, int dir, void *data,
			 __UINT32_TYPE__ datalen, const void *usr, __UINT32_TYPE__ usrlen);
/* ev: RTRS_CORE_LINK_CONNECTED or RTRS_CORE_LINK_DISCONNECTED. */
int rtrs_env_ulp_link_ev(struct rtrs_env_ulp *ulp, void *sess, int ev, void *priv);

/* --- sysfs ------------------------------------------------------------------------ */

/*
 * /sys/class/rtrs-server/<name>/ with its paths/ folder, announced (uevent)
 * once complete. A new device each time: one never comes back after
 * rtrs_env_sysfs_sess_del(). Negative errno on failure.
 */
struct rtrs_env_sysfs_sess;
int rtrs_env_sysfs_sess_add(const char *name, struct rtrs_env_sysfs_sess **out);
void rtrs_env_sysfs_sess_del(struct rtrs_env_sysfs_sess *s);

/*
 * paths/<name>/ with hca_name, hca_port, src_addr, dst_addr, disconnect and
 * stats/rdma, whose show/store call rtrs_core_path_* with core_path. Once
 * rtrs_env_sysfs_path_del() has returned, no such call runs or will run
 * (the files are gone and their users drained), so core_path may go; the
 * kobjects themselves are freed by their own releases, whenever those run.
 */
struct rtrs_env_sysfs_path;
int rtrs_env_sysfs_path_add(struct rtrs_env_sysfs_sess *s, const char *name, void *core_path,
			    struct rtrs_env_sysfs_path **out);
void rtrs_env_sysfs_path_del(struct rtrs_env_sysfs_path *p);

/* --- debugfs: what is not ABI -------------------------------------------------- */

/*
 * /sys/kernel/debug/rtrs-server/<name>/ for a session with a path in
 * sysfs. NULL when debugfs is absent, disabled or the folder cannot be
 * made: that is no failure of the caller (nothing is shown there then),
 * and every call below accepts NULL and does nothing with it.
 */
struct rtrs_env_debugfs_sess;
struct rtrs_env_debugfs_sess *rtrs_env_debugfs_sess_add(const char *name);
void rtrs_env_debugfs_sess_del(struct rtrs_env_debugfs_sess *s);

/*
 * <session>/<name>/latency, a file whose text is
 * rtrs_core_path_show(core_path, RTRS_CORE_ATTR_LATENCY) as of its open.
 * NULL as above. As with sysfs, once rtrs_env_debugfs_path_del() has
 * returned, no call with core_path runs or will run (a file still open
 * reads what it read at its open, or an error), so core_path may go.
 */
struct rtrs_env_debugfs_path;
struct rtrs_env_debugfs_path *rtrs_env_debugfs_path_add(struct rtrs_env_debugfs_sess *s,
							const char *name, void *core_path);
void rtrs_env_debugfs_path_del(struct rtrs_env_debugfs_path *p);

/* --- trace events (tracefs events/rtrs_server/) ------------------------------------ */

/*
 * Each call emits one trace event when it is enabled, and costs next to
 * nothing when it is not. Any context, any lock held. Strings are copied
 * into the event; sess is "" for a session not yet named.
 */
/* A session's first path came up (the ULP was told CONNECTED). */
void rtrs_env_trace_sess_up(const char *sess);
/* Its last path went down (the ULP is told DISCONNECTED); why: that path's. */
void rtrs_env_trace_sess_down(const char *sess, int reason, const char *why);
void rtrs_env_trace_path_up(const char *sess, const char *path);
/*
 * A path starts its teardown: reason is the core's CloseReason (why in
 * words), was_up whether it had come up (a handshake may end too).
 */
void rtrs_env_trace_path_down(const char *sess, const char *path, int reason, const char *why,
			      int was_up);
/* A connection request refused: peer "<client>@<server>", err a negative errno. */
void rtrs_env_trace_conn_refused(const char *peer, int err, const char *why);
/* An I/O request answered with an error (err negative): read or write. */
void rtrs_env_trace_io_error(const char *sess, const char *path, __UINT32_TYPE__ chunk, int err,
			     int is_read);
/* A heartbeat period passed without a word from the client (missed of max). */
void rtrs_env_trace_hb_miss(const char *sess, const char *path, __UINT32_TYPE__ missed,
			    __UINT32_TYPE__ max);

/* --- logging ------------------------------------------------------------------- */

/* rt/env.h has rtrs_env_log(level, msg); this one is rate-limited. */
void rtrs_env_log_ratelimited(int level, const char *msg);

#ifdef __cplusplus
}
#endif

#endif /* RTRS_CORE_ENV_H */
