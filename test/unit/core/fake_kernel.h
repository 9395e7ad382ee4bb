// SPDX-License-Identifier: GPL-2.0
// A fake of the kernel environment (core/env.h) for host tests of the core.
//
// Single-threaded and deterministic: nothing happens unless the test makes
// it happen. Work items run when the test calls run(), or advance() moves
// the clock past their time; completions come when the test delivers them.
// Every object the core makes here is tracked: the test ends by checking
// that none is left (leaks), and every call checks what the real kernel
// would check (locks held in order and where needed, nothing posted on a
// drained connection, nothing allocated under a lock it must not be, sysfs
// names unique, DMA syncs inside mapped chunks). A broken rule is recorded
// as a violation; tests expect none.
//
// Failures on demand: every call that can fail counts as a "failure point";
// fail_at = N makes the N-th one (from 0) fail, once.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/rtrs_core.h"

namespace fake {

struct Con;

struct Lock {
    rtrs_env_lock_kind kind;
    bool held = false;
    bool live = true;
};

struct Work {
    void* owner;
    unsigned kind;
    bool pending = false;
    bool running = false;
    bool live = true;
    std::uint64_t due = 0;
    std::uint64_t seq = 0;  // queue order among equal times
    // The owner's number: one per owner from its first work item to its
    // last one freed (addresses are reused, so they cannot name it).
    int owner_no = 0;
};

struct Waiter {
    bool done = false;
    bool live = true;
};

struct Dev {
    void* ib_dev;
    rtrs_env_dev_attrs attrs{};
    bool live = true;
    int mappings = 0;  // chunks mapped on it
    int bufs = 0;
    int mrs = 0;
};

struct Mr {
    Dev* dev;
    std::uint32_t rkey;
    bool live = true;
    std::vector<std::uint64_t> dma;  // the chunks' addresses it was given, in order
};

struct Cm {
    int id;
    void* ib_dev = nullptr;    // the device the request came on
    bool accepted = false;
    bool rejected = false;
    int reject_errno = 0;      // from the rejection's private data
    std::vector<std::uint8_t> priv;
    Con* con = nullptr;        // once rtrs_env_con_create took it
    bool in_handler = false;   // the core is inside its CM handler
};

struct PostedSend {
    rtrs_env_wr wr;
};

struct PostedRecv {
    rtrs_env_buf* buf;  // nullptr: for an immediate
    rtrs_core_cqe* cqe;
};

struct Con {
    Cm* cm;
    Dev* dev;
    rtrs_env_con_sizes sizes;
    Lock* lock = nullptr;  // held around every post on it (CON_IO)
    void* core;
    std::deque<PostedSend> sends;  // posted, not yet completed
    std::deque<PostedRecv> recvs;
    bool disconnected = false;
    bool established = false;  // the CM said so (cm_event)
    bool cm_ended = false;     // the CM said it ended: it says nothing more
    bool drained = false;
    bool qp_destroyed = false;  // its QP and CQ
    bool destroyed = false;     // its cm_id (and the rest)
    bool in_cq = false;        // one of its completions is being handled
    std::uint64_t total_sends = 0;
};

struct SysfsSess {
    std::string name;
    bool live = true;
    int paths = 0;
};

struct SysfsPath {
    SysfsSess* sess;
    std::string name;
    void* core_path;
    bool live = true;
};

// A session's or a path's debugfs folder (with its latency file).
struct Debugfs {
    std::string name;
    Debugfs* sess = nullptr;  // a path's session folder
    void* core_path = nullptr;
    bool live = true;
    int paths = 0;
};

// One trace event, as "name field=value ...".
struct Trace {
    std::string name;
    std::string sess, path, why;
    int reason = 0, err = 0, was_up = 0, is_read = 0;
    std::uint32_t chunk = 0, missed = 0, max = 0;
};

struct Ulp {
    // What the ULP does; the defaults accept everything and answer nothing
    // (the test answers requests itself).
    std::function<int(void* priv, rtrs_srv_op* op, void* data, std::uint32_t datalen,
                      const void* usr, std::uint32_t usrlen)>
        rdma_ev;
    std::function<int(void* sess, int ev, void* priv)> link_ev;
};

struct Event {
    enum Kind { RdmaEv, LinkEv } kind = RdmaEv;
    rtrs_srv_op* op = nullptr;
    void* sess = nullptr;
    int ev = 0;
    int dir = -1;  // RdmaEv: RTRS_CORE_DIR_READ or RTRS_CORE_DIR_WRITE
    std::uint32_t datalen = 0;
    std::uint32_t usrlen = 0;
    std::vector<std::uint8_t> usr;
};

class Kernel {
public:
    // --- knobs ---
    long fail_at = -1;       // the failure point (from 0) to fail; -1 none
    long failure_points = 0; // how many were passed so far
    bool failed = false;     // whether fail_at was hit
    std::uint64_t now = 1000000;
    // rtrs_env_now_ns() is now * 10^6 + ns_skew (set it to make the clock
    // go backwards, or jump).
    std::int64_t ns_skew = 0;
    bool debugfs_absent = false;  // as with debugfs disabled: every add says NULL
    std::uint64_t total_ram = 2ull << 30;
    std::uint64_t available_ram = 1ull << 30;  // what rtrs_env_available_ram() says
    rtrs_env_dev_attrs dev_attrs{};  // what every device says of itself
    Ulp ulp;
    // Called while the core waits (a server close, a device removal), as
    // the rest of the kernel would go on meanwhile.
    std::function<void()> on_wait;
    // The client answers a disconnect of an established connection this
    // many ms later (its DREP: a DISCONNECTED event); -1: never (a client
    // that is gone).
    long disconnect_answer_ms = 0;
    // What another thread does at a chosen moment: called at every failure
    // point with its name (before it is decided), and after every release
    // of a lock. A hook that must fire once clears itself.
    std::function<void(const char* what)> on_point;
    std::function<void(Lock* released)> on_release;
    // Where another thread may run (the schedule explorer, explore.h):
    // a failure point or a lock release that leaves no lock of ours held,
    // and the listener's IP half listening before its IB half is made.
    std::function<void(const char* where)> on_preempt;
    // Decides a failure point when set (true fails it), instead of fail_at.
    std::function<bool(const char* what)> should_fail;
    // Called while the core waits, before on_wait: true when it made
    // something happen (then the wait looks again without moving time).
    std::function<bool()> on_wait_step;
    // Every send work request posted, as it is posted (what the client
    // receives: the info response, the I/O responses, heartbeats).
    std::function<void(Con* c, const rtrs_env_wr& wr)> on_post;
    // The client's answers to our disconnects are delivered by the test
    // (deliver_due_cm_event), not by run() when due.
    bool cm_answers_by_hand = false;

