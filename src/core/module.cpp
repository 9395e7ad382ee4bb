// SPDX-License-Identifier: GPL-2.0
// The module-wide state: devices, the memory budget, servers.
#include "core/module.h"

#include "core/lock.h"
#include "core/log.h"
#include "core/path.h"
#include "core/server.h"
#include "rt/alloc.h"
#include "rt/errno.h"
#include "rt/strbuf.h"

namespace core {

namespace {
constinit Module* g_module = nullptr;
}

Module* module() { return g_module; }

rt::Result<void> init_module(const Config& cfg) {
    if (g_module) return rt::err(rt::errc::busy);
    auto m = RT_TRY(rt::make_own<Module>(rt::Gfp::kernel, cfg));
    m->lock_.init(RTRS_ENV_LOCK_MODULE);
    m->servers_lock_.init(RTRS_ENV_LOCK_SERVERS);
    if (!m->lock_ || !m->servers_lock_) return rt::err(rt::errc::nomem);
    g_module = m.release();
    return {};
}

void exit_module() {
    Module* m = g_module;
    g_module = nullptr;
    rt::destroy(m);
}

Module::~Module() {
    if (!servers_.empty()) rtrs_env_warn("rtrs core: module exit with servers open");
    // The records of the devices (our client's removal ran for each before).
    while (Device* d = devices_.pop_front()) {
        if (d->users_) rtrs_env_warn("rtrs core: module exit with devices in use");
        rt::destroy(d);
    }
    if (!named_.empty()) rtrs_env_warn("rtrs core: module exit with sessions named");
    if (lock_) rtrs_env_lock_free(lock_.raw());
    if (servers_lock_) rtrs_env_lock_free(servers_lock_.raw());
}

// --- devices -----------------------------------------------------------------

Device::~Device() {
    if (env_) rtrs_env_dev_close(env_);
    if (removal) rtrs_env_waiter_free(removal);
}

void Device::add_ref() {
    Guard g(module()->lock());
    ++users_;
}

void Device::release_ref() {
    rtrs_env_dev* env = nullptr;
    rtrs_env_waiter* wake = nullptr;
    {
        Guard g(module()->lock());
        if (users_ == 0) {
            rtrs_env_warn("rtrs core: device released more often than taken");
            return;
        }
        if (--users_ > 0) return;
        if (!paths.empty()) rtrs_env_warn("rtrs core: device released with paths on it");
        env = env_;
        env_ = nullptr;
        if (removing) {
            wake = removal;  // the remover frees it
            removal = nullptr;
        }
    }
    // (A path opening the device meanwhile gets a PD of its own.)
    if (env) rtrs_env_dev_close(env);
    if (wake) rtrs_env_waiter_done(wake);
}

rt::Result<void> Module::add_device(void* ib_dev) {
    Device* d = new (rt::Gfp::kernel) Device(ib_dev);
    if (!d) return rt::err(rt::errc::nomem);
    rtrs_env_waiter* removal = rtrs_env_waiter_new();
    if (!removal) {
        rt::destroy(d);
        return rt::err(rt::errc::nomem);
    }
    Device* old = nullptr;
    {
        Guard g(lock_);
        d->removal = removal;
        for (Device& o : devices_)
            if (o.ib_dev() == ib_dev) old = &o;
        if (old && (!old->removing || old->users_)) {
            // The IB core adds a device once, and a new one at the same
            // address only after the old one's removal returned.
            rtrs_env_warn("rtrs core: a device added twice");
            old = nullptr;
        } else {
            if (old) devices_.remove(*old);
            devices_.push_back(*d);
            d = nullptr;
        }
    }
    if (d) rt::destroy(d);
    if (old) rt::destroy(old);  // the one that went away
    return {};
}

rt::Result<rt::RefPtr<Device>> Module::device_for(void* ib_dev) {
    Guard g(lock_);
    Device* d = nullptr;
    for (Device& o : devices_)
        if (o.ib_dev() == ib_dev) d = &o;
    if (!d) return rt::err(rt::errc::nodev);  // not (yet) told of it
    if (d->removing) return rt::err(rt::errc::busy);
    if (d->users_ == 0) {
        rtrs_env_dev_attrs attrs{};
        rtrs_env_dev* env = rtrs_env_dev_open(ib_dev, &attrs);
        if (!env) return rt::err(rt::errc::nomem);
        d->env_ = env;
        d->attrs_ = attrs;
    }
    ++d->users_;
    return rt::RefPtr<Device>::adopt(d);
}

void Module::remove_device(void* ib_dev) {
    if (rtrs_env_waiter* w = begin_device_removal(ib_dev)) await_device_removal(w);
}

rtrs_env_waiter* Module::begin_device_removal(void* ib_dev) {
    Guard g(lock_);
    Device* dev = nullptr;
    for (Device& d : devices_)
        if (d.ib_dev() == ib_dev && !d.removing) dev = &d;
    if (!dev) return nullptr;
    // From now on no path is made on it, for as long as the record lasts.
    dev->removing = true;
    if (dev->users_ == 0) return nullptr;  // nothing of ours on it
    Log(kInfo).put(dev->attrs().name).put(": the device goes away; closing its paths");
    for (Path& p : dev->paths) p.request_close(CloseReason::DeviceRemoval);
    return dev->removal;
}

// Its last path's teardown releases it, and the release wakes us.
void Module::await_device_removal(rtrs_env_waiter* w) {
    rtrs_env_waiter_wait(w);
    rtrs_env_waiter_free(w);
}

// --- the chunk memory budget ---------------------------------------------------

rt::Result<void> Module::reserve_chunk_mem(rt::u64 bytes) {
    Guard g(lock_);
    if (chunk_mem_used_ + bytes > cfg_.chunk_mem_limit) return rt::err(rt::errc::nomem);
    chunk_mem_used_ += bytes;
    return {};
}

rt::Result<void> Module::charge(rt::u64 bytes, const char* what) {
    if (!reserve_chunk_mem(bytes).ok()) {
        Log(kErr, true).put(what).put(" needs ").dec((bytes + 1023) >> 10).put(" KiB; ")
            .dec(chunk_mem_used() >> 20).put(" of the ").dec(cfg_.chunk_mem_limit >> 20)
            .put(" MiB the memory budget allows (max_chunk_mem_mb) are taken");
        return rt::err(rt::errc::nomem);
    }
    const rt::u64 avail = rtrs_env_available_ram();
    const rt::u64 keep = chunk_mem_headroom(rtrs_env_total_ram());
    if (avail < bytes + keep) {
        release_chunk_mem(bytes);
        Log(kErr, true).put(what).put(" needs ").dec((bytes + 1023) >> 10)
            .put(" KiB; the machine has ").dec(avail >> 20).put(" MiB available and keeps ")
            .dec(keep >> 20).put(" MiB (an eighth of its memory) free");
        return rt::err(rt::errc::nomem);
    }
    return {};
}

void Module::release_chunk_mem(rt::u64 bytes) {
    Guard g(lock_);
    if (bytes > chunk_mem_used_) {
        rtrs_env_warn("rtrs core: chunk memory budget released twice");
        chunk_mem_used_ = 0;
        return;
    }
    chunk_mem_used_ -= bytes;
}

rt::u64 Module::chunk_mem_used() {
    Guard g(lock_);
    return chunk_mem_used_;
}

// --- session names -----------------------------------------------------------------

bool Module::claim_name(Session& s, rt::Bytes name) {
    Guard g(lock_);
    for (Session& other : named_)
        if (&other != &s && other.has_name(name)) return false;
    s.set_name_locked(name);
    named_.push_back(s);
    return true;
}

void Module::release_name(Session& s) {
    Guard g(lock_);
    named_.remove(s);
}

// --- admission -------------------------------------------------------------------

Verdict Module::admit_connection(const rtrs_core_addr& client, const ClientCounts& held,
                                 bool first_look) {
    Guard g(lock_);
    return first_look ? admission_.admit_connection(client, rtrs_env_now_ms(), held)
                      : admission_.recheck_connection(client, held);
}

Verdict Module::admit_name(const rtrs_core_addr& client, rt::Bytes name) {
    Guard g(lock_);
    return admission_.admit_name(client, name);
}

namespace {

struct ShownRules {
    char text[kAdmitShowRules + 1];
};

// The rules in effect must show whole in a page (rtrs_core_admission_show).
rt::Result<void> fits_when_shown(const Policy& p, char* msg, rt::usize cap) {
    auto made = rt::make_own<ShownRules>(rt::Gfp::kernel);
    if (!made.ok()) {
        rt::StrBuf(msg, cap).put("no memory for the policy");
        return rt::err(rt::errc::nomem);
    }
    return p.format_within(made.value()->text, msg, cap);
}

}  // namespace

rt::Result<void> Module::set_admission(const char* text, rt::usize len, char* msg,
                                       rt::usize cap) {
    // Made and parsed without the lock; only the swap is under it.
    auto made = rt::make_own<Policy>(rt::Gfp::kernel);
    if (!made.ok()) {
        rt::StrBuf(msg, cap).put("no memory for the policy");
        return rt::err(rt::errc::nomem);
    }
    rt::Own<Policy> p = rt::move(made.value());
    RT_TRY(p->parse(text, len, msg, cap));
    RT_TRY(fits_when_shown(*p, msg, cap));
    const rt::u32 entries = p->entries();
    const bool limited = p->has_limits();
    rt::Own<Policy> old;
    {
        Guard g(lock_);
        old = admission_.replace(rt::move(p));
    }
    if (cap) msg[0] = '\0';  // nothing wrong
    Log l(kInfo);
    l.put("admission policy set: ");
    if (entries) l.put("an allow-list of ").dec(entries).put(entries == 1 ? " entry" : " entries");
    else l.put("every address allowed");
    l.put(limited ? ", with limits" : ", no limits");
    return {};  // the old policy is freed here, without the lock
}

rt::Result<rt::usize> Module::show_admission(char* buf, rt::usize cap) {
    Guard g(lock_);
    rt::StrBuf out(buf, cap);
    admission_.format(out);
    if (out.truncated()) return rt::err(rt::errc::nospc);
    return out.len();
}

rt::u64 Module::admission_refusals(Verdict v) {
    Guard g(lock_);
    return admission_.refusals(v);
}

Verdict Module::still_allowed(const rtrs_core_addr& client, rt::Bytes name) {
    Guard g(lock_);
    return admission_.still_allowed(client, name);
}

// --- servers ---------------------------------------------------------------------

void Module::add_server(Server& s) {
    Guard g(servers_lock_);
    servers_.push_back(s);
}

void Module::remove_server(Server& s) {
    Guard g(servers_lock_);
    servers_.remove(s);
}

// A server leaves the list (remove_server()) before it is freed, so each
// is alive while the list's lock is held.
rt::u32 Module::close_refused() {
    Guard g(servers_lock_);
    rt::u32 n = 0;
    for (Server& s : servers_) n += s.close_refused();
    return n;
}

}  // namespace core
