/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The narrow interface between the C glue (src/kernel) and the C++ core
 * (src/core). Plain C types only: the glue cannot see C++ and the core
 * cannot see kernel headers.
 */
#ifndef RTRS_CORE_H
#define RTRS_CORE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Limits of the module parameters, as the upstream server has them. */
#define RTRS_CORE_MIN_CHUNK_SIZE 8192
#define RTRS_CORE_MAX_SESS_QUEUE_DEPTH 65535
/* Bits of an immediate left for chunk id and offset (32 minus 4 of type). */
#define RTRS_CORE_IMM_PAYLOAD_BITS 28

/*
 * Checks the module parameters. Returns 0, or -EINVAL with a one-line reason
 * (no trailing newline) written to msg, which holds msg_len bytes.
 */
int rtrs_core_check_params(int max_chunk_size, int sess_queue_depth, char *msg,
			   __SIZE_TYPE__ msg_len);

#ifdef __cplusplus
}
#endif

#endif /* RTRS_CORE_H */
