// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel environment, part five: the trace events (trace.h) the core
 * emits through core/env.h. Each call is a tracepoint: a static branch
 * when the event is off.
 */
#include "core/env.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

void rtrs_env_trace_sess_up(const char *sess)
{
	trace_sess_up(sess);
}

/* why is the core's reason_name(); the event prints its own name of reason. */
void rtrs_env_trace_sess_down(const char *sess, int reason, const char *why)
{
	trace_sess_down(sess, reason);
}

void rtrs_env_trace_path_up(const char *sess, const char *path)
{
	trace_path_up(sess, path);
}

void rtrs_env_trace_path_down(const char *sess, const char *path, int reason, const char *why,
			      int was_up)
{
	trace_path_down(sess, path, reason, was_up);
}

void rtrs_env_trace_conn_refused(const char *peer, int err, const char *why)
{
	trace_conn_refused(peer, err, why);
}

void rtrs_env_trace_io_error(const char *sess, const char *path, u32 chunk, int err, int is_read)
{
	trace_io_error(sess, path, chunk, err, is_read);
}

void rtrs_env_trace_hb_miss(const char *sess, const char *path, u32 missed, u32 max)
{
	trace_hb_miss(sess, path, missed, max);
}
