// SPDX-License-Identifier: GPL-2.0
// The module-wide state of the core: the configuration, the servers
// (one per rtrs_srv_open()), the RDMA devices in use and the chunk memory
// budget. One exists between rtrs_core_init() and rtrs_core_exit().
#pragma once

#include "core/admission.h"
#include "core/config.h"
#include "core/env.h"
#include "core/lock.h"
#include "core/session.h"
#include "rt/list.h"
#include "rt/refcount.h"
#include "rt/result.h"

namespace core {

class Device;
class Server;
class Session;
struct NamedTag;

class Module {
public:
    explicit Module(const Config& cfg) : cfg_(cfg) {}
    ~Module();

    const Config& cfg() const { return cfg_; }
    Lock& lock() RETURN_CAPABILITY(lock_) { return lock_; }

    // A device the IB core tells us of (our client's add): its record,
    // which lasts until the module's exit or a new device at its address.
    // ENOMEM (the device is then not ours to use).
    rt::Result<void> add_device(void* ib_dev) EXCLUDES(lock_);
    // The device ib_dev with a hold on its PD for the caller (opened for
    // the first): EBUSY once its removal began, ENODEV for a device not
    // told of, ENOMEM.
    rt::Result<rt::RefPtr<Device>> device_for(void* ib_dev) EXCLUDES(lock_);
    // Reserves a session's chunk memory: ENOMEM past the budget.
    rt::Result<void> reserve_chunk_mem(rt::u64 bytes);
    void release_chunk_mem(rt::u64 bytes);
    rt::u64 chunk_mem_used() EXCLUDES(lock_);
    // What else a client makes us allocate (a path's registrations and
    // arrays, a connection's queues), charged to the same budget, with
    // the same headroom a session's chunks must leave: ENOMEM, logged
    // with what it was for, past either. Given back with release_chunk_mem().
    rt::Result<void> charge(rt::u64 bytes, const char* what) EXCLUDES(lock_);

    // Gives s the name unless another session (of any server: they share
    // the class folder) has it; false when taken. Under s's server lock.
    bool claim_name(Session& s, rt::Bytes name) REQUIRES(s.server().lock()) EXCLUDES(lock_);
    // A named session going away gives its name back.
    void release_name(Session& s);

    // Admission (core/admission.h): each decision, and each new policy,
    // under the module lock, so that a policy replaced while connection
    // requests are handled applies from the next decision on, never in
    // the middle of one. Under a server's lock or none.
    // first_look: the request's first decision (takes the rate's token);
    // false for a look again after its server let go of its lock.
    Verdict admit_connection(const rtrs_core_addr& client, const ClientCounts& held,
                             bool first_look) EXCLUDES(lock_);
    Verdict admit_name(const rtrs_core_addr& client, rt::Bytes name) EXCLUDES(lock_);
    // Parses text into a new policy and puts it in effect: EINVAL with
    // "line N: why" in msg (the policy in effect stays), or ENOMEM.
    rt::Result<void> set_admission(const char* text, rt::usize len, char* msg, rt::usize cap)
        EXCLUDES(lock_);
    // The policy in effect as text, and the refusals so far; ENOSPC when
    // it does not fit in cap.
    rt::Result<rt::usize> show_admission(char* buf, rt::usize cap) EXCLUDES(lock_);
    rt::u64 admission_refusals(Verdict v) EXCLUDES(lock_);
    Verdict still_allowed(const rtrs_core_addr& client, rt::Bytes name) EXCLUDES(lock_);
    // Asks every path the policy in effect refuses now to close, in every
    // server (Server::close_refused()); returns how many.
    rt::u32 close_refused() EXCLUDES(servers_lock_);

    void add_server(Server& s) EXCLUDES(servers_lock_);
    void remove_server(Server& s) EXCLUDES(servers_lock_);
    // Marks ib_dev as going away (no new path on it), closes every path
    // on it and waits until its PD is closed.
    void remove_device(void* ib_dev);
    // The two halves of it: the device marked and its paths asked to
    // close (nullptr when nothing of ours uses ib_dev); then the wait for
    // its release (which frees the waiter).
    rtrs_env_waiter* begin_device_removal(void* ib_dev);
    void await_device_removal(rtrs_env_waiter* w);

private:
    friend rt::Result<void> init_module(const Config&);
    friend class Device;

    Config cfg_;
    Lock servers_lock_;  // SERVERS
    rt::List<Server> servers_ GUARDED_BY(servers_lock_);
    Lock lock_;  // MODULE: all below
    rt::List<Device> devices_ GUARDED_BY(lock_);
    rt::List<Session, NamedTag> named_ GUARDED_BY(lock_);
    rt::u64 chunk_mem_used_ GUARDED_BY(lock_) = 0;
    Admission admission_ GUARDED_BY(lock_);
};

// The one module, or nullptr outside init/exit.
Module* module();
rt::Result<void> init_module(const Config& cfg);
void exit_module();

}  // namespace core
