/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rtrs-server's trace events: tracefs events/rtrs_server/ (trace-cmd,
 * perf trace, bpftrace see them as rtrs_server:<name>). Emitted by
 * env_trace.c for the core (core/env.h, rtrs_env_trace_*).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rtrs_server

#if !defined(RTRS_SERVER_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define RTRS_SERVER_TRACE_H

#include <linux/tracepoint.h>
#include <linux/version.h>

#include "core/close_reason.h"

/* 6.10 dropped __assign_str()'s source argument (it is __string()'s). */
#ifndef rtrs_assign_str
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define rtrs_assign_str(dst, src) __assign_str(dst)
#else
#define rtrs_assign_str(dst, src) __assign_str(dst, src)
#endif
#endif

/*
 * The text of reason: the core's CloseReason values and their names, from
 * the one list of them (core/close_reason.h).
 */
#define rtrs_show_reason(r)						\
	__print_symbolic(r, RTRS_CLOSE_REASONS(RTRS_CLOSE_REASON_SYMBOL,	\
					       RTRS_CLOSE_REASON_COMMA))

TRACE_EVENT(sess_up,
	TP_PROTO(const char *sess),
	TP_ARGS(sess),
	TP_STRUCT__entry(
		__string(sess, sess)
	),
	TP_fast_assign(
		rtrs_assign_str(sess, sess);
	),
	TP_printk("sess=%s", __get_str(sess))
);

TRACE_EVENT(sess_down,
	TP_PROTO(const char *sess, int reason),
	TP_ARGS(sess, reason),
	TP_STRUCT__entry(
		__string(sess, sess)
		__field(int, reason)
	),
	TP_fast_assign(
		rtrs_assign_str(sess, sess);
		__entry->reason = reason;
	),
	TP_printk("sess=%s reason=%s", __get_str(sess), rtrs_show_reason(__entry->reason))
);

TRACE_EVENT(path_up,
	TP_PROTO(const char *sess, const char *path),
	TP_ARGS(sess, path),
	TP_STRUCT__entry(
		__string(sess, sess)
		__string(path, path)
	),
	TP_fast_assign(
		rtrs_assign_str(sess, sess);
		rtrs_assign_str(path, path);
	),
	TP_printk("sess=%s path=%s", __get_str(sess), __get_str(path))
);

TRACE_EVENT(path_down,
	TP_PROTO(const char *sess, const char *path, int reason, int was_up),
	TP_ARGS(sess, path, reason, was_up),
	TP_STRUCT__entry(
		__string(sess, sess)
		__string(path, path)
		__field(int, reason)
		__field(int, was_up)
	),
	TP_fast_assign(
		rtrs_assign_str(sess, sess);
		rtrs_assign_str(path, path);
		__entry->reason = reason;
		__entry->was_up = was_up;
	),
	TP_printk("sess=%s path=%s reason=%s was_up=%d", __get_str(sess), __get_str(path),
		  rtrs_show_reason(__entry->reason), __entry->was_up)
);

TRACE_EVENT(conn_refused,
	TP_PROTO(const char *path, int err, const char *why),
	TP_ARGS(path, err, why),
	TP_STRUCT__entry(
		__string(path, path)
		__field(int, err)
		__string(why, why)
	),
	TP_fast_assign(
		rtrs_assign_str(path, path);
		__entry->err = err;
		rtrs_assign_str(why, why);
	),
	TP_printk("path=%s err=%d why=\"%s\"", __get_str(path), __entry->err, __get_str(why))
);

TRACE_EVENT(io_error,
	TP_PROTO(const char *sess, const char *path, u32 chunk, int err, int is_read),
	TP_ARGS(sess, path, chunk, err, is_read),
	TP_STRUCT__entry(
		__string(sess, sess)
		__string(path, path)
		__field(u32, chunk)
		__field(int, err)
		__field(int, is_read)
	),
	TP_fast_assign(
		rtrs_assign_str(sess, sess);
		rtrs_assign_str(path, path);
		__entry->chunk = chunk;
		__entry->err = err;
		__entry->is_read = is_read;
	),
	TP_printk("sess=%s path=%s chunk=%u err=%d dir=%s", __get_str(sess), __get_str(path),
		  __entry->chunk, __entry->err, __entry->is_read ? "read" : "write")
);

TRACE_EVENT(hb_miss,
	TP_PROTO(const char *sess, const char *path, u32 missed, u32 max),
	TP_ARGS(sess, path, missed, max),
	TP_STRUCT__entry(
		__string(sess, sess)
		__string(path, path)
		__field(u32, missed)
		__field(u32, max)
	),
	TP_fast_assign(
		rtrs_assign_str(sess, sess);
		rtrs_assign_str(path, path);
		__entry->missed = missed;
		__entry->max = max;
	),
	TP_printk("sess=%s path=%s missed=%u max=%u", __get_str(sess), __get_str(path),
		  __entry->missed, __entry->max)
);

#endif /* RTRS_SERVER_TRACE_H */

/* Out of the kernel's tree: define_trace.h finds this file by -I (Kbuild). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
