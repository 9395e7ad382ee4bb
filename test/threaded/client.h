// SPDX-License-Identifier: GPL-2.0
// A client of the core over the threaded environment (thread_env.h): one
// path of cid_num connections, brought up as a real client does it
// (connection requests, the info exchange), then I/O requests written into
// its chunks and signalled with immediates, each connection driven by the
// thread that calls into it (its CQ's context).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/rtrs_core.h"
#include "core/wire.h"
#include "thread_env.h"

namespace tclient {

struct Path {
    wire::Uuid paths_uuid{};
    wire::Uuid sess_uuid{};
    std::uint16_t cid_num = 3;
    rtrs_core_addr caddr{};
    rtrs_core_addr saddr{};
    void* ib_dev = nullptr;
    std::vector<tenv::Cm*> cms;
    std::uint32_t queue_depth = 0;
    std::uint32_t chunk_size = 0;
    std::vector<std::uint8_t*> chunks;  // the client's view of each chunk
    // Per chunk: 0 in flight, 1 + errno magnitude once its response came.
    // One cache line each: threads that drive their own connections take
    // interleaved chunks (as a real client's shared permits do), and
    // neighbouring flags on one line made their CPUs fight over it, which
    // the scaling benchmark then counted as the server's cost.
    struct alignas(64) Done {
        std::atomic<std::uint32_t> v{1};
        void store(std::uint32_t x, std::memory_order o = std::memory_order_seq_cst) { v.store(x, o); }
        std::uint32_t load(std::memory_order o = std::memory_order_seq_cst) const { return v.load(o); }
    };
    std::unique_ptr<Done[]> done;

    tenv::Con* con(std::uint16_t cid) const { return tenv::con_of(cms[cid]); }
};

// tag picks the uuids and the client's address (10.77.<tag>.2).
Path make(int tag, std::uint16_t cid_num, void* ib_dev);

// Connects every connection, sends the info request with the session's
// name, completes connection 0's sends until the info response came.
// False (with *why) if the path did not come up.
bool up(Path& p, const std::string& name, std::string* why);

// A request on chunk id over connection cid: a write of 4 KiB or a read of
// 4 KiB into a (pretend) client buffer. Writes the RTRS header into the
// chunk and delivers the immediate; false if the connection is gone.
bool request(Path& p, std::uint16_t cid, std::uint32_t id, bool read);

// Waits (delivering cid's completions) until chunk id's response came or
// the connection is gone; true for a response.
bool wait_response(Path& p, std::uint16_t cid, std::uint32_t id);

}  // namespace tclient
