// SPDX-License-Identifier: GPL-2.0
// A path's view of its session's chunks on its device: each chunk's DMA
// address, the registrations that cover them (one chunk each with
// always_invalidate, else as many as the device's page list allows), and
// the request of each chunk.
//
// Lock rule: none. All of it is made by the path's setup() (under the
// server lock, before the path is known and before any event can come)
// and freed by its free_resources() (after its QPs are destroyed, when no
// event comes any more); in between it does not change, and any context
// reads it. What changes in a request is the request's (request.h: under
// the path's io lock).
#pragma once

#include "core/env.h"
#include "rt/array.h"
#include "rt/result.h"
#include "rt/span.h"
#include "rt/types.h"

namespace core {

class Path;
class Request;
class Session;

// A fast registration's next key: its low byte (the key's tag, which the
// verbs let the owner change) counts up, the rest stays.
constexpr rt::u32 next_rkey(rt::u32 rkey) { return (rkey & ~0xffu) | ((rkey + 1) & 0xffu); }

// One memory registration: chunks [first, first + n) of the session.
struct Mr {
    rtrs_env_mr* mr = nullptr;
    rtrs_env_mr_info info{};
    rt::u32 first = 0;
    rt::u32 n = 0;
    rtrs_env_buf rkey_msg{};  // always_invalidate: the new-key message
};

class PathChunks {
public:
    PathChunks() = default;
    PathChunks(const PathChunks&) = delete;
    PathChunks& operator=(const PathChunks&) = delete;

    // setup(), in this order (each may fail; free_all() undoes what was made).
    // The arrays of the queue_depth chunks: DMA addresses and requests
    // (each request made for path, with its chunk's id).
    rt::Result<void> alloc(Path& path, rt::u32 queue_depth);
    // How many chunks share a registration, and so how many registrations
    // there will be (returned): with always_invalidate one chunk each (so
    // that each can be invalidated alone), else as many as the device's
    // page list allows.
    rt::u32 plan(bool always_inval, const rtrs_env_dev_attrs& a, rt::u32 queue_depth);
    // The registrations' array, for plan()'s count.
    rt::Result<void> alloc_mrs(rt::u32 mrs);
    // Maps each of sess's chunks for dev: false at the first that fails.
    bool map(rtrs_env_dev* dev, const Session& sess, rt::u32 chunk_size);
    // Registers them (with always_invalidate, with a new-key message
    // each), under the next key of each registration (the client learns
    // it from the info response, whose REG_MR work requests register it):
    // false at the first that fails.
    bool register_chunks(rtrs_env_dev* dev, rt::u32 chunk_size, bool always_inval);
    // Frees what the calls above made: registrations, then mappings. The
    // arrays stay (the path's destructor frees them).
    void free_all(rtrs_env_dev* dev, rt::u32 chunk_size);

    rt::u32 mrs_num() const { return mrs_num_; }
    // The registrations made so far, in chunk order.
    rt::Span<const Mr> registered() const { return rt::Span<const Mr>(mrs_.data(), mrs_num_); }
    rt::u64 chunk_dma(rt::u32 id) const { return chunk_dma_[id]; }
    Mr& mr_of_chunk(rt::u32 id) const { return mrs_[id / chunks_per_mr_]; }
    // The request of chunk id (id < queue depth).
    Request& req(rt::u32 id) const { return reqs_[id]; }
    const rt::Array<Request>& reqs() const { return reqs_; }

private:
    rt::Array<rt::u64> chunk_dma_;
    rt::Array<Mr> mrs_;
    rt::u32 mrs_num_ = 0;  // registered so far (of mrs_.size())
    rt::u32 chunks_per_mr_ = 1;
    rt::Array<Request> reqs_;
};

}  // namespace core
