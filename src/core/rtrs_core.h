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

/* --- protocol, for the glue; implemented over src/core/wire.h --------- */

/* What a connection request asks for, decoded and checked. */
struct rtrs_core_conn_req {
	__UINT16_TYPE__ version;
	__UINT16_TYPE__ cid;
	__UINT16_TYPE__ cid_num;
	__UINT16_TYPE__ recon_cnt;
	unsigned char sess_uuid[16];
	unsigned char paths_uuid[16];
	unsigned char first_conn;	/* 0 or 1 */
};

/*
 * Decodes and checks a connection request's private data. Returns 0, or a
 * negative errno for the reject with a one-line reason in why.
 */
int rtrs_core_parse_conn_req(const void *data, __SIZE_TYPE__ len,
			     struct rtrs_core_conn_req *req, char *why,
			     __SIZE_TYPE__ why_len);

/* Size of the connection response, and building one (errno_value 0 to
 * accept, or the negative errno of the reject). */
__SIZE_TYPE__ rtrs_core_conn_rsp_size(void);
void rtrs_core_build_conn_rsp(void *buf, int errno_value,
			      __UINT16_TYPE__ queue_depth,
			      __UINT32_TYPE__ max_io_size,
			      __UINT32_TYPE__ max_hdr_size,
			      __UINT32_TYPE__ flags);
#define RTRS_CORE_CONN_RSP_NEW_RKEY 2u	/* flags: a new rkey comes with each response */

/* Size of an info request as the client sends it. */
__SIZE_TYPE__ rtrs_core_info_req_size(void);
/*
 * Checks an info request and copies out the session name. Returns 0 or a
 * negative errno with the reason in why.
 */
int rtrs_core_parse_info_req(const void *data, __SIZE_TYPE__ len, char *name,
			     __SIZE_TYPE__ name_cap, char *why,
			     __SIZE_TYPE__ why_len);

/* Size of an info response with sg_cnt descriptors; building one. */
__SIZE_TYPE__ rtrs_core_info_rsp_size(unsigned int sg_cnt);
void rtrs_core_build_info_rsp(void *buf, unsigned int sg_cnt);
void rtrs_core_info_rsp_set_desc(void *buf, unsigned int i, __UINT64_TYPE__ addr,
				 __UINT32_TYPE__ key, __UINT32_TYPE__ len);

/* Immediate data: 4 bits of type, 28 of payload. */
#define RTRS_CORE_IMM_IO_REQ 0u
#define RTRS_CORE_IMM_IO_RSP 1u
#define RTRS_CORE_IMM_IO_RSP_W_INV 2u
#define RTRS_CORE_IMM_HB_MSG 8u
#define RTRS_CORE_IMM_HB_ACK 9u
__UINT32_TYPE__ rtrs_core_imm(__UINT32_TYPE__ type, __UINT32_TYPE__ payload);
__UINT32_TYPE__ rtrs_core_imm_type(__UINT32_TYPE__ imm);
__UINT32_TYPE__ rtrs_core_imm_payload(__UINT32_TYPE__ imm);

/* Bits of an I/O immediate that number the chunk, for a queue depth. */
unsigned int rtrs_core_chunk_bits(int queue_depth);

/* --- I/O ---------------------------------------------------------------- */

/*
 * An I/O request's immediate payload: the chunk and the offset of the
 * request's header in it. Returns 0, or -ERANGE when either is out of range.
 */
int rtrs_core_locate_io(__UINT32_TYPE__ payload, int queue_depth,
			__UINT32_TYPE__ chunk_size, __UINT32_TYPE__ *chunk_id,
			__UINT32_TYPE__ *offset);

#define RTRS_CORE_IO_WRITE 2u
#define RTRS_CORE_IO_READ 3u

/* A request found in its chunk, checked against the chunk's bounds. */
struct rtrs_core_io_req {
	__UINT32_TYPE__ type;		/* RTRS_CORE_IO_WRITE or _READ */
	__UINT32_TYPE__ data_len;	/* data at the chunk's start */
	__UINT32_TYPE__ usr_len;	/* the ULP's header, right after the data */
	__UINT32_TYPE__ bytes;		/* data + header: what the stats count */
	unsigned char need_inval;	/* read: invalidate the client's key */
	unsigned char sg_cnt;		/* read: 0 or 1 descriptor */
	__UINT64_TYPE__ addr;		/* read: where the data goes */
	__UINT32_TYPE__ key;
	__UINT32_TYPE__ len;
};

/*
 * Parses the request whose header is at offset off of the chunk. Returns 0,
 * or a negative errno with the reason: -EPROTO for an unknown message type
 * (the path must close), others for a request that is to be failed.
 */
int rtrs_core_parse_io_req(const void *chunk, __SIZE_TYPE__ chunk_size,
			   __UINT32_TYPE__ off, struct rtrs_core_io_req *req,
			   char *why, __SIZE_TYPE__ why_len);

/* The response immediate for a request (err 0 or a negative errno). */
__UINT32_TYPE__ rtrs_core_io_rsp_imm(__UINT32_TYPE__ msg_id, int err, int with_inval);

/* The new-key message that follows each response when always_invalidate. */
__SIZE_TYPE__ rtrs_core_rkey_rsp_size(void);
void rtrs_core_build_rkey_rsp(void *buf, __UINT16_TYPE__ buf_id, __UINT32_TYPE__ rkey);

/* Heartbeats: every 5 s; a path that stays silent is dead. */
#define RTRS_CORE_HB_INTERVAL_MS 5000
enum rtrs_core_hb_action {
	RTRS_CORE_HB_SEND,	/* send a heartbeat now */
	RTRS_CORE_HB_WAIT,	/* one is outstanding: just wait */
	RTRS_CORE_HB_DEAD,	/* too many missed: close the path */
};
/* One heartbeat period passed; *missed counts periods without traffic. */
enum rtrs_core_hb_action rtrs_core_hb_tick(unsigned int *missed);

/* --- sysfs ------------------------------------------------------------- */

/* 0 when a sysfs write is "1" (a trailing newline allowed), else -EINVAL. */
int rtrs_core_parse_one(const char *buf, __SIZE_TYPE__ len);

/* stats/rdma: "<reads> <read bytes> <writes> <write bytes> <inflight>\n". */
int rtrs_core_format_rdma_stats(char *buf, __SIZE_TYPE__ cap,
				__UINT64_TYPE__ read_cnt, __UINT64_TYPE__ read_bytes,
				__UINT64_TYPE__ write_cnt, __UINT64_TYPE__ write_bytes,
				int inflight);

#ifdef __cplusplus
}
#endif

#endif /* RTRS_CORE_H */
