// SPDX-License-Identifier: GPL-2.0
#include "fake_kernel.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/wire.h"
#include "fake_env.h"

namespace fake {

namespace {

Kernel* g_kernel = nullptr;

// Rank of each lock kind in the order they nest (outermost first);
// SESSION_EV is taken with none of ours held.
int rank(rtrs_env_lock_kind k) {
    switch (k) {
    case RTRS_ENV_LOCK_SERVERS: return 0;
    case RTRS_ENV_LOCK_SERVER: return 1;
    case RTRS_ENV_LOCK_MODULE: return 2;
    case RTRS_ENV_LOCK_CON_IO: return 3;
    case RTRS_ENV_LOCK_PATH_IO: return 4;
    case RTRS_ENV_LOCK_SESSION_EV: return 0;
    case RTRS_ENV_LOCK_KINDS: break;
    }
    return 9;
}

const char* kind_name(rtrs_env_lock_kind k) {
    switch (k) {
    case RTRS_ENV_LOCK_MODULE: return "MODULE";
    case RTRS_ENV_LOCK_SERVER: return "SERVER";
    case RTRS_ENV_LOCK_SESSION_EV: return "SESSION_EV";
    case RTRS_ENV_LOCK_PATH_IO: return "PATH_IO";
    case RTRS_ENV_LOCK_CON_IO: return "CON_IO";
    case RTRS_ENV_LOCK_SERVERS: return "SERVERS";
    case RTRS_ENV_LOCK_KINDS: break;
    }
    return "?";
}

// Calls that may sleep must not come under a spinlock.
void might_sleep(const char* what) {
    if (k().holds(RTRS_ENV_LOCK_PATH_IO) || k().holds(RTRS_ENV_LOCK_CON_IO))
        k().violation(std::string(what) + " (may sleep) under an io spinlock");
}

Con* con_of(rtrs_env_con* c) { return reinterpret_cast<Con*>(c); }

// A verb on a device that is unregistered: the driver's memory is gone.
void on_device(const Dev* d, const char* what) {
    if (k().ib_state(d->ib_dev) == Kernel::IbState::Gone)
        k().violation(std::string(what) + " on a device that is unregistered");
}

}  // namespace

Kernel::Kernel() {
    std::strcpy(dev_attrs.name, "fake0");
    dev_attrs.max_qp_wr = 16384;
    dev_attrs.max_cqe = 32767;
    dev_attrs.max_fast_reg_page_list_len = 512;
    dev_attrs.num_comp_vectors = 2;
}

Kernel& k() { return *g_kernel; }

void reset() {
    delete g_kernel;
    g_kernel = new Kernel;
    fake_env::reset();
    fake_env::state().alloc_hook = [] { return !k().fail_here("alloc"); };
}

bool Kernel::fail_here(const char* what) {
    if (on_point) on_point(what);
    preempt(what);
    long n = failure_points++;
    if (should_fail ? should_fail(what) : n == fail_at) {
        failed = true;
        logs.push_back(std::string("fake: failing ") + what);
        return true;
    }
    return false;
}

void Kernel::preempt(const char* where) {
    if (on_preempt && held.empty()) on_preempt(where);
}

Kernel::IbState Kernel::ib_state(void* ib_dev) const {
    auto it = ib_devs.find(ib_dev);
    return it == ib_devs.end() ? IbState::Registered : it->second;
}

int Kernel::live_cms_on(void* ib_dev) const {
    int n = 0;
    for (auto& c : cms)
        if (c->ib_dev == ib_dev && ((c->con && !c->con->destroyed) || c->in_handler)) ++n;
    return n;
}

namespace {

// Waits as rtrs_env_waiter_wait() does, for a condition of the fake's own.
bool wait_for(const std::function<bool()>& done) {
    for (int i = 0; i < 1000 && !done(); ++i) {
        if (k().on_wait_step && k().on_wait_step()) continue;
        if (k().on_wait) k().on_wait();
        k().advance(1000);
    }
    return done();
}

}  // namespace

void Kernel::add_ib_dev(void* ib_dev) {
    told.insert(ib_dev);
    ib_devs.erase(ib_dev);
    if (rtrs_core_on_device_add(ib_dev) != 0) logs.push_back("fake: the core refused a device");
}

void Kernel::remove_ib_dev(void* ib_dev) {
    if (ib_state(ib_dev) != IbState::Registered) {
        violation("a device removed twice");
        return;
    }
    // The IB core removes its clients in the reverse order of their
    // registration: ours (which needs rdma_cm) before rdma_cm's.
    rtrs_core_on_device_remove(ib_dev);
    if (!held.empty()) violation("the device removal returned with a lock held");
    ib_devs[ib_dev] = IbState::Removing;
    // Between the two, rdma_cm still knows the device: its listeners may
    // hand us connection requests for it (on_wait_step lets them come).
    for (int i = 0; i < 3 && on_wait_step; ++i) on_wait_step();
    // rdma_cm: each cm_id on the device hears of it once, then the removal
    // waits until the last one is destroyed.
    std::set<Cm*> told;
    for (bool again = true; again;) {
        again = false;
        for (std::size_t i = 0; i < cms.size(); ++i) {
            Cm* c = cms[i].get();
            if (c->ib_dev != ib_dev || !c->con || c->con->destroyed || told.count(c)) continue;
            told.insert(c);
            cm_event(c->con, RTRS_CORE_CM_DEVICE_REMOVAL);
            again = true;
            break;  // the handler may have added cm_ids
        }
    }
    if (!wait_for([&] { return live_cms_on(ib_dev) == 0; }))
        violation("a device removal waits forever for its cm_ids");
    ib_devs[ib_dev] = IbState::Gone;
    // Unregistered: the driver frees the device now.
    for (auto& d : devs) {
        if (d->ib_dev != ib_dev) continue;
        if (d->live) violation("a device unregistered with our protection domain on it");
        if (d->mrs) violation("a device unregistered with our memory regions on it");
        if (d->mappings) violation("a device unregistered with our chunks mapped on it");
        if (d->bufs) violation("a device unregistered with our buffers on it");
    }
}

void Kernel::violation(const std::string& what) { violations.push_back(what); }

bool Kernel::holds(rtrs_env_lock_kind kind) const {
    for (const Lock* l : held)
        if (l->kind == kind) return true;
    return false;
}

rtrs_core_addr ipv4(int a, int b, int c, int d) {
    rtrs_core_addr r{};
    r.family = RTRS_CORE_AF_INET;
    r.bytes[0] = static_cast<unsigned char>(a);
    r.bytes[1] = static_cast<unsigned char>(b);
    r.bytes[2] = static_cast<unsigned char>(c);
    r.bytes[3] = static_cast<unsigned char>(d);
    return r;
}

// --- driving ----------------------------------------------------------------

Work* Kernel::pending_work(void* owner, unsigned kind) {
    for (auto& w : works)
        if (w->live && w->pending && w->owner == owner && w->kind == kind) return w.get();
    return nullptr;
}

std::vector<Work*> Kernel::due_works() const {
    std::vector<Work*> out;
    for (auto& w : works)
        if (w->live && w->pending && w->due <= now) out.push_back(w.get());
    std::sort(out.begin(), out.end(), [](const Work* a, const Work* b) {
        return a->due < b->due || (a->due == b->due && a->seq < b->seq);
    });
    return out;
}

void Kernel::run_work(Work* next) {
    next->pending = false;
    next->running = true;
    if (!held.empty()) violation("a work item runs with a lock held");
    rtrs_core_run_work(next->owner, next->kind);
    // The work may have freed itself (a path's close work frees the path).
    for (auto& w : works)
        if (w.get() == next) w->running = false;
    if (!held.empty()) violation("a work item returned with a lock held");
}

std::uint64_t Kernel::next_due() const {
    std::uint64_t next = 0;
    for (auto& w : works)
        if (w->live && w->pending && w->due > now && (!next || w->due < next)) next = w->due;
    if (!cm_answers_by_hand)
        for (auto& e : due_cm_events)
            if (e.due > now && (!next || e.due < next)) next = e.due;
    return next;
}

void Kernel::deliver_due_cm_event(std::size_t i) {
    DueCmEvent e = due_cm_events[i];
    due_cm_events.erase(due_cm_events.begin() + static_cast<long>(i));
    cm_event(e.con, e.ev);
}

void Kernel::run() {
    for (int guard = 0; guard < 100000; ++guard) {
        bool delivered = false;
        for (std::size_t i = 0; !cm_answers_by_hand && i < due_cm_events.size(); ++i)
            if (due_cm_events[i].due <= now) {
                DueCmEvent e = due_cm_events[i];
                due_cm_events.erase(due_cm_events.begin() + static_cast<long>(i));
                cm_event(e.con, e.ev);
                delivered = true;
                break;
            }
        if (delivered) continue;
        Work* next = nullptr;
        for (auto& w : works)
            if (w->live && w->pending && w->due <= now &&
                (!next || w->due < next->due || (w->due == next->due && w->seq < next->seq)))
                next = w.get();
        if (!next) return;
        run_work(next);
    }
    violation("work items keep queueing each other");
}

void Kernel::advance(std::uint64_t ms) {
    std::uint64_t end = now + ms;
    for (;;) {
        run();
        std::uint64_t next = end;
        for (auto& w : works)
            if (w->live && w->pending && w->due < next) next = w->due;
        for (auto& e : due_cm_events)
            if (!cm_answers_by_hand && e.due < next) next = e.due;
        now = next;
        if (next == end) break;
    }
    run();
}

Cm* Kernel::connect(void* core_server, const std::vector<std::uint8_t>& priv,
                    const rtrs_core_addr& client, const rtrs_core_addr& server, void* ib_dev,
                    int* ret) {
    auto cm = std::make_unique<Cm>();
    cm->id = next_cm++;
    cm->ib_dev = ib_dev;
    if (ib_state(ib_dev) == IbState::Gone) violation("a connection request on an unregistered device");
    // The IB core told our client of the device before rdma_cm could hand
    // up a request on it.
    if (!told.count(ib_dev) && ib_state(ib_dev) == IbState::Registered) add_ib_dev(ib_dev);
    Cm* c = cm.get();
    cms.push_back(std::move(cm));
    c->in_handler = true;
    int r = rtrs_core_on_connect_request(core_server, reinterpret_cast<rtrs_env_cm*>(c), ib_dev,
                                         1, &client, &server, priv.data(),
                                         static_cast<std::uint32_t>(priv.size()));
    c->in_handler = false;
    if (!held.empty()) violation("the connect handler returned with a lock held");
    if (r != 0 && !c->rejected) violation("a request refused without a reject");
    if (r != 0 && c->con) violation("a refused request's cm_id belongs to a connection");
    if (r == 0 && !c->con) violation("a kept cm_id without a connection");
    if (ret) *ret = r;
    return c;
}

void Kernel::cm_event(Con* c, rtrs_core_cm_event ev, int status) {
    if (c->destroyed) return;  // its id is gone: the CM has no one to tell
    if (ev == RTRS_CORE_CM_ESTABLISHED) c->established = true;
    if (ev == RTRS_CORE_CM_ERROR || ev == RTRS_CORE_CM_DISCONNECTED ||
        ev == RTRS_CORE_CM_DEVICE_REMOVAL)
        c->cm_ended = true;
    c->cm->in_handler = true;
    rtrs_core_on_cm_event(c->core, ev, status);
    c->cm->in_handler = false;
    if (!held.empty()) violation("a CM handler returned with a lock held");
}

namespace {

// (A test may deliver one from inside another call, as a second thread
// would: what counts is that the completion leaves the locks as it found them.)
void deliver(Con* c, rtrs_core_cqe* cqe, const rtrs_core_wc& wc) {
    const std::size_t before = k().held.size();
    const bool was = c->in_cq;
    c->in_cq = true;
    rtrs_core_on_wc(c->core, cqe, &wc);
    c->in_cq = was;
    if (k().held.size() != before) k().violation("a completion returned with a lock held");
}

}  // namespace

bool Kernel::deliver_recv(Con* c, std::uint32_t len) {
    if (c->recvs.empty() || c->drained) return false;
    PostedRecv r = c->recvs.front();
    c->recvs.pop_front();
    rtrs_core_wc wc{};
    wc.ok = 1;
    wc.status = "success";
    wc.opcode = RTRS_CORE_WC_RECV;
    wc.byte_len = len;
    if (!r.buf) {
        wc.ok = 0;
        wc.status = "local length error";
    }
    deliver(c, r.cqe, wc);
    return true;
}

bool Kernel::deliver_imm(Con* c, std::uint32_t imm) {
    if (c->recvs.empty() || c->drained) return false;
    PostedRecv r = c->recvs.front();
    c->recvs.pop_front();
    rtrs_core_wc wc{};
    wc.ok = 1;
    wc.status = "success";
    wc.opcode = RTRS_CORE_WC_RECV_IMM;
    wc.imm = imm;
    deliver(c, r.cqe, wc);
    return true;
}

bool Kernel::complete_send(Con* c, bool ok) {
    for (std::size_t i = 0; i < c->sends.size(); ++i) {
        if (!c->sends[i].wr.signaled) continue;
        rtrs_env_wr wr = c->sends[i].wr;
        c->sends.erase(c->sends.begin(), c->sends.begin() + static_cast<long>(i) + 1);
        rtrs_core_wc wc{};
        wc.ok = ok ? 1 : 0;
        wc.status = ok ? "success" : "remote access error";
        wc.opcode = RTRS_CORE_WC_SEND;
        deliver(c, wr.cqe, wc);
        return true;
    }
    return false;
}

int Kernel::complete_all_sends(Con* c) {
    int n = 0;
    while (complete_send(c)) ++n;
    return n;
}

std::uint8_t* Kernel::cpu_of(std::uint64_t addr, std::uint32_t len) {
    auto it = dma.upper_bound(addr);
    if (it == dma.begin()) return nullptr;
    --it;
    if (addr + len > it->first + it->second.len) return nullptr;
    return static_cast<std::uint8_t*>(it->second.cpu) + (addr - it->first);
}

std::string Kernel::debugfs_latency(const std::string& sess, const std::string& path) {
    for (auto& d : debugfs)
        if (d->live && d->sess && d->sess->name == sess && d->name == path) {
            char buf[4096];
            int n = rtrs_core_path_show(d->core_path, RTRS_CORE_ATTR_LATENCY, buf, sizeof(buf));
            return std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
        }
    return "";
}

std::vector<Trace> Kernel::traces_named(const std::string& name) const {
    std::vector<Trace> out;
    for (auto& t : traces)
        if (t.name == name) out.push_back(t);
    return out;
}

std::vector<std::string> Kernel::leftovers() const {
    std::vector<std::string> out;
    for (auto& l : locks)
        if (l->live) out.push_back(std::string("lock ") + kind_name(l->kind));
    for (auto& w : works)
        if (w->live) out.push_back("work item kind " + std::to_string(w->kind));
    for (auto& w : waiters)
        if (w->live) out.push_back("waiter");
    for (auto& d : devs)
        if (d->live) out.push_back("device (PD)");
    for (auto& m : mrs)
        if (m->live) out.push_back("memory region");
    for (auto& c : cons)
        if (!c->destroyed) out.push_back("connection (QP, CQ, cm_id)");
    for (auto& s : sysfs_sess)
        if (s->live) out.push_back("sysfs session " + s->name);
    for (auto& p : sysfs_paths)
        if (p->live) out.push_back("sysfs path " + p->name);
    for (auto& d : debugfs)
        if (d->live) out.push_back("debugfs folder " + d->name);
    for (auto& c : chunks) out.push_back("chunk of " + std::to_string(c.second) + " bytes");
    for (auto& d : dma)
        out.push_back(std::string(d.second.chunk ? "DMA mapping of a chunk, " : "message buffer, ") +
                      std::to_string(d.second.len) + " bytes");
    if (listening) out.push_back("listener");
    if (fake_env::state().live_allocations)
        out.push_back(std::to_string(fake_env::state().live_allocations) + " allocation(s)");
    return out;
}

}  // namespace fake

