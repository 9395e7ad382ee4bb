// SPDX-License-Identifier: GPL-2.0
// A kernel environment (core/env.h) with real threads, for what the
// single-threaded fake (test/unit/core/fake_kernel.*) cannot show: the core
// driven from several threads at once, as the kernel drives it (each
// connection's completions in its CQ's context, the ULP's answers from any
// CPU, work items on a pool, CM events on a thread of their own).
//
// What it checks, as the kernel would (each a violation, counted):
//   - a post on a connection whose drain began (ib_drain_qp() guarantees
//     nothing then: a completion may come after the drain returned);
//   - a post without the lock the connection was made with held (the
//     glue's lockdep assertion), when one was given;
//   - more work requests outstanding than the send queue holds;
//   - an immediate with no receive posted;
//   - a completion delivered while another runs for the same CQ (the
//     CQ's poll context runs one at a time);
//   - a CM event after its cm_id was destroyed.
// And it counts what is live (locks, works, waiters, devices, MRs, buffers,
// chunks, connections, allocations) for the leak check at the end.
//
// Used by the scaling benchmark (tools/bench/scale-host.sh) and the
// ThreadSanitizer stress test (unit.tsan-stress); not by the unit tests.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/rtrs_core.h"

namespace tenv {

struct Con;
struct Cm;

// What the ULP does with an I/O request (any thread: called in the
// connection's CQ context, as the kernel does).
using RdmaEv = std::function<int(void* priv, rtrs_srv_op* op, int dir, void* data,
                                 std::uint32_t datalen, const void* usr, std::uint32_t usrlen)>;
using LinkEv = std::function<int(void* sess, int ev, void* priv)>;

struct Options {
    // What every device says of itself.
    rtrs_env_dev_attrs dev_attrs{};
    int work_threads = 2;
    // The client answers a disconnect (DREQ) after this many ms; -1 never.
    int disconnect_answer_ms = 1;
};

// Starts the worker threads (work items, CM events); once per process run
// of a test (stop() ends them).
void start(const Options& o = {});
void stop();

void set_ulp(RdmaEv rdma, LinkEv link);

// --- the client's side -------------------------------------------------------

// A connection request on a new cm_id, handled as the CM handler would
// (one at a time per id). Returns the core's value; *cm the id.
int connect(void* core_server, const std::vector<std::uint8_t>& priv, const rtrs_core_addr& client,
            const rtrs_core_addr& server, void* ib_dev, Cm** cm);
bool accepted(const Cm* cm);
const std::vector<std::uint8_t>& accept_priv(const Cm* cm);
Con* con_of(const Cm* cm);
// The CM says the connection is established (from the CM's thread).
void established(Cm* cm);
// The client disconnects (DREQ): the CM tells the core DISCONNECTED.
void client_disconnect(Cm* cm);

// The listening server (the first rtrs_env_listen()'s).
void* listener();

// Completions, in the connection's CQ context (one at a time per CQ):
// a receive of a message of len bytes (the buffer of the oldest posted
// receive is filled with msg first); an immediate; every completed send
// queued so far (returns how many).
bool deliver_msg(Con* c, const void* msg, std::uint32_t len);
// write, if given, is the client's RDMA write before the immediate: it
// runs only while the connection is alive (not drained), so the memory it
// writes (the server's chunk) is still there; false from it sends nothing.
bool deliver_imm(Con* c, std::uint32_t imm, const std::function<bool()>& write = {});
int poll(Con* c);
// Whether the connection was drained or destroyed (nothing more comes).
bool gone(Con* c);

// The messages the server sent on c (SENDs with a buffer), oldest first,
// taken from the connection.
std::vector<std::vector<std::uint8_t>> take_msgs(Con* c);
// What the client saw of I/O responses on c: a callback with (chunk id,
// errno magnitude), in the order posted, from the poster's thread.
void on_response(Con* c, std::function<void(std::uint32_t id, std::uint32_t err)> fn);

// The memory behind a DMA address of a mapped chunk (nullptr if none).
std::uint8_t* cpu_of(std::uint64_t addr, std::uint32_t len);

// A sysfs path by name: store/show through it while it is listed, as a
// sysfs file's user would (its removal waits for them). -ENOENT once gone.
int sysfs_store(const std::string& path, rtrs_core_path_attr attr, const std::string& text);
int sysfs_show(const std::string& path, rtrs_core_path_attr attr, std::string* out);
std::vector<std::string> sysfs_paths();

// --- checks ------------------------------------------------------------------

std::vector<std::string> violations();
// Forgets the violations, warnings and log lines so far (a new round).
void clear_records();
std::vector<std::string> warnings();
// What is live, one line per kind that is not zero.
std::vector<std::string> leftovers();
long logs_count();
// Kernel log lines so far (for a test's failure message).
std::vector<std::string> logs();

}  // namespace tenv
