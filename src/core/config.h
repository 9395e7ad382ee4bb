// SPDX-License-Identifier: GPL-2.0
// What the module's parameters say, checked once at load.
#pragma once

#include "core/rtrs_core.h"
#include "rt/types.h"

namespace core {

// One response in 512 asks for a completion, as upstream's interval at its
// default queue depth: the others cost the server no completion event at
// all (one in 32 cost 0.03 completions an I/O more than upstream's).
constexpr rt::u32 kDefaultSignalInterval = 512;

struct Config {
    bool always_invalidate = true;
    rt::u32 chunk_size = 0;       // max_chunk_size
    rt::u32 queue_depth = 0;      // sess_queue_depth
    rt::u64 chunk_mem_limit = 0;  // bytes of chunks all sessions may hold
    rt::u32 page_size = 4096;     // the header room a chunk leaves (max_hdr_size)
    // One response in this many is signaled (and samples the transport
    // latency); the others complete silently, as upstream's do.
    rt::u32 signal_interval = kDefaultSignalInterval;

    // One session's chunk memory.
    rt::u64 session_bytes() const { return rt::u64{queue_depth} * chunk_size; }
};

// The default budget: half of the machine's memory, so that a flood of
// sessions is refused long before the machine runs short.
constexpr rt::u64 default_chunk_mem_limit(rt::u64 total_ram) { return total_ram / 2; }

// What a new session's chunks must leave of the machine's available
// memory, whatever the budget says: an eighth of its RAM. A budget set
// above what the machine has then still ends in a refusal, not in the
// OOM killer taking the processes that need the last pages.
constexpr rt::u64 chunk_mem_headroom(rt::u64 total_ram) { return total_ram / 8; }

}  // namespace core
