/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C++ core's entry points: each kernel event the C glue sees becomes one
 * call here, and the core answers through the kernel environment
 * (core/env.h). Plain C types only: the glue cannot see C++ and the core
 * cannot see kernel headers.
 *
 * Context: unless a call says otherwise it may sleep and is made with no
 * lock of ours held.
 */
#ifndef RTRS_CORE_H
#define RTRS_CORE_H

#ifdef __cplusplus
extern "C" {
#endif

struct rtrs_env_cm;
struct rtrs_env_ulp;
struct rtrs_srv_op;
struct rtrs_srv_ctx;
struct rtrs_srv_sess;

/* --- the module ------------------------------------------------------------- */

/* Limits of the module parameters, as the upstream server has them. */
#define RTRS_CORE_MIN_CHUNK_SIZE 8192
#define RTRS_CORE_MAX_SESS_QUEUE_DEPTH 65535
/* Bits of an immediate left for chunk id and offset (32 minus 4 of type). */
#define RTRS_CORE_IMM_PAYLOAD_BITS 28

struct rtrs_core_config {
	unsigned char always_invalidate;
	__UINT32_TYPE__ max_chunk_size;
	__UINT32_TYPE__ sess_queue_depth;
	/* Chunk memory all sessions together may hold, in MiB; 0: the default. */
	__UINT32_TYPE__ chunk_mem_mb;
	/* The page size: the room for headers the server announces. */
	__UINT32_TYPE__ page_size;
	/* One response in this many asks for a completion; 0: the default. */
	__UINT32_TYPE__ signal_interval;
};

/*
 * Checks the module parameters. Returns 0, or -EINVAL with a one-line reason
 * (no trailing newline) written to msg, which holds msg_len bytes.
 */
int rtrs_core_check_params(int max_chunk_size, int sess_queue_depth, char *msg,
			   __SIZE_TYPE__ msg_len);

/*
 * Sets the core up with a checked configuration (0 or a negative errno)
 * and tears it down; exit is called once every server is closed.
 * chunk_mem_mb_out gets the memory budget in effect (the default resolved).
 */
int rtrs_core_init(const struct rtrs_core_config *cfg, __UINT32_TYPE__ *chunk_mem_mb_out);
void rtrs_core_exit(void);

/* --- the upper layer's API (include/rtrs/rtrs-srv.h) ------------------------ */

int rtrs_core_server_open(struct rtrs_env_ulp *ulp, __UINT16_TYPE__ port,
			  struct rtrs_srv_ctx **out);
/*
 * Closes every path of the server and waits until they are gone; returns
 * the ULP handle it was opened with (for the glue to free).
 */
struct rtrs_env_ulp *rtrs_core_server_close(struct rtrs_srv_ctx *srv);
/* The ULP's answer to a request; any context. */
void rtrs_core_answer(struct rtrs_srv_op *op, int status);
void rtrs_core_set_sess_priv(struct rtrs_srv_sess *sess, void *priv);
int rtrs_core_get_path_name(struct rtrs_srv_sess *sess, char *buf, __SIZE_TYPE__ len);
int rtrs_core_get_queue_depth(struct rtrs_srv_sess *sess);

/* Link events, as the ULP API numbers them. */
#define RTRS_CORE_LINK_CONNECTED 0
#define RTRS_CORE_LINK_DISCONNECTED 1
/* An I/O request's direction, as rtrs_env_ulp_rdma_ev() passes it (the
 * kernel's READ and WRITE). */
#define RTRS_CORE_DIR_READ 0
#define RTRS_CORE_DIR_WRITE 1

/* --- RDMA CM ------------------------------------------------------------------ */

/* An address as the CM reports it: family and its address bytes. */
#define RTRS_CORE_AF_INET 2
#define RTRS_CORE_AF_INET6 10
#define RTRS_CORE_AF_IB 27
struct rtrs_core_addr {
	__UINT16_TYPE__ family;
	unsigned char bytes[16];	/* AF_INET: 4, AF_INET6: 16, AF_IB: the GID */
};

/*
 * A connection request, in the CM handler of its new cm_id. ib_dev is the
 * device's opaque identity (given back to rtrs_env_dev_open()). Returns 0
 * when the core keeps the cm_id (accepted, or refused later by closing its
 * path), or non-zero when it rejected it: the handler must then return
 * non-zero so that the CM destroys the id.
 */
int rtrs_core_on_connect_request(void *core_server, struct rtrs_env_cm *cm, void *ib_dev,
				 unsigned int port_num, const struct rtrs_core_addr *client,
				 const struct rtrs_core_addr *server, const void *priv,
				 __UINT32_TYPE__ len);

enum rtrs_core_cm_event {
	RTRS_CORE_CM_ESTABLISHED,
	RTRS_CORE_CM_DISCONNECTED,	/* the peer left, or the connection ended */
	RTRS_CORE_CM_ERROR,		/* rejected, unreachable, connect error */
	RTRS_CORE_CM_DEVICE_REMOVAL,
	RTRS_CORE_CM_OTHER,		/* nothing to do */
};
/* A CM event on a connection the core kept (core_con of rtrs_env_con_create). */
void rtrs_core_on_cm_event(void *core_con, enum rtrs_core_cm_event ev, int status);

/*
 * The IB core tells us of a device (its client's add): 0, or -ENOMEM (no
 * path is then made on it). Connection requests for a device not told of
 * are refused.
 */
int rtrs_core_on_device_add(void *ib_dev);
/*
 * The device ib_dev goes away (its client's remove): returns once nothing
 * of ours but cm_ids uses it (its PD, registrations and mappings are
 * freed; the cm_ids follow, and rdma_cm's own removal waits for them).
 * No path is made on it afterwards.
 */
void rtrs_core_on_device_remove(void *ib_dev);

/* --- completions ---------------------------------------------------------------- */

/*
 * Where a work request's completion goes: the glue keeps its own
 * completion entry (struct ib_cqe) in env and finds the rest from it. The
 * core embeds these in its objects.
 */
struct rtrs_core_cqe {
	void *env[1];		/* the glue's struct ib_cqe */
	void *owner;		/* the core object */
	unsigned int kind;	/* what completed (the core's) */
};

enum rtrs_core_wc_opcode {
	RTRS_CORE_WC_SEND,		/* any send-queue work request */
	RTRS_CORE_WC_RECV,		/* a message (send) */
	RTRS_CORE_WC_RECV_IMM,		/* an RDMA write with immediate */
	RTRS_CORE_WC_OTHER,
};
struct rtrs_core_wc {
	int ok;				/* success */
	int flushed;			/* failed because the QP is in error: the normal end */
	const char *status;		/* the status in words */
	enum rtrs_core_wc_opcode opcode;
	__UINT32_TYPE__ imm;		/* host order, RECV_IMM only */
	__UINT32_TYPE__ byte_len;
};
/* A completion on the connection core_con (completion context: may not sleep). */
void rtrs_core_on_wc(void *core_con, struct rtrs_core_cqe *cqe, const struct rtrs_core_wc *wc);
/*
 * The commonest completion, passed on without a struct rtrs_core_wc: a
 * receive that completed with success as an RDMA write with immediate
 * (RTRS_CORE_WC_RECV_IMM; imm in host order). The same as
 * rtrs_core_on_wc() with such a completion.
 */
void rtrs_core_on_imm(void *core_con, __UINT32_TYPE__ imm);
/* The same for a send-queue work request that completed with success. */
void rtrs_core_on_send_done(void *core_con, struct rtrs_core_cqe *cqe);

/* --- deferred work ----------------------------------------------------------------- */

/* A work item of rtrs_env_work_new(owner, kind) runs. */
void rtrs_core_run_work(void *owner, unsigned int kind);

/* --- sysfs (the show/store functions of a path's files) ------------------------------- */

enum rtrs_core_path_attr {
	RTRS_CORE_ATTR_HCA_NAME,
	RTRS_CORE_ATTR_HCA_PORT,
	RTRS_CORE_ATTR_SRC_ADDR,
	RTRS_CORE_ATTR_DST_ADDR,
	RTRS_CORE_ATTR_DISCONNECT,
	RTRS_CORE_ATTR_STATS_RDMA,
	RTRS_CORE_ATTR_LATENCY,		/* debugfs, not sysfs: the latency histograms */
};
/* Writes the file's text (with its newline) to buf; returns its length. */
int rtrs_core_path_show(void *core_path, enum rtrs_core_path_attr attr, char *buf,
			__SIZE_TYPE__ cap);
/* A write to disconnect or stats/rdma: 0 or a negative errno (-EINVAL). */
int rtrs_core_path_store(void *core_path, enum rtrs_core_path_attr attr, const char *buf,
			 __SIZE_TYPE__ len);

/* How many sessions and paths of the core exist now (debugfs "held"). */
void rtrs_core_held(__UINT64_TYPE__ *sessions, __UINT64_TYPE__ *paths);

/* --- admission: who may connect, and how much one client may hold ------------ */

/*
 * Puts the admission rules in text (len bytes, no NUL needed; the grammar
 * is in src/core/admission.h) in effect, for every server, from the next
 * connection request on: what is connected stays. An empty text (or only
 * comments) is the default: every address allowed, no limits. Returns 0,
 * or a negative errno with a one-line reason in msg (msg_len bytes, ""
 * on success) and the rules in effect unchanged: -EINVAL ("line N:
 * what"), -ENOMEM, -ENXIO before rtrs_core_init(). May sleep.
 */
int rtrs_core_admission_set(const char *text, __SIZE_TYPE__ len, char *msg,
			    __SIZE_TYPE__ msg_len);
/*
 * The rules in effect as text that rtrs_core_admission_set() reads back,
 * with the refusals so far per reason as a comment line. Returns the
 * length written (NUL-terminated within cap), or -ENOSPC when it does not
 * fit, -ENXIO before rtrs_core_init(). May sleep.
 */
int rtrs_core_admission_show(char *buf, __SIZE_TYPE__ cap);
/* rtrs_core_admission_show() never needs more (set refuses rules that would). */
#define RTRS_CORE_ADMISSION_SHOW_MAX 4096
/*
 * Closes every path, up or still connecting, that the rules in effect
 * would refuse now (its client's address not on the allow-list, or its
 * session's name not allowed for that address); what else is connected
 * stays. Returns how many paths were asked to close, or -ENXIO before
 * rtrs_core_init(). May sleep.
 */
int rtrs_core_admission_close_refused(void);

#ifdef __cplusplus
}
#endif

#endif /* RTRS_CORE_H */
