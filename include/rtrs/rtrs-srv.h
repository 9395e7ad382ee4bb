/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The server side of the RTRS upper-layer API, as exported by rtrs-server.ko.
 *
 * These six functions, their types and the layout of struct rtrs_srv_ops are
 * the upstream kernel's of the release being built for
 * (drivers/infiniband/ulp/rtrs/rtrs.h), so that that release's unmodified
 * rnbd-server builds against our Module.symvers and runs on this module.
 * There are two: 5.10's (Debian 11), and 6.1's, unchanged to 7.2 (Debian 12
 * to 14). The wire protocol is the same under both. Written for this
 * project; only the names and signatures are shared with upstream.
 */
#ifndef RTRS_SRV_API_H
#define RTRS_SRV_API_H

#include <linux/types.h>
#include <linux/version.h>

/*
 * Which API: nothing in a kernel's headers tells (rtrs.h is not among
 * them), so the version does. The releases between 5.10 and 6.1 renamed
 * things in steps this module does not follow: it refuses to build there.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 11, 0)
#define RTRS_SRV_API_5_10 1
#elif LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "rtrs-server: no upper-layer API for kernels 5.11 to 6.0 (supported: 5.10, and 6.1 on)"
#endif

/* Opaque to the upper layer. */
struct rtrs_srv_ctx;	/* one listening port and its sessions */
struct rtrs_srv_op;	/* one I/O request, until rtrs_srv_resp_rdma() */
#ifdef RTRS_SRV_API_5_10
struct rtrs_srv;	/* a client's session: one or more paths */
#else
struct rtrs_srv_sess;	/* a client's session: one or more paths */
#endif

enum rtrs_srv_link_ev {
	RTRS_SRV_LINK_EV_CONNECTED,	/* the session's first path is up */
	RTRS_SRV_LINK_EV_DISCONNECTED,	/* its last path is gone */
};

struct rtrs_srv_ops {
	/*
	 * An I/O request arrived. @data/@datalen: for a write, what the client
	 * sent; for a read, where the reply goes. @usr/@usrlen: the upper
	 * layer's own header. A non-zero return fails the request; otherwise
	 * the upper layer answers later with rtrs_srv_resp_rdma(@id, ...).
	 * 5.10 also passes the session and @dir: READ for a client's read,
	 * WRITE for its write.
	 */
#ifdef RTRS_SRV_API_5_10
	int (*rdma_ev)(struct rtrs_srv *sess, void *priv, struct rtrs_srv_op *id,
		       int dir, void *data, size_t datalen, const void *usr,
		       size_t usrlen);
#else
	int (*rdma_ev)(void *priv, struct rtrs_srv_op *id, void *data,
		       size_t datalen, const void *usr, size_t usrlen);
#endif
	/*
	 * Session up or down. @priv is what rtrs_srv_set_sess_priv() set.
	 * A non-zero return for CONNECTED refuses the session.
	 */
#ifdef RTRS_SRV_API_5_10
	int (*link_ev)(struct rtrs_srv *sess, enum rtrs_srv_link_ev ev,
		       void *priv);
#else
	int (*link_ev)(struct rtrs_srv_sess *sess, enum rtrs_srv_link_ev ev,
		       void *priv);
#endif
};

/* Listens on @port (IPv4 and IPv6). Returns an ERR_PTR on failure. */
struct rtrs_srv_ctx *rtrs_srv_open(struct rtrs_srv_ops *ops, u16 port);

/* Stops listening and tears down every session of @ctx; may sleep. */
void rtrs_srv_close(struct rtrs_srv_ctx *ctx);

/*
 * Completes @id with @errno (0 or a negative errno): for a read, the data is
 * sent first. Returns true when the response was posted or queued.
 */
bool rtrs_srv_resp_rdma(struct rtrs_srv_op *id, int errno);

#ifdef RTRS_SRV_API_5_10
void rtrs_srv_set_sess_priv(struct rtrs_srv *sess, void *priv);
/* Copies the session's name (as the client sent it) into @sessname. */
int rtrs_srv_get_sess_name(struct rtrs_srv *sess, char *sessname, size_t len);
/* The number of chunks (concurrent requests) of the session. */
int rtrs_srv_get_queue_depth(struct rtrs_srv *sess);
#else
void rtrs_srv_set_sess_priv(struct rtrs_srv_sess *sess, void *priv);
/* Copies the session's name (as the client sent it) into @pathname. */
int rtrs_srv_get_path_name(struct rtrs_srv_sess *sess, char *pathname,
			   size_t len);
/* The number of chunks (concurrent requests) of the session. */
int rtrs_srv_get_queue_depth(struct rtrs_srv_sess *sess);
#endif

#endif /* RTRS_SRV_API_H */
