/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Why a path closes, as one list: the core's enum CloseReason
 * (core/path.h), the words its log lines say (reason_name()) and the name
 * the sess_down and path_down trace events print (src/kernel/trace.h) are
 * all made from it, so that a reason cannot have one without the others.
 * Plain C, no kernel header: the glue's trace.h and the host tests read it
 * too.
 *
 * X(Enumerator, value, trace_name, "words"), each entry followed by SEP()
 * but the last (SEP: what goes between two entries, nothing or a comma).
 * The value is what the trace events record (tools that read the binary
 * records go by it): new reasons go at the end with the next value, and no
 * value changes.
 *
 * ClientDisconnect: the client's CM disconnect or error. SysfsDisconnect:
 * "1" written to the path's disconnect file. ServerClose: the ULP closed
 * the server (rtrs_srv_close()). Protocol: the client broke the protocol.
 * Transport: a work request failed. UlpRefused: the ULP refused the
 * session. SetupFailed: a resource for it could not be had. Admission: the
 * admission policy refuses it (its session's name at the info request, or
 * anything on the operator's word: admission_close).
 */
#ifndef RTRS_CORE_CLOSE_REASON_H
#define RTRS_CORE_CLOSE_REASON_H

#define RTRS_CLOSE_REASONS(X, SEP)                                                   \
	X(None, 0, none, "none") SEP()                                               \
	X(ClientDisconnect, 1, client_disconnect, "client disconnect") SEP()         \
	X(SysfsDisconnect, 2, sysfs_disconnect, "sysfs disconnect") SEP()            \
	X(HeartbeatTimeout, 3, heartbeat_timeout, "heartbeat timeout") SEP()         \
	X(StalledHandshake, 4, stalled_handshake, "stalled handshake") SEP()         \
	X(DeviceRemoval, 5, device_removal, "device removal") SEP()                  \
	X(ServerClose, 6, server_close, "server close") SEP()                        \
	X(Protocol, 7, protocol_error, "protocol error") SEP()                       \
	X(Transport, 8, transport_error, "transport error") SEP()                    \
	X(UlpRefused, 9, ulp_refused, "refused by the upper layer") SEP()            \
	X(SetupFailed, 10, setup_failed, "setup failed") SEP()                       \
	X(Admission, 11, admission, "admission policy")

/* Separators for RTRS_CLOSE_REASONS. */
#define RTRS_CLOSE_REASON_NOSEP()
#define RTRS_CLOSE_REASON_COMMA() ,

/* One { value, "trace_name" } pair of the trace events' table (__print_symbolic). */
#define RTRS_CLOSE_REASON_SYMBOL(name, value, trace, words) { value, #trace }

#endif /* RTRS_CORE_CLOSE_REASON_H */
