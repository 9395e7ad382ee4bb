// SPDX-License-Identifier: GPL-2.0
// Validation of the module parameters. The rules are the upstream server's:
// a queue depth of 1..65535, a power-of-two chunk of at least 8 KiB, and
// chunk id plus offset must fit the 28 payload bits of an immediate.

#include "core/rtrs_core.h"
#include "rt/errno.h"
#include "rt/strbuf.h"
#include "rt/utility.h"

using rt::StrBuf;

extern "C" int rtrs_core_check_params(int max_chunk_size, int sess_queue_depth, char* msg,
                                      rt::usize msg_len) {
    StrBuf out(msg, msg_len);

    if (sess_queue_depth < 1 || sess_queue_depth > RTRS_CORE_MAX_SESS_QUEUE_DEPTH) {
        out.put("invalid sess_queue_depth ").dec(sess_queue_depth).put(": must be between 1 and ")
            .dec(RTRS_CORE_MAX_SESS_QUEUE_DEPTH);
        return -rt::errc::inval;
    }
    if (max_chunk_size < RTRS_CORE_MIN_CHUNK_SIZE ||
        !rt::is_power_of_two(static_cast<rt::u64>(max_chunk_size))) {
        out.put("invalid max_chunk_size ").dec(max_chunk_size)
            .put(": must be a power of two and at least ").dec(RTRS_CORE_MIN_CHUNK_SIZE);
        return -rt::errc::inval;
    }
    const rt::u32 id_bits = rt::bits_for(static_cast<rt::u64>(sess_queue_depth));
    const rt::u32 off_bits = rt::bits_for(static_cast<rt::u64>(max_chunk_size));
    if (id_bits + off_bits > RTRS_CORE_IMM_PAYLOAD_BITS) {
        out.put("sess_queue_depth ").dec(sess_queue_depth).put(" and max_chunk_size ")
            .dec(max_chunk_size).put(" need ").dec(id_bits + off_bits)
            .put(" bits of immediate data, only ").dec(RTRS_CORE_IMM_PAYLOAD_BITS)
            .put(" exist: lower one of them");
        return -rt::errc::inval;
    }
    return 0;
}