using fake::k;

// --- core/env.h -------------------------------------------------------------------

extern "C" {

rtrs_env_lock* rtrs_env_lock_new(rtrs_env_lock_kind kind) {
    if (k().fail_here("lock_new")) return nullptr;
    auto l = std::make_unique<fake::Lock>();
    l->kind = kind;
    auto* p = l.get();
    k().locks.push_back(std::move(l));
    return reinterpret_cast<rtrs_env_lock*>(p);
}

void rtrs_env_lock_free(rtrs_env_lock* lock) {
    auto* l = reinterpret_cast<fake::Lock*>(lock);
    if (l->held) k().violation("a held lock freed");
    l->live = false;
}

void rtrs_env_lock_acquire(rtrs_env_lock* lock) {
    auto* l = reinterpret_cast<fake::Lock*>(lock);
    if (!l->live) k().violation("a freed lock taken");
    if (l->held) {
        k().violation(std::string("lock taken twice (deadlock): ") + fake::kind_name(l->kind));
        return;
    }
    if (l->kind != RTRS_ENV_LOCK_PATH_IO && l->kind != RTRS_ENV_LOCK_CON_IO)
        fake::might_sleep("taking a mutex");
    for (const fake::Lock* h : k().held) {
        bool bad = l->kind == RTRS_ENV_LOCK_SESSION_EV
                       ? true
                       : (h->kind != RTRS_ENV_LOCK_SESSION_EV &&
                          fake::rank(h->kind) >= fake::rank(l->kind));
        if (bad)
            k().violation(std::string("lock order: ") + fake::kind_name(l->kind) + " taken under " +
                          fake::kind_name(h->kind));
    }
    l->held = true;
    k().held.push_back(l);
}

void rtrs_env_lock_release(rtrs_env_lock* lock) {
    auto* l = reinterpret_cast<fake::Lock*>(lock);
    if (!l->held) k().violation("a lock released that is not held");
    l->held = false;
    auto& h = k().held;
    for (auto it = h.begin(); it != h.end(); ++it)
        if (*it == l) {
            h.erase(it);
            break;
        }
    if (k().on_release) k().on_release(l);
    k().preempt("a lock released");
}

std::uint64_t rtrs_env_now_ms(void) { return k().now; }
std::uint64_t rtrs_env_now_ns(void) {
    return k().now * 1000000ull + static_cast<std::uint64_t>(k().ns_skew);
}

rtrs_env_work* rtrs_env_work_new(void* owner, unsigned int kind) {
    if (kind >= 8) k().violation("a work kind of 8 or more (the glue has 8 lockdep classes)");
    if (k().fail_here("work_new")) return nullptr;
    auto w = std::make_unique<fake::Work>();
    w->owner = owner;
    w->kind = kind;
    for (auto& o : k().works)
        if (o->live && o->owner == owner) w->owner_no = o->owner_no;
    if (!w->owner_no) w->owner_no = ++k().work_owners;
    auto* p = w.get();
    k().works.push_back(std::move(w));
    return reinterpret_cast<rtrs_env_work*>(p);
}

void rtrs_env_work_queue(rtrs_env_work* work, unsigned int delay_ms) {
    auto* w = reinterpret_cast<fake::Work*>(work);
    if (!w->live) {
        k().violation("a freed work item queued");
        return;
    }
    if (w->pending) return;
    w->pending = true;
    w->due = k().now + delay_ms;
    w->seq = k().work_seq++;
}

void rtrs_env_work_requeue(rtrs_env_work* work, unsigned int delay_ms) {
    auto* w = reinterpret_cast<fake::Work*>(work);
    if (!w->live) {
        k().violation("a freed work item queued");
        return;
    }
    w->pending = true;
    w->due = k().now + delay_ms;
    w->seq = k().work_seq++;
}

void rtrs_env_work_cancel_sync(rtrs_env_work* work) {
    auto* w = reinterpret_cast<fake::Work*>(work);
    fake::might_sleep("cancelling a work item");
    // In this single thread a work item cannot be running while another
    // cancels it, unless it cancels itself (a deadlock in the kernel).
    if (w->running) k().violation("a work item cancels itself synchronously");
    w->pending = false;
}

void rtrs_env_work_cancel(rtrs_env_work* work) {
    reinterpret_cast<fake::Work*>(work)->pending = false;
}

void rtrs_env_work_free(rtrs_env_work* work) {
    auto* w = reinterpret_cast<fake::Work*>(work);
    if (w->pending) k().violation("a pending work item freed");
    w->live = false;
}

rtrs_env_waiter* rtrs_env_waiter_new(void) {
    if (k().fail_here("waiter_new")) return nullptr;
    auto w = std::make_unique<fake::Waiter>();
    auto* p = w.get();
    k().waiters.push_back(std::move(w));
    return reinterpret_cast<rtrs_env_waiter*>(p);
}

void rtrs_env_waiter_done(rtrs_env_waiter* w) {
    // The woken task may free what the lock is in (a server closing frees
    // itself once its last session is gone): wake it with no lock held.
    if (!k().held.empty()) k().violation("a waiter woken with a lock held");
    reinterpret_cast<fake::Waiter*>(w)->done = true;
}

void rtrs_env_waiter_wait(rtrs_env_waiter* waiter) {
    auto* w = reinterpret_cast<fake::Waiter*>(waiter);
    fake::might_sleep("waiting");
    if (!k().held.empty()) k().violation("waiting with a lock held");
    // What would happen meanwhile in the kernel: the work items run.
    for (int i = 0; i < 1000 && !w->done; ++i) {
        if (k().on_wait_step && k().on_wait_step()) continue;
        if (k().on_wait) k().on_wait();
        k().advance(1000);
    }
    if (!w->done) k().violation("a wait that never ends (deadlock)");
}

void rtrs_env_waiter_free(rtrs_env_waiter* w) { reinterpret_cast<fake::Waiter*>(w)->live = false; }

void* rtrs_env_chunk_alloc(std::uint32_t size) {
    fake::might_sleep("chunk allocation");
    if (k().holds(RTRS_ENV_LOCK_SERVER) || k().holds(RTRS_ENV_LOCK_MODULE))
        k().violation("chunks allocated under a server or module lock");
    if (k().fail_here("chunk_alloc")) return nullptr;
    void* p = std::aligned_alloc(size, size);
    std::memset(p, 0, size);
    k().chunks[p] = size;
    return p;
}

void rtrs_env_chunk_free(void* chunk, std::uint32_t size) {
    auto it = k().chunks.find(chunk);
    if (it == k().chunks.end() || it->second != size) {
        k().violation("a chunk freed that was not allocated so");
        return;
    }
    // The device may still write a page that is mapped for it.
    for (auto& d : k().dma)
        if (d.second.chunk && d.second.cpu == chunk) {
            k().violation("a chunk freed while still mapped for DMA");
            break;
        }
    k().chunks.erase(it);
    std::free(chunk);
}

std::uint64_t rtrs_env_total_ram(void) { return k().total_ram; }
std::uint64_t rtrs_env_available_ram(void) { return k().available_ram; }

rtrs_env_dev* rtrs_env_dev_open(void* ib_dev, rtrs_env_dev_attrs* attrs) {
    fake::might_sleep("opening a device");
    if (k().ib_state(ib_dev) != fake::Kernel::IbState::Registered)
        k().violation("a protection domain allocated on a device our client was told is gone");
    if (k().fail_here("dev_open")) return nullptr;
    auto d = std::make_unique<fake::Dev>();
    d->ib_dev = ib_dev;
    d->attrs = k().dev_attrs;
    *attrs = d->attrs;
    auto* p = d.get();
    k().devs.push_back(std::move(d));
    return reinterpret_cast<rtrs_env_dev*>(p);
}

void rtrs_env_dev_close(rtrs_env_dev* dev) {
    auto* d = reinterpret_cast<fake::Dev*>(dev);
    fake::on_device(d, "a protection domain freed");
    if (d->mappings || d->bufs || d->mrs) k().violation("a PD freed while still in use");
    d->live = false;
}

std::uint64_t rtrs_env_dma_map_chunk(rtrs_env_dev* dev, void* chunk, std::uint32_t size) {
    fake::on_device(reinterpret_cast<fake::Dev*>(dev), "a chunk mapped");
    if (k().fail_here("dma_map")) return 0;
    if (!k().chunks.count(chunk)) k().violation("a chunk mapped that is not allocated");
    std::uint64_t dma = k().next_dma;
    k().next_dma += size;
    k().dma[dma] = {chunk, size, true};
    reinterpret_cast<fake::Dev*>(dev)->mappings++;
    return dma;
}

void rtrs_env_dma_unmap_chunk(rtrs_env_dev* dev, std::uint64_t dma, std::uint32_t size) {
    fake::on_device(reinterpret_cast<fake::Dev*>(dev), "a chunk unmapped");
    auto it = k().dma.find(dma);
    if (it == k().dma.end() || it->second.len != size || !it->second.chunk) {
        k().violation("a DMA address unmapped that was not mapped so");
        return;
    }
    k().dma.erase(it);
    reinterpret_cast<fake::Dev*>(dev)->mappings--;
}

namespace {
void check_sync(std::uint64_t dma, std::uint32_t len) {
    auto it = k().dma.upper_bound(dma);
    if (it == k().dma.begin()) {
        k().violation("a DMA sync outside every mapping");
        return;
    }
    --it;
    if (!it->second.chunk) k().violation("a chunk sync of a message buffer");
    if (dma + len > it->first + it->second.len) k().violation("a DMA sync past the end of its mapping");
}
}  // namespace

void rtrs_env_dma_sync_for_cpu(rtrs_env_dev*, std::uint64_t dma, std::uint32_t len) {
    check_sync(dma, len);
}
void rtrs_env_dma_sync_for_device(rtrs_env_dev*, std::uint64_t dma, std::uint32_t len) {
    check_sync(dma, len);
}

int rtrs_env_buf_alloc(rtrs_env_dev* dev, std::uint32_t len, rtrs_env_dma_dir dir,
                       rtrs_env_buf* buf) {
    fake::might_sleep("a buffer allocation");
    fake::on_device(reinterpret_cast<fake::Dev*>(dev), "a buffer allocated");
    if (k().fail_here("buf_alloc")) return -12;
    buf->cpu = std::calloc(1, len);
    buf->dma = k().next_dma;
    k().next_dma += 4096;
    buf->len = len;
    buf->dir = dir;
    buf->priv = dev;
    k().dma[buf->dma] = {buf->cpu, len, false};
    reinterpret_cast<fake::Dev*>(dev)->bufs++;
    return 0;
}

void rtrs_env_buf_free(rtrs_env_dev* dev, rtrs_env_buf* buf) {
    fake::on_device(reinterpret_cast<fake::Dev*>(dev), "a buffer freed");
    if (buf->priv != dev) k().violation("a buffer freed on another device");
    k().dma.erase(buf->dma);
    std::free(buf->cpu);
    buf->cpu = nullptr;
    reinterpret_cast<fake::Dev*>(dev)->bufs--;
}

void rtrs_env_buf_sync_for_device(rtrs_env_dev*, rtrs_env_buf* buf) {
    if (!buf->cpu) k().violation("a sync of a freed buffer");
}
void rtrs_env_buf_sync_for_cpu(rtrs_env_dev*, rtrs_env_buf* buf) {
    if (!buf->cpu) k().violation("a sync of a freed buffer");
}

rtrs_env_mr* rtrs_env_mr_alloc(rtrs_env_dev* dev, const std::uint64_t* dma, unsigned int n,
                               std::uint32_t size, rtrs_env_mr_info* info) {
    fake::might_sleep("a memory region allocation");
    fake::on_device(reinterpret_cast<fake::Dev*>(dev), "a memory region allocated");
    if (k().fail_here("mr_alloc")) return nullptr;
    for (unsigned i = 0; i < n; ++i) {
        auto it = k().dma.find(dma[i]);
        if (it == k().dma.end() || it->second.len != size || !it->second.chunk)
            k().violation("a memory region over an address that is not a mapped chunk");
    }
    auto m = std::make_unique<fake::Mr>();
    m->dma.assign(dma, dma + n);
    m->dev = reinterpret_cast<fake::Dev*>(dev);
    m->rkey = k().next_rkey;
    k().next_rkey += 0x100;
    info->rkey = m->rkey;
    info->iova = dma[0];
    info->length = std::uint64_t{n} * size;
    m->dev->mrs++;
    auto* p = m.get();
    k().mrs.push_back(std::move(m));
    return reinterpret_cast<rtrs_env_mr*>(p);
}

void rtrs_env_mr_free(rtrs_env_mr* mr) {
    auto* m = reinterpret_cast<fake::Mr*>(mr);
    fake::on_device(m->dev, "a memory region freed");
    m->live = false;
    m->dev->mrs--;
}

std::uint32_t rtrs_env_mr_next_rkey(rtrs_env_mr* mr) {
    auto* m = reinterpret_cast<fake::Mr*>(mr);
    m->rkey = (m->rkey & ~0xffu) | ((m->rkey + 1) & 0xffu);
    return m->rkey;
}

int rtrs_env_cm_accept(rtrs_env_cm* cm, const void* priv, unsigned int len) {
    auto* c = reinterpret_cast<fake::Cm*>(cm);
    if (!c->in_handler) k().violation("accept outside the CM handler");
    if (k().fail_here("cm_accept")) return -22;
    c->accepted = true;
    c->priv.assign(static_cast<const std::uint8_t*>(priv), static_cast<const std::uint8_t*>(priv) + len);
    return 0;
}

void rtrs_env_cm_reject(rtrs_env_cm* cm, const void* priv, unsigned int len) {
    auto* c = reinterpret_cast<fake::Cm*>(cm);
    if (!c->in_handler) k().violation("reject outside the CM handler");
    c->rejected = true;
    c->priv.assign(static_cast<const std::uint8_t*>(priv), static_cast<const std::uint8_t*>(priv) + len);
    auto r = wire::parse_conn_rsp(rt::Bytes(c->priv.data(), c->priv.size()));
    c->reject_errno = r.ok() ? r.value().err : -1;
}

rtrs_env_con* rtrs_env_con_create(rtrs_env_cm* cm, rtrs_env_dev* dev,
                                  const rtrs_env_con_sizes* sizes, rtrs_env_lock* lock, void* core_con) {
    fake::might_sleep("creating a QP");
    fake::on_device(reinterpret_cast<fake::Dev*>(dev), "a QP created");
    if (k().fail_here("con_create")) return nullptr;
    // The glue creates exactly these sizes: the device must hold them.
    const rtrs_env_dev_attrs& a = reinterpret_cast<fake::Dev*>(dev)->attrs;
    if (sizes->max_send_wr > a.max_qp_wr || sizes->max_recv_wr > a.max_qp_wr)
        k().violation("a QP larger than the device's max_qp_wr");
    if (sizes->cq_size > a.max_cqe) k().violation("a CQ larger than the device's max_cqe");
    if (sizes->cq_size < sizes->max_send_wr + sizes->max_recv_wr)
        k().violation("a CQ smaller than its QP's two queues");
    if (sizes->max_send_wr < 2 || sizes->max_recv_wr < 2)
        k().violation("a queue without room for the drain's work request");
    auto* c = reinterpret_cast<fake::Cm*>(cm);
    auto con = std::make_unique<fake::Con>();
    con->cm = c;
    con->dev = reinterpret_cast<fake::Dev*>(dev);
    con->sizes = *sizes;
    con->core = core_con;
    con->lock = reinterpret_cast<fake::Lock*>(lock);
    if (!con->lock || con->lock->kind != RTRS_ENV_LOCK_CON_IO)
        k().violation("a connection made without its own CON_IO lock");
    auto* p = con.get();
    c->con = p;
    k().cons.push_back(std::move(con));
    return reinterpret_cast<rtrs_env_con*>(p);
}

void rtrs_env_con_disconnect(rtrs_env_con* con) {
    auto* c = fake::con_of(con);
    c->disconnected = true;
    // The client's DREP, later, from another context.
    if (c->established && !c->cm_ended && k().disconnect_answer_ms >= 0)
        k().due_cm_events.push_back(
            {c, RTRS_CORE_CM_DISCONNECTED, k().now + static_cast<std::uint64_t>(k().disconnect_answer_ms)});
}

void rtrs_env_con_drain(rtrs_env_con* con) {
    auto* c = fake::con_of(con);
    fake::might_sleep("draining a QP");
    if (!k().held.empty()) k().violation("a drain with a lock held");
    c->drained = true;
    // Every posted request completes, flushed: sends, then receives.
    while (!c->sends.empty()) {
        rtrs_env_wr wr = c->sends.front().wr;
        c->sends.pop_front();
        rtrs_core_wc wc{};
        wc.ok = 0;
        wc.flushed = 1;
        wc.status = "WR flushed";
        wc.opcode = RTRS_CORE_WC_SEND;
        fake::deliver(c, wr.cqe, wc);
    }
    while (!c->recvs.empty()) {
        fake::PostedRecv r = c->recvs.front();
        c->recvs.pop_front();
        rtrs_core_wc wc{};
        wc.ok = 0;
        wc.flushed = 1;
        wc.status = "WR flushed";
        wc.opcode = RTRS_CORE_WC_RECV;
        fake::deliver(c, r.cqe, wc);
    }
}

void rtrs_env_con_destroy_qp(rtrs_env_con* con) {
    auto* c = fake::con_of(con);
    fake::might_sleep("destroying a QP");
    fake::on_device(c->dev, "a QP destroyed");
    if (!c->drained) k().violation("a QP destroyed without a drain");
    if (c->qp_destroyed) k().violation("a QP destroyed twice");
    c->qp_destroyed = true;
}

void rtrs_env_con_destroy(rtrs_env_con* con) {
    auto* c = fake::con_of(con);
    fake::might_sleep("destroying a cm_id");
    if (c->cm->in_handler) k().violation("a cm_id destroyed inside its own CM handler");
    if (!c->qp_destroyed) k().violation("a cm_id destroyed before its QP");
    if (k().holds(RTRS_ENV_LOCK_SERVER)) k().violation("a cm_id destroyed under the server lock");
    c->destroyed = true;
    // Once the last cm_id on a device is gone, a removal of the device in
    // rdma_cm's hands lets the driver free it: what we have on it must be
    // gone before (our PD, registrations, mappings, buffers).
    if (k().live_cms_on(c->cm->ib_dev) == 0)
        for (auto& d : k().devs)
            if (d->ib_dev == c->cm->ib_dev && (d->live || d->mrs || d->mappings || d->bufs)) {
                k().violation("the last cm_id on a device destroyed before what we have on the device");
                break;
            }
}

int rtrs_env_post_send(rtrs_env_con* con, const rtrs_env_wr* wrs, unsigned int n) {
    auto* c = fake::con_of(con);
    if (!c->lock || !c->lock->held) k().violation("a post without the connection's lock");
    if (c->drained) k().violation("a post on a drained connection");
    if (c->destroyed || c->qp_destroyed) k().violation("a post on a destroyed connection");
    if (n == 0 || n > RTRS_ENV_MAX_CHAIN) k().violation("a post of a bad chain length");
    // ib_drain_qp() needs one free work request on each queue.
    if (c->sends.size() + n > c->sizes.max_send_wr - 1)
        k().violation("the send queue overflows into the drain's reserve");
    if (k().fail_here("post_send")) return -12;
    for (unsigned i = 0; i < n; ++i) {
        if (!wrs[i].cqe) k().violation("a work request with no completion entry");
        c->sends.push_back({wrs[i]});
        c->total_sends++;
    }
    if (k().on_post)
        for (unsigned i = 0; i < n; ++i) k().on_post(c, wrs[i]);
    return 0;
}

// The I/O path's posts: recorded as the work requests they stand for, as
// rtrs_env_post_send() records them (the glue posts exactly these).
int rtrs_env_post_resp(rtrs_env_con* con, const rtrs_env_resp* r) {
    rtrs_env_wr wrs[4] = {};
    unsigned n = 0;
    for (rtrs_env_wr& w : wrs) w.cqe = r->cqe;
    if (r->data_len) {
        rtrs_env_wr& w = wrs[n++];
        w.op = RTRS_ENV_WR_RDMA_WRITE;
        w.addr = r->data_addr;
        w.len = r->data_len;
        w.remote_addr = r->remote_addr;
        w.rkey = r->rkey;
    }
    if (r->mr) {
        // The region takes the key's tag (its low byte), as the glue's
        // ib_update_fast_reg_key() makes it.
        auto* fm = reinterpret_cast<fake::Mr*>(r->mr);
        if (!fm->live) k().violation("a registration of a freed region");
        fm->rkey = (fm->rkey & ~0xffu) | (r->mr_key & 0xffu);
        rtrs_env_wr& w = wrs[n++];
        w.op = RTRS_ENV_WR_REG_MR;
        w.mr = r->mr;
        w.mr_key = r->mr_key;
    }
    if (r->send_inv) {
        rtrs_env_wr& w = wrs[n++];
        w.op = RTRS_ENV_WR_SEND_INV;
        w.inv_rkey = r->inv_rkey;
    }
    rtrs_env_wr& m = wrs[n++];
    m.imm = r->imm;
    m.signaled = r->signaled;
    if (r->msg_len) {
        m.op = RTRS_ENV_WR_SEND_IMM;
        m.addr = r->msg_addr;
        m.len = r->msg_len;
    } else {
        m.op = RTRS_ENV_WR_RDMA_WRITE_IMM;
    }
    return rtrs_env_post_send(con, wrs, n);
}

int rtrs_env_post_local_inv(rtrs_env_con* con, std::uint32_t rkey, rtrs_core_cqe* cqe) {
    rtrs_env_wr w{};
    w.op = RTRS_ENV_WR_LOCAL_INV;
    w.inv_rkey = rkey;
    w.signaled = 1;
    w.cqe = cqe;
    return rtrs_env_post_send(con, &w, 1);
}

int rtrs_env_post_recv_imm(rtrs_env_con* con, rtrs_core_cqe* cqe) {
    if (!fake::con_of(con)->lock || !fake::con_of(con)->lock->held)
        k().violation("a receive for an immediate without the connection's lock");
    return rtrs_env_post_recv(con, nullptr, cqe, 1);
}

int rtrs_env_post_recv(rtrs_env_con* con, rtrs_env_buf* buf, rtrs_core_cqe* cqe, unsigned int count) {
    auto* c = fake::con_of(con);
    if (c->drained) k().violation("a receive posted on a drained connection");
    if (c->recvs.size() + count > c->sizes.max_recv_wr - 1)
        k().violation("the receive queue overflows into the drain's reserve");
    if (k().fail_here("post_recv")) return -12;
    for (unsigned i = 0; i < count; ++i) c->recvs.push_back({buf, cqe});
    return 0;
}

int rtrs_env_listen(void* core_server, std::uint16_t, rtrs_env_listener** out) {
    // The IP listener first: it listens (requests may come) before the
    // IB one is made, and the IB one can fail (its service id taken).
    if (k().fail_here("listen")) return -98;
    k().listeners.push_back(core_server);
    k().listening = true;
    k().preempt("the IP listener listens");
    if (k().fail_here("listen_ib")) {
        // Destroying the IP listener waits for its handlers still running.
        auto& v = k().listeners;
        v.erase(std::find(v.begin(), v.end(), core_server));
        k().listening = !v.empty();
        return -98;
    }
    if (!k().listener_server) k().listener_server = core_server;
    *out = reinterpret_cast<rtrs_env_listener*>(core_server);
    return 0;
}

void rtrs_env_listen_stop(rtrs_env_listener* l) {
    fake::might_sleep("stopping the listener");
    auto& v = k().listeners;
    for (auto it = v.begin(); it != v.end(); ++it)
        if (*it == static_cast<void*>(l)) {
            v.erase(it);
            break;
        }
    k().listening = !v.empty();
}

int rtrs_env_ulp_rdma_ev(rtrs_env_ulp*, void* sess, void* priv, rtrs_srv_op* op, int dir,
                         void* data, std::uint32_t datalen, const void* usr,
                         std::uint32_t usrlen) {
    if (!k().held.empty()) k().violation("the ULP called with a lock held");
    fake::Event e;
    e.kind = fake::Event::RdmaEv;
    e.op = op;
    e.sess = sess;
    e.dir = dir;
    e.datalen = datalen;
    e.usrlen = usrlen;
    e.usr.assign(static_cast<const std::uint8_t*>(usr), static_cast<const std::uint8_t*>(usr) + usrlen);
    k().events.push_back(e);
    return k().ulp.rdma_ev ? k().ulp.rdma_ev(priv, op, data, datalen, usr, usrlen) : 0;
}

int rtrs_env_ulp_link_ev(rtrs_env_ulp*, void* sess, int ev, void* priv) {
    for (const fake::Lock* l : k().held)
        if (l->kind != RTRS_ENV_LOCK_SESSION_EV) k().violation("the ULP's link event under a lock of ours");
    fake::Event e;
    e.kind = fake::Event::LinkEv;
    e.sess = sess;
    e.ev = ev;
    k().events.push_back(e);
    return k().ulp.link_ev ? k().ulp.link_ev(sess, ev, priv) : 0;
}

int rtrs_env_sysfs_sess_add(const char* name, rtrs_env_sysfs_sess** out) {
    fake::might_sleep("adding a device");
    if (k().fail_here("sysfs_sess_add")) return -12;
    for (auto& s : k().sysfs_sess)
        if (s->live && s->name == name) k().violation(std::string("two sysfs sessions named ") + name);
    auto s = std::make_unique<fake::SysfsSess>();
    s->name = name;
    auto* p = s.get();
    k().sysfs_sess.push_back(std::move(s));
    *out = reinterpret_cast<rtrs_env_sysfs_sess*>(p);
    return 0;
}

void rtrs_env_sysfs_sess_del(rtrs_env_sysfs_sess* sess) {
    auto* s = reinterpret_cast<fake::SysfsSess*>(sess);
    if (!s->live) k().violation("a sysfs session deleted twice");
    if (s->paths) k().violation("a sysfs session deleted with paths in it");
    s->live = false;
}

int rtrs_env_sysfs_path_add(rtrs_env_sysfs_sess* sess, const char* name, void* core_path,
                            rtrs_env_sysfs_path** out) {
    fake::might_sleep("adding a kobject");
    auto* s = reinterpret_cast<fake::SysfsSess*>(sess);
    if (!s->live) k().violation("a path added to a deleted sysfs session");
    if (k().fail_here("sysfs_path_add")) return -12;
    for (auto& p : k().sysfs_paths)
        if (p->live && p->sess == s && p->name == name)
            k().violation(std::string("two sysfs paths named ") + name);
    auto p = std::make_unique<fake::SysfsPath>();
    p->sess = s;
    p->name = name;
    p->core_path = core_path;
    s->paths++;
    auto* r = p.get();
    k().sysfs_paths.push_back(std::move(p));
    *out = reinterpret_cast<rtrs_env_sysfs_path*>(r);
    return 0;
}

void rtrs_env_sysfs_path_del(rtrs_env_sysfs_path* path) {
    auto* p = reinterpret_cast<fake::SysfsPath*>(path);
    if (!p->live) k().violation("a sysfs path deleted twice");
    p->live = false;
    p->sess->paths--;
}

// As the kernel's printk_ratelimit(): shared with everything else that
// logs ratelimited, so a burst of any source hides the lines that follow it.
void rtrs_env_log_ratelimited(int level, const char* msg) {
    auto& rl = k().printk_rl;
    if (rl.printed == 0 || k().now - rl.begin_ms >= 5000) {
        rl.begin_ms = k().now;
        rl.printed = 0;
    }
    if (rl.printed >= 10) {
        ++rl.missed;
        return;
    }
    ++rl.printed;
    rtrs_env_log(level, msg);
}

// debugfs: optional (NULL when absent), removed before its path goes, as sysfs.
rtrs_env_debugfs_sess* rtrs_env_debugfs_sess_add(const char* name) {
    fake::might_sleep("creating a debugfs folder");
    if (k().debugfs_absent) return nullptr;
    for (auto& d : k().debugfs)
        if (d->live && !d->sess && d->name == name)
            k().violation(std::string("two debugfs sessions named ") + name);
    auto d = std::make_unique<fake::Debugfs>();
    d->name = name;
    auto* p = d.get();
    k().debugfs.push_back(std::move(d));
    return reinterpret_cast<rtrs_env_debugfs_sess*>(p);
}

void rtrs_env_debugfs_sess_del(rtrs_env_debugfs_sess* sess) {
    if (!sess) return;
    fake::might_sleep("removing a debugfs folder");
    auto* d = reinterpret_cast<fake::Debugfs*>(sess);
    if (!d->live) k().violation("a debugfs session removed twice");
    if (d->paths) k().violation("a debugfs session removed before its paths");
    d->live = false;
}

rtrs_env_debugfs_path* rtrs_env_debugfs_path_add(rtrs_env_debugfs_sess* sess, const char* name,
                                                 void* core_path) {
    fake::might_sleep("creating a debugfs file");
    if (!sess || k().debugfs_absent) return nullptr;
    auto* s = reinterpret_cast<fake::Debugfs*>(sess);
    if (!s->live) k().violation("a debugfs path added to a removed session");
    for (auto& d : k().debugfs)
        if (d->live && d->sess == s && d->name == name)
            k().violation(std::string("two debugfs paths named ") + name);
    auto d = std::make_unique<fake::Debugfs>();
    d->name = name;
    d->sess = s;
    d->core_path = core_path;
    s->paths++;
    auto* p = d.get();
    k().debugfs.push_back(std::move(d));
    return reinterpret_cast<rtrs_env_debugfs_path*>(p);
}

void rtrs_env_debugfs_path_del(rtrs_env_debugfs_path* path) {
    if (!path) return;
    fake::might_sleep("removing a debugfs file");
    auto* d = reinterpret_cast<fake::Debugfs*>(path);
    if (!d->live) k().violation("a debugfs path removed twice");
    d->live = false;
    d->sess->paths--;
}

namespace {
fake::Trace& trace(const char* name) {
    k().traces.push_back({});
    k().traces.back().name = name;
    return k().traces.back();
}
}  // namespace

void rtrs_env_trace_sess_up(const char* sess) { trace("sess_up").sess = sess; }
void rtrs_env_trace_sess_down(const char* sess, int reason, const char* why) {
    auto& t = trace("sess_down");
    t.sess = sess;
    t.reason = reason;
    t.why = why;
}
void rtrs_env_trace_path_up(const char* sess, const char* path) {
    auto& t = trace("path_up");
    t.sess = sess;
    t.path = path;
}
void rtrs_env_trace_path_down(const char* sess, const char* path, int reason, const char* why,
                              int was_up) {
    auto& t = trace("path_down");
    t.sess = sess;
    t.path = path;
    t.reason = reason;
    t.why = why;
    t.was_up = was_up;
}
void rtrs_env_trace_conn_refused(const char* peer, int err, const char* why) {
    auto& t = trace("conn_refused");
    t.path = peer;
    t.err = err;
    t.why = why;
}
void rtrs_env_trace_io_error(const char* sess, const char* path, std::uint32_t chunk, int err,
                             int is_read) {
    auto& t = trace("io_error");
    t.sess = sess;
    t.path = path;
    t.chunk = chunk;
    t.err = err;
    t.is_read = is_read;
}
void rtrs_env_trace_hb_miss(const char* sess, const char* path, std::uint32_t missed,
                            std::uint32_t max) {
    auto& t = trace("hb_miss");
    t.sess = sess;
    t.path = path;
    t.missed = missed;
    t.max = max;
}

}  // extern "C"
