/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The server side of the RTRS upper-layer API, as exported by rtrs-server.ko.
 *
 * These six functions, their types and the layout of struct rtrs_srv_ops are
 * the upstream kernel's of the release being built for
 * (drivers/infiniband/ulp/rtrs/rtrs.h), so that the unmodified rnbd-server
 * of that release builds against our Module.symvers and runs on this module.
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

/**
 * enum rtrs_srv_link_ev - what struct rtrs_srv_ops.link_ev tells
 * @RTRS_SRV_LINK_EV_CONNECTED: the session's first path is up
 * @RTRS_SRV_LINK_EV_DISCONNECTED: its last path is gone
 */
enum rtrs_srv_link_ev {
	RTRS_SRV_LINK_EV_CONNECTED,
	RTRS_SRV_LINK_EV_DISCONNECTED,
};

/**
 * struct rtrs_srv_ops - the upper layer's callbacks, given to rtrs_srv_open()
 * @rdma_ev: an I/O request arrived. @data and @datalen: for a write, what
 *	the client sent; for a read, where the reply goes. @usr and @usrlen:
 *	the upper layer's own header. A non-zero return fails the request;
 *	otherwise the upper layer answers later with rtrs_srv_resp_rdma(@id,
 *	...). 5.10 also passes the session and @dir: READ for a client's read,
 *	WRITE for its write. Called from the completion handler, in process
 *	context (the CQ's work item, IB_POLL_WORKQUEUE).
 * @link_ev: the session is up or down (enum rtrs_srv_link_ev). @priv is
 *	what rtrs_srv_set_sess_priv() set. A non-zero return for CONNECTED
 *	refuses the session. Called in process context; the link events of
 *	one session never overlap.
 */
struct rtrs_srv_ops {
#ifdef RTRS_SRV_API_5_10
	int (*rdma_ev)(struct rtrs_srv *sess, void *priv, struct rtrs_srv_op *id,
		       int dir, void *data, size_t datalen, const void *usr,
		       size_t usrlen);
#else
	int (*rdma_ev)(void *priv, struct rtrs_srv_op *id, void *data,
		       size_t datalen, const void *usr, size_t usrlen);
#endif
#ifdef RTRS_SRV_API_5_10
	int (*link_ev)(struct rtrs_srv *sess, enum rtrs_srv_link_ev ev,
		       void *priv);
#else
	int (*link_ev)(struct rtrs_srv_sess *sess, enum rtrs_srv_link_ev ev,
		       void *priv);
#endif
};

/**
 * rtrs_srv_open() - listen for RTRS clients
 * @ops: the upper layer's callbacks (copied: @ops need not outlive the call)
 * @port: the port to listen on: IPv4 and IPv6 (RDMA_PS_TCP) and AF_IB
 *	(RDMA_PS_IB)
 *
 * Context: process context; may sleep.
 * Return: the listening context, or an ERR_PTR(): -EINVAL when @ops lacks a
 * callback, -ENOMEM, or the RDMA CM's error (e.g. the port is taken).
 */
struct rtrs_srv_ctx *rtrs_srv_open(struct rtrs_srv_ops *ops, u16 port);

/**
 * rtrs_srv_close() - stop listening and tear down every session
 * @ctx: what rtrs_srv_open() returned
 *
 * Closes every path of every session of @ctx and waits until they are gone;
 * no callback of @ctx runs after it returns.
 *
 * Context: process context; sleeps.
 */
void rtrs_srv_close(struct rtrs_srv_ctx *ctx);

/**
 * rtrs_srv_resp_rdma() - answer an I/O request
 * @id: the request, as struct rtrs_srv_ops.rdma_ev got it
 * @errno: 0 or a negative errno, sent to the client as the request's status
 *
 * For a read, the data is sent first. @id is not to be used afterwards.
 *
 * Context: any context.
 * Return: true (the response was posted, or queued until it can be).
 */
bool rtrs_srv_resp_rdma(struct rtrs_srv_op *id, int errno);

#ifdef RTRS_SRV_API_5_10
/**
 * rtrs_srv_set_sess_priv() - set what the callbacks get as @priv
 * @sess: the session, as struct rtrs_srv_ops.link_ev got it
 * @priv: the upper layer's, passed to rdma_ev and link_ev from then on
 *
 * Context: any context.
 */
void rtrs_srv_set_sess_priv(struct rtrs_srv *sess, void *priv);
/**
 * rtrs_srv_get_sess_name() - the session's name, as the client sent it
 * @sess: the session
 * @sessname: where the name goes, NUL-terminated (cut to fit)
 * @len: the size of @sessname
 *
 * The 5.10 name of rtrs_srv_get_path_name().
 *
 * Context: any context.
 * Return: 0, or -ENOTCONN when the session has no path left.
 */
int rtrs_srv_get_sess_name(struct rtrs_srv *sess, char *sessname, size_t len);
/**
 * rtrs_srv_get_queue_depth() - the session's number of chunks
 * @sess: the session
 *
 * Context: any context.
 * Return: how many requests the session may have in flight at once.
 */
int rtrs_srv_get_queue_depth(struct rtrs_srv *sess);
#else
/**
 * rtrs_srv_set_sess_priv() - set what the callbacks get as @priv
 * @sess: the session, as struct rtrs_srv_ops.link_ev got it
 * @priv: the upper layer's, passed to rdma_ev and link_ev from then on
 *
 * Context: any context.
 */
void rtrs_srv_set_sess_priv(struct rtrs_srv_sess *sess, void *priv);
/**
 * rtrs_srv_get_path_name() - the session's name, as the client sent it
 * @sess: the session
 * @pathname: where the name goes, NUL-terminated (cut to fit)
 * @len: the size of @pathname
 *
 * Context: any context.
 * Return: 0, or -ENOTCONN when the session has no path left.
 */
int rtrs_srv_get_path_name(struct rtrs_srv_sess *sess, char *pathname,
			   size_t len);
/**
 * rtrs_srv_get_queue_depth() - the session's number of chunks
 * @sess: the session
 *
 * Context: any context.
 * Return: how many requests the session may have in flight at once.
 */
int rtrs_srv_get_queue_depth(struct rtrs_srv_sess *sess);
#endif

#endif /* RTRS_SRV_API_H */