    // --- records ---
    std::vector<std::string> violations;
    std::vector<std::string> warnings;
    std::vector<std::string> logs;
    // The kernel's printk_ratelimit(): one budget for every caller in the
    // kernel, 10 lines every 5 s (DEFAULT_RATELIMIT_BURST and _INTERVAL).
    struct PrintkRatelimit {
        std::uint64_t begin_ms = 0;
        int printed = 0;
        int missed = 0;
    } printk_rl;
    std::vector<Event> events;
    std::vector<std::unique_ptr<Lock>> locks;
    std::vector<std::unique_ptr<Work>> works;
    std::vector<std::unique_ptr<Waiter>> waiters;
    std::vector<std::unique_ptr<Dev>> devs;
    std::vector<std::unique_ptr<Mr>> mrs;
    std::vector<std::unique_ptr<Cm>> cms;
    std::vector<std::unique_ptr<Con>> cons;
    std::vector<std::unique_ptr<SysfsSess>> sysfs_sess;
    std::vector<std::unique_ptr<SysfsPath>> sysfs_paths;
    std::vector<std::unique_ptr<Debugfs>> debugfs;
    std::vector<Trace> traces;
    std::map<void*, std::uint32_t> chunks;  // live chunk -> size
    struct Region {
        void* cpu;
        std::uint32_t len;
        bool chunk;  // a chunk mapping (else a message buffer)
    };
    std::map<std::uint64_t, Region> dma;  // live DMA address -> what is there
    std::vector<Lock*> held;  // in order taken
    long allocs_live = 0;
    void* listener_server = nullptr;  // the first server's
    std::vector<void*> listeners;     // every listening server, in order
    bool listening = false;
    // CM events still to come (the answers to disconnects), by due time.
    struct DueCmEvent {
        Con* con;
        rtrs_core_cm_event ev;
        std::uint64_t due;
    };
    std::vector<DueCmEvent> due_cm_events;
    std::uint64_t work_seq = 0;
    int work_owners = 0;  // owner numbers given (Work::owner_no)
    std::uint64_t next_dma = 0x100000000ull;
    std::uint32_t next_rkey = 0x100;
    int next_cm = 1;

