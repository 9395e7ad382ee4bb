// SPDX-License-Identifier: GPL-2.0
// A path's chunks on its device: their mappings, registrations and
// requests, made by the path's setup() and freed by its free_resources().
#include "core/path_chunks.h"

#include "core/path.h"
#include "core/request.h"
#include "core/session.h"
#include "core/wire.h"

namespace core {

rt::Result<void> PathChunks::alloc(Path& path, rt::u32 queue_depth) {
    chunk_dma_ = RT_TRY(rt::Array<rt::u64>::make(rt::Gfp::kernel, queue_depth));
    reqs_ = RT_TRY(rt::Array<Request>::make(rt::Gfp::kernel, queue_depth));
    for (rt::u32 i = 0; i < queue_depth; ++i) reqs_[i].init(path, i);
    return {};
}

rt::u32 PathChunks::plan(bool always_inval, const rtrs_env_dev_attrs& a, rt::u32 queue_depth) {
    if (always_inval) {
        chunks_per_mr_ = 1;
    } else {
        rt::u32 per = a.max_fast_reg_page_list_len ? a.max_fast_reg_page_list_len : 1;
        chunks_per_mr_ = per < queue_depth ? per : queue_depth;
    }
    return (queue_depth + chunks_per_mr_ - 1) / chunks_per_mr_;
}

rt::Result<void> PathChunks::alloc_mrs(rt::u32 mrs) {
    mrs_ = RT_TRY(rt::Array<Mr>::make(rt::Gfp::kernel, mrs));
    return {};
}

bool PathChunks::map(rtrs_env_dev* dev, const Session& sess, rt::u32 chunk_size) {
    const rt::u32 queue_depth = static_cast<rt::u32>(chunk_dma_.size());
    for (rt::u32 i = 0; i < queue_depth; ++i) {
        chunk_dma_[i] = rtrs_env_dma_map_chunk(dev, sess.chunk(i), chunk_size);
        if (!chunk_dma_[i]) return false;
    }
    return true;
}

bool PathChunks::register_chunks(rtrs_env_dev* dev, rt::u32 chunk_size, bool always_inval) {
    const rt::u32 queue_depth = static_cast<rt::u32>(chunk_dma_.size());
    for (rt::u32 first = 0; first < queue_depth; first += chunks_per_mr_) {
        Mr& m = mrs_[mrs_num_];
        m.first = first;
        m.n = queue_depth - first < chunks_per_mr_ ? queue_depth - first : chunks_per_mr_;
        m.mr = rtrs_env_mr_alloc(dev, chunk_dma_.data() + first, m.n, chunk_size, &m.info);
        if (!m.mr) return false;
        ++mrs_num_;
        // Registered under the next key: the client learns it from the
        // info response, and the REG_MR work requests there register it.
        m.info.rkey = rtrs_env_mr_next_rkey(m.mr);
        if (always_inval &&
            rtrs_env_buf_alloc(dev, sizeof(wire::RkeyRsp), RTRS_ENV_DMA_TO_DEVICE, &m.rkey_msg))
            return false;
    }
    // What each request's response takes from its chunk and registration.
    for (rt::u32 i = 0; i < queue_depth; ++i) {
        Request& r = reqs_[i];
        Mr& m = mr_of_chunk(i);
        r.mr = &m;
        r.rsp.data_addr = chunk_dma_[i];
        if (always_inval) {
            r.rsp.mr = m.mr;
            r.rsp.msg_addr = m.rkey_msg.dma;
            r.rsp.msg_len = sizeof(wire::RkeyRsp);
        }
    }
    return true;
}

void PathChunks::free_all(rtrs_env_dev* dev, rt::u32 chunk_size) {
    for (rt::u32 i = 0; i < mrs_num_; ++i) {
        if (mrs_[i].rkey_msg.cpu) rtrs_env_buf_free(dev, &mrs_[i].rkey_msg);
        rtrs_env_mr_free(mrs_[i].mr);
    }
    mrs_num_ = 0;
    for (rt::u64& dma : chunk_dma_) {
        if (dma) rtrs_env_dma_unmap_chunk(dev, dma, chunk_size);
        dma = 0;
    }
}

}  // namespace core