    // --- RDMA devices (the IB core's view): a device is registered until
    // its removal; the removal tells our client (rtrs_core_on_device_remove,
    // which waits for what we use on it), then rdma_cm tells each cm_id on
    // it (DEVICE_REMOVAL) and waits until every one is destroyed; then the
    // device is unregistered: whatever of ours is still on it (a PD, a
    // region, a mapping, a buffer) is a violation, as is any later use.
    enum class IbState { Registered, Removing, Gone };
    std::map<void*, IbState> ib_devs;  // absent: registered
    IbState ib_state(void* ib_dev) const;
    std::set<void*> told;  // devices our client was told of (the core's add)
    // A device registered (again): our client's add.
    void add_ib_dev(void* ib_dev);
    // Both halves of a device's removal; returns once it is unregistered.
    void remove_ib_dev(void* ib_dev);
    // cm_ids on the device not yet destroyed (kept by the core).
    int live_cms_on(void* ib_dev) const;

    Kernel();

    // A call that can fail: true when this one must.
    bool fail_here(const char* what);
    // Lets on_preempt run, when set and no lock is held.
    void preempt(const char* where);
    void violation(const std::string& what);
    bool holds(rtrs_env_lock_kind kind) const;

    // --- driving ---
    // Runs every work item that is due, in time then queue order, until
    // none is left due; CM events that are due come first.
    void run();
    // Moves the clock, running what comes due on the way.
    void advance(std::uint64_t ms);
    Work* pending_work(void* owner, unsigned kind);
    // Work items due now, in the order run() would take them.
    std::vector<Work*> due_works() const;
    // Runs one pending work item (it must be due).
    void run_work(Work* w);
    // The earliest time a work item or a CM answer is due, after now
    // (0: none).
    std::uint64_t next_due() const;
    // Delivers the i-th CM answer still to come, whenever it is due.
    void deliver_due_cm_event(std::size_t i);

    // A connection request on a new cm_id; returns it (check accepted /
    // rejected), with the core's return value in *ret.
    Cm* connect(void* core_server, const std::vector<std::uint8_t>& priv,
                const rtrs_core_addr& client, const rtrs_core_addr& server, void* ib_dev,
                int* ret);
    void cm_event(Con* c, rtrs_core_cm_event ev, int status = 0);

    // Completions.
    // Delivers the oldest posted receive of c as a message of len bytes
    // (its buffer must have been filled by the test).
    bool deliver_recv(Con* c, std::uint32_t len);
    bool deliver_imm(Con* c, std::uint32_t imm);
    // Completes the posted sends of c up to and including the first
    // signaled one; false if none is signaled. ok=false fails it.
    bool complete_send(Con* c, bool ok = true);
    // Completes every signaled send of c, repeatedly, until none is left.
    int complete_all_sends(Con* c);

    // The memory behind [addr, addr + len) of a live DMA region; nullptr
    // when it is not all inside one (what a client's RDMA to a region that
    // is gone would meet).
    std::uint8_t* cpu_of(std::uint64_t addr, std::uint32_t len);

    // The text of a path's live debugfs latency file ("" without one).
    std::string debugfs_latency(const std::string& sess, const std::string& path);
    std::vector<Trace> traces_named(const std::string& name) const;

    // --- checks ---
    // What is still allocated / live / registered, one line each.
    std::vector<std::string> leftovers() const;
};

Kernel& k();
void reset();

// The immediate data of a fake address, e.g. ipv4(10, 77, 0, 2).
rtrs_core_addr ipv4(int a, int b, int c, int d);

}  // namespace fake
