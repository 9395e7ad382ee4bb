// SPDX-License-Identifier: GPL-2.0
// The threaded kernel environment (thread_env.h).
#include "thread_env.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "core/wire.h"
#include "rt/env.h"

namespace tenv {

namespace {

std::atomic<long> g_allocs{0}, g_locks{0}, g_works{0}, g_waiters{0}, g_devs{0}, g_mrs{0},
    g_bufs{0}, g_chunks{0}, g_cons{0}, g_logs{0};

std::mutex g_rec_mu;  // the records below
std::vector<std::string> g_violations, g_warnings, g_loglines;

void violation(const std::string& what) {
    std::lock_guard<std::mutex> g(g_rec_mu);
    if (g_violations.size() < 100) g_violations.push_back(what);
}

std::uint64_t now_ms() {
    using namespace std::chrono;
    return static_cast<std::uint64_t>(
        duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count());
}

}  // namespace

// --- locks ----------------------------------------------------------------------

}  // namespace tenv

struct rtrs_env_lock {
    rtrs_env_lock_kind kind;
    std::mutex mu;                  // the mutex kinds
    std::atomic<bool> spin{false};  // the spinlock kinds
};

namespace tenv {
namespace {

bool is_spin(rtrs_env_lock_kind k) { return k == RTRS_ENV_LOCK_PATH_IO || k == RTRS_ENV_LOCK_CON_IO; }

thread_local std::vector<rtrs_env_lock*> t_held;

bool holds(rtrs_env_lock* l) {
    return std::find(t_held.begin(), t_held.end(), l) != t_held.end();
}

}  // namespace
}  // namespace tenv

using namespace tenv;

extern "C" rtrs_env_lock* rtrs_env_lock_new(rtrs_env_lock_kind kind) {
    auto* l = new rtrs_env_lock;
    l->kind = kind;
    ++g_locks;
    return l;
}

extern "C" void rtrs_env_lock_free(rtrs_env_lock* l) {
    if (!l) return;
    --g_locks;
    delete l;
}

extern "C" void rtrs_env_lock_acquire(rtrs_env_lock* l) {
    if (holds(l)) violation("a lock taken twice by one thread");
    if (is_spin(l->kind)) {
        for (;;) {
            if (!l->spin.exchange(true, std::memory_order_acquire)) break;
            while (l->spin.load(std::memory_order_relaxed)) __builtin_ia32_pause();
        }
    } else {
        l->mu.lock();
    }
    t_held.push_back(l);
}

extern "C" void rtrs_env_lock_release(rtrs_env_lock* l) {
    auto it = std::find(t_held.begin(), t_held.end(), l);
    if (it == t_held.end()) {
        violation("a lock released that this thread does not hold");
    } else {
        t_held.erase(it);
    }
    if (is_spin(l->kind)) {
        l->spin.store(false, std::memory_order_release);
    } else {
        l->mu.unlock();
    }
}

// --- time -------------------------------------------------------------------------

extern "C" std::uint64_t rtrs_env_now_ms(void) { return now_ms(); }

extern "C" std::uint64_t rtrs_env_now_ns(void) {
    using namespace std::chrono;
    return static_cast<std::uint64_t>(
        duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count());
}

// --- work items: a pool of threads, one run of an item at a time ---------------------

struct rtrs_env_work {
    void* owner;
    unsigned kind;
    bool pending = false;
    bool running = false;
    std::uint64_t due = 0;
};

namespace tenv {
namespace {

std::mutex g_work_mu;
std::condition_variable g_work_cv;   // something to run, or stop
std::condition_variable g_work_done; // a run ended
std::vector<rtrs_env_work*> g_queue; // pending items
bool g_stop = false;
std::vector<std::thread> g_threads;
// The work item this thread runs, and whether its function freed it (as a
// kernel work may free itself: the pool touches it no more then).
thread_local rtrs_env_work* t_current = nullptr;
thread_local bool t_current_freed = false;

// The CM's thread: events due at a time.
struct CmEvent {
    Cm* cm;
    rtrs_core_cm_event ev;
    std::uint64_t due;
};
std::mutex g_cm_mu;
std::condition_variable g_cm_cv;
std::deque<CmEvent> g_cm_events;

void work_thread() {
    std::unique_lock<std::mutex> g(g_work_mu);
    for (;;) {
        if (g_stop) return;
        std::uint64_t now = now_ms(), next = ~0ull;
        rtrs_env_work* run = nullptr;
        for (auto* w : g_queue) {
            if (w->running) continue;  // after its run ends
            if (w->due <= now) {
                if (!run || w->due < run->due) run = w;
            } else {
                next = std::min(next, w->due);
            }
        }
        if (!run) {
            if (next == ~0ull)
                g_work_cv.wait(g);
            else
                g_work_cv.wait_for(g, std::chrono::milliseconds(next - now));
            continue;
        }
        g_queue.erase(std::find(g_queue.begin(), g_queue.end(), run));
        run->pending = false;
        run->running = true;
        g.unlock();
        t_current = run;
        t_current_freed = false;
        rtrs_core_run_work(run->owner, run->kind);
        t_current = nullptr;
        g.lock();
        if (!t_current_freed) run->running = false;
        g_work_done.notify_all();
        g_work_cv.notify_all();
    }
}

}  // namespace
}  // namespace tenv

extern "C" rtrs_env_work* rtrs_env_work_new(void* owner, unsigned int kind) {
    ++g_works;
    return new rtrs_env_work{owner, kind};
}

static void work_queue(rtrs_env_work* w, unsigned delay_ms, bool requeue) {
    std::lock_guard<std::mutex> g(g_work_mu);
    if (w->pending) {
        if (!requeue) return;
        w->due = now_ms() + delay_ms;
    } else {
        w->pending = true;
        w->due = now_ms() + delay_ms;
        g_queue.push_back(w);
    }
    g_work_cv.notify_all();
}

extern "C" void rtrs_env_work_queue(rtrs_env_work* w, unsigned int delay_ms) {
    work_queue(w, delay_ms, false);
}

extern "C" void rtrs_env_work_requeue(rtrs_env_work* w, unsigned int delay_ms) {
    work_queue(w, delay_ms, true);
}

extern "C" void rtrs_env_work_cancel(rtrs_env_work* w) {
    std::lock_guard<std::mutex> g(g_work_mu);
    if (w->pending) {
        g_queue.erase(std::find(g_queue.begin(), g_queue.end(), w));
        w->pending = false;
    }
}

extern "C" void rtrs_env_work_cancel_sync(rtrs_env_work* w) {
    std::unique_lock<std::mutex> g(g_work_mu);
    if (w->pending) {
        g_queue.erase(std::find(g_queue.begin(), g_queue.end(), w));
        w->pending = false;
    }
    g_work_done.wait(g, [w] { return !w->running; });
}

extern "C" void rtrs_env_work_free(rtrs_env_work* w) {
    if (!w) return;
    {
        std::lock_guard<std::mutex> g(g_work_mu);
        if (w == t_current) {
            t_current_freed = true;  // its own function frees it
            if (w->pending) violation("a work item freed while pending");
        } else if (w->pending || w->running) {
            violation("a work item freed while pending or running");
        }
    }
    --g_works;
    delete w;
}

// --- waiters ---------------------------------------------------------------------------

struct rtrs_env_waiter {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
};

extern "C" rtrs_env_waiter* rtrs_env_waiter_new(void) {
    ++g_waiters;
    return new rtrs_env_waiter;
}
extern "C" void rtrs_env_waiter_done(rtrs_env_waiter* w) {
    std::lock_guard<std::mutex> g(w->mu);
    w->done = true;
    w->cv.notify_all();
}
extern "C" void rtrs_env_waiter_wait(rtrs_env_waiter* w) {
    std::unique_lock<std::mutex> g(w->mu);
    w->cv.wait(g, [w] { return w->done; });
}
extern "C" void rtrs_env_waiter_free(rtrs_env_waiter* w) {
    if (!w) return;
    --g_waiters;
    delete w;
}

// --- memory --------------------------------------------------------------------------------

extern "C" void* rtrs_env_alloc(size_t size, unsigned int) {
    void* p = std::calloc(1, size ? size : 1);
    if (p) ++g_allocs;
    return p;
}
extern "C" void rtrs_env_free(void* p) {
    if (!p) return;
    --g_allocs;
    std::free(p);
}

extern "C" void* rtrs_env_chunk_alloc(std::uint32_t size) {
    void* p = std::aligned_alloc(size, size);
    if (!p) return nullptr;
    std::memset(p, 0, size);
    ++g_chunks;
    return p;
}
extern "C" void rtrs_env_chunk_free(void* chunk, std::uint32_t) {
    --g_chunks;
    std::free(chunk);
}
extern "C" std::uint64_t rtrs_env_total_ram(void) { return 8ull << 30; }
extern "C" std::uint64_t rtrs_env_available_ram(void) { return 6ull << 30; }

// --- devices, DMA, registrations ------------------------------------------------------------------

struct rtrs_env_dev {
    void* ib_dev;
};
struct rtrs_env_mr {
    std::uint32_t rkey;
};

namespace tenv {
namespace {
Options g_opts;
std::mutex g_dma_mu;
struct Region {
    void* cpu;
    std::uint32_t len;
};
std::map<std::uint64_t, Region> g_dma;
std::uint64_t g_next_dma = 0x100000000ull;
std::atomic<std::uint32_t> g_next_rkey{0x100};
RdmaEv g_rdma;
LinkEv g_link;
}  // namespace
}  // namespace tenv

extern "C" rtrs_env_dev* rtrs_env_dev_open(void* ib_dev, rtrs_env_dev_attrs* attrs) {
    *attrs = g_opts.dev_attrs;
    ++g_devs;
    return new rtrs_env_dev{ib_dev};
}
extern "C" void rtrs_env_dev_close(rtrs_env_dev* d) {
    --g_devs;
    delete d;
}

static std::uint64_t dma_map(void* cpu, std::uint32_t len) {
    std::lock_guard<std::mutex> g(g_dma_mu);
    std::uint64_t a = g_next_dma;
    g_next_dma += (len + 4095) & ~4095ull;
    g_dma[a] = {cpu, len};
    return a;
}
static void dma_unmap(std::uint64_t a) {
    std::lock_guard<std::mutex> g(g_dma_mu);
    if (!g_dma.erase(a)) violation("an unmap of an address not mapped");
}

extern "C" std::uint64_t rtrs_env_dma_map_chunk(rtrs_env_dev*, void* chunk, std::uint32_t size) {
    return dma_map(chunk, size);
}
extern "C" void rtrs_env_dma_unmap_chunk(rtrs_env_dev*, std::uint64_t dma, std::uint32_t) {
    dma_unmap(dma);
}
extern "C" void rtrs_env_dma_sync_for_cpu(rtrs_env_dev*, std::uint64_t, std::uint32_t) {}
extern "C" void rtrs_env_dma_sync_for_device(rtrs_env_dev*, std::uint64_t, std::uint32_t) {}

extern "C" int rtrs_env_buf_alloc(rtrs_env_dev*, std::uint32_t len, rtrs_env_dma_dir dir,
                                  rtrs_env_buf* buf) {
    buf->cpu = std::calloc(1, len);
    if (!buf->cpu) return -12;
    buf->len = len;
    buf->dir = dir;
    buf->dma = dma_map(buf->cpu, len);
    ++g_bufs;
    return 0;
}
extern "C" void rtrs_env_buf_free(rtrs_env_dev*, rtrs_env_buf* buf) {
    if (!buf->cpu) return;
    dma_unmap(buf->dma);
    std::free(buf->cpu);
    buf->cpu = nullptr;
    --g_bufs;
}
extern "C" void rtrs_env_buf_sync_for_device(rtrs_env_dev*, rtrs_env_buf*) {}
extern "C" void rtrs_env_buf_sync_for_cpu(rtrs_env_dev*, rtrs_env_buf*) {}

extern "C" rtrs_env_mr* rtrs_env_mr_alloc(rtrs_env_dev*, const std::uint64_t* dma, unsigned int n,
                                          std::uint32_t size, rtrs_env_mr_info* info) {
    auto* m = new rtrs_env_mr{g_next_rkey.fetch_add(0x100)};
    info->rkey = m->rkey;
    info->iova = dma[0];
    info->length = std::uint64_t{n} * size;
    ++g_mrs;
    return m;
}
extern "C" void rtrs_env_mr_free(rtrs_env_mr* m) {
    --g_mrs;
    delete m;
}
extern "C" std::uint32_t rtrs_env_mr_next_rkey(rtrs_env_mr* m) {
    m->rkey = (m->rkey & ~0xffu) | ((m->rkey + 1) & 0xffu);
    return m->rkey;
}

// --- connections ------------------------------------------------------------------------------------

namespace tenv {

struct Cm {
    // Held around every call into the core for this id (the connect
    // handler, CM events), and by its destruction: one at a time.
    std::mutex handler;
    bool accepted = false;
    bool rejected = false;
    bool destroyed = false;
    std::vector<std::uint8_t> priv;
    Con* con = nullptr;
};

// One completion the CQ holds.
struct Cqe {
    enum Kind { Send, Recv } kind;
    rtrs_core_cqe* cqe;
    std::uint64_t seq;  // the send queue's position after its post (Send)
};

struct Con {
    Cm* cm;
    rtrs_env_lock* io_lock;
    void* core;
    rtrs_env_con_sizes sizes;
    // The NIC's own: under nic.
    std::mutex nic;
    std::deque<Cqe> cq;
    std::deque<std::pair<rtrs_env_buf*, rtrs_core_cqe*>> recvs;
    std::uint64_t posted = 0;  // send work requests, ever
    std::uint64_t retired = 0; // of them, completed
    bool qp_err = false;       // disconnected: what completes, completes flushed
    bool draining = false;     // from the drain's start: no post may come
    bool qp_destroyed = false; // its QP and CQ
    bool destroyed = false;    // its cm_id
    std::vector<std::vector<std::uint8_t>> msgs;
    std::function<void(std::uint32_t, std::uint32_t)> on_rsp;
    // The CQ's context: one delivery at a time.
    std::mutex cq_ctx;
};

}  // namespace tenv

extern "C" int rtrs_env_cm_accept(rtrs_env_cm* cm, const void* priv, unsigned int len) {
    auto* c = reinterpret_cast<Cm*>(cm);
    c->accepted = true;
    c->priv.assign(static_cast<const std::uint8_t*>(priv), static_cast<const std::uint8_t*>(priv) + len);
    return 0;
}
extern "C" void rtrs_env_cm_reject(rtrs_env_cm* cm, const void* priv, unsigned int len) {
    auto* c = reinterpret_cast<Cm*>(cm);
    c->rejected = true;
    c->priv.assign(static_cast<const std::uint8_t*>(priv), static_cast<const std::uint8_t*>(priv) + len);
}

extern "C" rtrs_env_con* rtrs_env_con_create(rtrs_env_cm* cm, rtrs_env_dev*, const rtrs_env_con_sizes* sizes,
                                             rtrs_env_lock* io_lock, void* core_con) {
    auto* c = new Con;
    c->cm = reinterpret_cast<Cm*>(cm);
    c->io_lock = io_lock;
    c->core = core_con;
    c->sizes = *sizes;
    c->cm->con = c;
    ++g_cons;
    return reinterpret_cast<rtrs_env_con*>(c);
}

static Con* to_con(rtrs_env_con* c) { return reinterpret_cast<Con*>(c); }

static void cm_event_later(Cm* cm, rtrs_core_cm_event ev, int delay_ms) {
    std::lock_guard<std::mutex> g(g_cm_mu);
    g_cm_events.push_back({cm, ev, now_ms() + static_cast<std::uint64_t>(delay_ms)});
    g_cm_cv.notify_all();
}

extern "C" void rtrs_env_con_disconnect(rtrs_env_con* con) {
    Con* c = to_con(con);
    {
        std::lock_guard<std::mutex> g(c->nic);
        c->qp_err = true;
    }
    if (g_opts.disconnect_answer_ms >= 0) cm_event_later(c->cm, RTRS_CORE_CM_DISCONNECTED, g_opts.disconnect_answer_ms);
}

// The CQ's context of c is held: what is in the CQ completes, flushed when
// the queue pair is in error.
static int deliver_locked(Con* c) {
    int n = 0;
    for (;;) {
        Cqe e;
        bool err;
        {
            std::lock_guard<std::mutex> g(c->nic);
            if (c->cq.empty()) return n;
            e = c->cq.front();
            c->cq.pop_front();
            err = c->qp_err;
            if (e.kind == Cqe::Send) c->retired = e.seq;
        }
        ++n;
        if (!err && e.kind == Cqe::Send) {
            rtrs_core_on_send_done(c->core, e.cqe);
        } else {
            rtrs_core_wc wc{};
            wc.ok = 0;
            wc.flushed = 1;
            wc.status = "WR flushed";
            wc.opcode = e.kind == Cqe::Send ? RTRS_CORE_WC_SEND : RTRS_CORE_WC_RECV;
            rtrs_core_on_wc(c->core, e.cqe, &wc);
        }
    }
}

extern "C" void rtrs_env_con_drain(rtrs_env_con* con) {
    Con* c = to_con(con);
    std::lock_guard<std::mutex> ctx(c->cq_ctx);  // waits for a delivery running
    {
        std::lock_guard<std::mutex> g(c->nic);
        c->qp_err = true;
        c->draining = true;
        // The receives posted flush too.
        for (auto& r : c->recvs) c->cq.push_back({Cqe::Recv, r.second, 0});
        c->recvs.clear();
    }
    deliver_locked(c);
}

extern "C" void rtrs_env_con_destroy_qp(rtrs_env_con* con) {
    Con* c = to_con(con);
    std::lock_guard<std::mutex> g(c->nic);
    if (!c->draining) violation("a QP destroyed without its drain");
    if (!c->cq.empty()) violation("a QP destroyed with completions still to come");
    c->qp_destroyed = true;
}

extern "C" void rtrs_env_con_destroy(rtrs_env_con* con) {
    Con* c = to_con(con);
    {
        // Waits for a CM handler of the id still running; none comes after.
        std::lock_guard<std::mutex> h(c->cm->handler);
        c->cm->destroyed = true;
    }
    {
        std::lock_guard<std::mutex> g(c->nic);
        if (!c->qp_destroyed) violation("a cm_id destroyed before its QP");
        c->destroyed = true;
    }
    --g_cons;
    // The Con and Cm stay allocated (a driver may still hold them); tenv
    // frees them at stop().
}

namespace tenv {
namespace {
std::mutex g_objs_mu;
std::vector<std::unique_ptr<Cm>> g_cms;
std::vector<Con*> g_all_cons;
}  // namespace
}  // namespace tenv

// Under c->nic: the checks of every post.
static bool post_checks(Con* c, const char* what, std::uint32_t n) {
    if (c->io_lock && !holds(c->io_lock)) violation(std::string(what) + " without the connection's io lock");
    if (c->draining || c->destroyed) {
        violation(std::string(what) + " on a connection whose drain began");
        return false;
    }
    if (n && c->posted + n - c->retired > c->sizes.max_send_wr - 1)
        violation(std::string(what) + " past the send queue's room");
    return true;
}

static void post_signaled(Con* c, rtrs_core_cqe* cqe, std::uint32_t n, bool signaled) {
    c->posted += n;
    if (signaled) c->cq.push_back({Cqe::Send, cqe, c->posted});
}

extern "C" int rtrs_env_post_send(rtrs_env_con* con, const rtrs_env_wr* wrs, unsigned int n) {
    Con* c = to_con(con);
    std::lock_guard<std::mutex> g(c->nic);
    if (!post_checks(c, "a post", n)) return -5;
    for (unsigned i = 0; i < n; ++i) {
        const rtrs_env_wr& w = wrs[i];
        if (w.op == RTRS_ENV_WR_SEND && w.len) {
            std::lock_guard<std::mutex> d(g_dma_mu);
            auto it = g_dma.upper_bound(w.addr);
            if (it != g_dma.begin()) {
                --it;
                auto* p = static_cast<std::uint8_t*>(it->second.cpu) + (w.addr - it->first);
                c->msgs.emplace_back(p, p + w.len);
            }
        }
        c->posted += 1;
        if (w.signaled) c->cq.push_back({Cqe::Send, w.cqe, c->posted});
    }
    return 0;
}

extern "C" int rtrs_env_post_recv(rtrs_env_con* con, rtrs_env_buf* buf, rtrs_core_cqe* cqe, unsigned int count) {
    Con* c = to_con(con);
    std::lock_guard<std::mutex> g(c->nic);
    if (c->draining || c->destroyed) {
        violation("a receive posted on a connection whose drain began");
        return -5;
    }
    for (unsigned i = 0; i < count; ++i) c->recvs.emplace_back(buf, cqe);
    return 0;
}

extern "C" int rtrs_env_post_resp(rtrs_env_con* con, const rtrs_env_resp* r) {
    Con* c = to_con(con);
    std::function<void(std::uint32_t, std::uint32_t)> fn;
    const std::uint32_t n = 1 + (r->data_len != 0) + (r->mr != nullptr) + (r->send_inv != 0);
    {
        std::lock_guard<std::mutex> g(c->nic);
        if (!post_checks(c, "a response", n)) return -5;
        post_signaled(c, r->cqe, n, r->signaled);
        if (c->qp_err) return 0;  // flushed: the client sees nothing
        fn = c->on_rsp;
    }
    if (fn) {
        const wire::Imm t = wire::imm_decode(r->imm);
        const wire::IoRsp rsp = wire::io_rsp_decode(t.payload);
        fn(rsp.msg_id, rsp.err);
    }
    return 0;
}

extern "C" int rtrs_env_post_local_inv(rtrs_env_con* con, std::uint32_t, rtrs_core_cqe* cqe) {
    Con* c = to_con(con);
    std::lock_guard<std::mutex> g(c->nic);
    if (!post_checks(c, "a local invalidation", 1)) return -5;
    post_signaled(c, cqe, 1, true);
    return 0;
}

extern "C" int rtrs_env_post_recv_imm(rtrs_env_con* con, rtrs_core_cqe* cqe) {
    Con* c = to_con(con);
    std::lock_guard<std::mutex> g(c->nic);
    if (!post_checks(c, "a receive", 0)) return -5;
    c->recvs.emplace_back(nullptr, cqe);
    return 0;
}

// --- the listener ------------------------------------------------------------------------------------

struct rtrs_env_listener {
    void* core_server;
};

namespace tenv {
namespace {
std::shared_mutex g_listen_mu;  // connect handlers (shared) against a stop
void* g_listener = nullptr;
std::atomic<int> g_listeners{0};
}  // namespace
}  // namespace tenv

extern "C" int rtrs_env_listen(void* core_server, std::uint16_t, rtrs_env_listener** out) {
    std::unique_lock<std::shared_mutex> g(g_listen_mu);
    if (!g_listener) g_listener = core_server;
    *out = new rtrs_env_listener{core_server};
    ++g_listeners;
    return 0;
}
extern "C" void rtrs_env_listen_stop(rtrs_env_listener* l) {
    std::unique_lock<std::shared_mutex> g(g_listen_mu);  // waits for handlers running
    if (g_listener == l->core_server) g_listener = nullptr;
    --g_listeners;
    delete l;
}

// --- the ULP ------------------------------------------------------------------------------------------

extern "C" int rtrs_env_ulp_rdma_ev(rtrs_env_ulp*, void*, void* priv, rtrs_srv_op* op, int dir, void* data,
                                    std::uint32_t datalen, const void* usr, std::uint32_t usrlen) {
    return g_rdma ? g_rdma(priv, op, dir, data, datalen, usr, usrlen) : 0;
}
extern "C" int rtrs_env_ulp_link_ev(rtrs_env_ulp*, void* sess, int ev, void* priv) {
    return g_link ? g_link(sess, ev, priv) : 0;
}

// --- sysfs: a registry of paths; a user holds it shared ------------------------------------------------

struct rtrs_env_sysfs_sess {
    std::string name;
};
struct rtrs_env_sysfs_path {
    std::string name;
    void* core_path;
};

namespace tenv {
namespace {
std::shared_mutex g_sysfs_mu;
std::map<std::string, rtrs_env_sysfs_path*> g_sysfs;  // "sess/path"
std::atomic<long> g_sysfs_live{0};
}  // namespace
}  // namespace tenv

extern "C" int rtrs_env_sysfs_sess_add(const char* name, rtrs_env_sysfs_sess** out) {
    *out = new rtrs_env_sysfs_sess{name};
    ++g_sysfs_live;
    return 0;
}
extern "C" void rtrs_env_sysfs_sess_del(rtrs_env_sysfs_sess* s) {
    --g_sysfs_live;
    delete s;
}
extern "C" int rtrs_env_sysfs_path_add(rtrs_env_sysfs_sess* s, const char* name, void* core_path,
                                       rtrs_env_sysfs_path** out) {
    auto* p = new rtrs_env_sysfs_path{s->name + "/" + name, core_path};
    std::unique_lock<std::shared_mutex> g(g_sysfs_mu);
    g_sysfs[p->name] = p;
    *out = p;
    ++g_sysfs_live;
    return 0;
}
extern "C" void rtrs_env_sysfs_path_del(rtrs_env_sysfs_path* p) {
    {
        std::unique_lock<std::shared_mutex> g(g_sysfs_mu);  // waits for its users
        g_sysfs.erase(p->name);
    }
    --g_sysfs_live;
    delete p;
}

// debugfs: absent (the latency is read through sysfs_show()).
extern "C" rtrs_env_debugfs_sess* rtrs_env_debugfs_sess_add(const char*) { return nullptr; }
extern "C" void rtrs_env_debugfs_sess_del(rtrs_env_debugfs_sess*) {}
extern "C" rtrs_env_debugfs_path* rtrs_env_debugfs_path_add(rtrs_env_debugfs_sess*, const char*, void*) {
    return nullptr;
}
extern "C" void rtrs_env_debugfs_path_del(rtrs_env_debugfs_path*) {}

// --- trace events, logs ------------------------------------------------------------------------------

extern "C" void rtrs_env_trace_sess_up(const char*) {}
extern "C" void rtrs_env_trace_sess_down(const char*, int, const char*) {}
extern "C" void rtrs_env_trace_path_up(const char*, const char*) {}
extern "C" void rtrs_env_trace_path_down(const char*, const char*, int, const char*, int) {}
extern "C" void rtrs_env_trace_conn_refused(const char*, int, const char*) {}
extern "C" void rtrs_env_trace_io_error(const char*, const char*, std::uint32_t, int, int) {}
extern "C" void rtrs_env_trace_hb_miss(const char*, const char*, std::uint32_t, std::uint32_t) {}

extern "C" void rtrs_env_log(int, const char* msg) {
    ++g_logs;
    std::lock_guard<std::mutex> g(g_rec_mu);
    if (g_loglines.size() < 1000) g_loglines.emplace_back(msg);
}
extern "C" void rtrs_env_log_ratelimited(int level, const char* msg) { rtrs_env_log(level, msg); }
extern "C" void rtrs_env_warn(const char* what) {
    std::lock_guard<std::mutex> g(g_rec_mu);
    g_warnings.emplace_back(what);
}

// --- the driver's side ----------------------------------------------------------------------------------

namespace tenv {

namespace {

void cm_thread() {
    std::unique_lock<std::mutex> g(g_cm_mu);
    for (;;) {
        if (g_stop) return;
        if (g_cm_events.empty()) {
            g_cm_cv.wait(g);
            continue;
        }
        std::uint64_t now = now_ms();
        auto it = std::min_element(g_cm_events.begin(), g_cm_events.end(),
                                   [](const CmEvent& a, const CmEvent& b) { return a.due < b.due; });
        if (it->due > now) {
            g_cm_cv.wait_for(g, std::chrono::milliseconds(it->due - now));
            continue;
        }
        CmEvent e = *it;
        g_cm_events.erase(it);
        g.unlock();
        {
            std::lock_guard<std::mutex> h(e.cm->handler);
            if (!e.cm->destroyed && e.cm->con) rtrs_core_on_cm_event(e.cm->con->core, e.ev, 0);
        }
        g.lock();
    }
}

}  // namespace

void start(const Options& o) {
    g_opts = o;
    if (!g_opts.dev_attrs.max_qp_wr) {
        std::strcpy(g_opts.dev_attrs.name, "tenv0");
        g_opts.dev_attrs.max_qp_wr = 16384;
        g_opts.dev_attrs.max_cqe = 65536;
        g_opts.dev_attrs.max_fast_reg_page_list_len = 512;
        g_opts.dev_attrs.num_comp_vectors = 2;
    }
    g_stop = false;
    for (int i = 0; i < g_opts.work_threads; ++i) g_threads.emplace_back(work_thread);
    g_threads.emplace_back(cm_thread);
}

void stop() {
    {
        std::lock_guard<std::mutex> g(g_work_mu);
        std::lock_guard<std::mutex> c(g_cm_mu);
        g_stop = true;
        g_work_cv.notify_all();
        g_cm_cv.notify_all();
    }
    for (auto& t : g_threads) t.join();
    g_threads.clear();
    std::lock_guard<std::mutex> g(g_objs_mu);
    for (Con* c : g_all_cons) delete c;
    g_all_cons.clear();
    g_cms.clear();
    g_cm_events.clear();
}

void set_ulp(RdmaEv rdma, LinkEv link) {
    g_rdma = std::move(rdma);
    g_link = std::move(link);
}

int connect(void* core_server, const std::vector<std::uint8_t>& priv, const rtrs_core_addr& client,
            const rtrs_core_addr& server, void* ib_dev, Cm** out) {
    Cm* cm;
    {
        std::lock_guard<std::mutex> g(g_objs_mu);
        g_cms.push_back(std::make_unique<Cm>());
        cm = g_cms.back().get();
    }
    *out = cm;
    std::shared_lock<std::shared_mutex> l(g_listen_mu);
    if (!g_listeners.load()) return -111;
    int ret;
    {
        std::lock_guard<std::mutex> h(cm->handler);
        ret = rtrs_core_on_connect_request(core_server, reinterpret_cast<rtrs_env_cm*>(cm), ib_dev, 1,
                                           &client, &server, priv.data(),
                                           static_cast<std::uint32_t>(priv.size()));
        if (cm->con) {
            std::lock_guard<std::mutex> g(g_objs_mu);
            g_all_cons.push_back(cm->con);
        }
    }
    return ret;
}

bool accepted(const Cm* cm) { return cm->accepted; }
const std::vector<std::uint8_t>& accept_priv(const Cm* cm) { return cm->priv; }
Con* con_of(const Cm* cm) { return cm->accepted ? cm->con : nullptr; }

void established(Cm* cm) {
    std::lock_guard<std::mutex> h(cm->handler);
    if (!cm->destroyed && cm->con) rtrs_core_on_cm_event(cm->con->core, RTRS_CORE_CM_ESTABLISHED, 0);
}

void client_disconnect(Cm* cm) {
    {
        std::lock_guard<std::mutex> h(cm->handler);
        if (cm->destroyed || !cm->con) return;
        std::lock_guard<std::mutex> g(cm->con->nic);
        cm->con->qp_err = true;
    }
    cm_event_later(cm, RTRS_CORE_CM_DISCONNECTED, 0);
}

void* listener() {
    std::shared_lock<std::shared_mutex> g(g_listen_mu);
    return g_listener;
}

bool deliver_msg(Con* c, const void* msg, std::uint32_t len) {
    std::unique_lock<std::mutex> ctx(c->cq_ctx, std::try_to_lock);
    if (!ctx.owns_lock()) {
        violation("two deliveries at once in one CQ's context");
        return false;
    }
    rtrs_core_cqe* cqe;
    {
        std::lock_guard<std::mutex> g(c->nic);
        if (c->draining || c->qp_err || c->recvs.empty() || !c->recvs.front().first) return false;
        rtrs_env_buf* b = c->recvs.front().first;
        cqe = c->recvs.front().second;
        c->recvs.pop_front();
        std::memcpy(b->cpu, msg, std::min<std::uint32_t>(len, b->len));
    }
    rtrs_core_wc wc{};
    wc.ok = 1;
    wc.status = "success";
    wc.opcode = RTRS_CORE_WC_RECV;
    wc.byte_len = len;
    rtrs_core_on_wc(c->core, cqe, &wc);
    return true;
}

bool deliver_imm(Con* c, std::uint32_t imm, const std::function<bool()>& write) {
    std::unique_lock<std::mutex> ctx(c->cq_ctx, std::try_to_lock);
    if (!ctx.owns_lock()) {
        // The drain holds it (or another driver, which is a test's bug).
        return false;
    }
    {
        std::lock_guard<std::mutex> g(c->nic);
        if (c->draining || c->qp_err) return false;
    }
    // (The drain waits for cq_ctx: the chunks outlive this write.)
    if (write && !write()) return false;
    {
        std::lock_guard<std::mutex> g(c->nic);
        if (c->draining || c->qp_err) return false;
        if (c->recvs.empty()) {
            violation("an immediate with no receive posted");
            return false;
        }
        c->recvs.pop_front();
    }
    rtrs_core_on_imm(c->core, imm);
    return true;
}

int poll(Con* c) {
    std::unique_lock<std::mutex> ctx(c->cq_ctx, std::try_to_lock);
    if (!ctx.owns_lock()) return 0;
    return deliver_locked(c);
}

bool gone(Con* c) {
    std::lock_guard<std::mutex> g(c->nic);
    return c->draining || c->destroyed;
}

std::vector<std::vector<std::uint8_t>> take_msgs(Con* c) {
    std::lock_guard<std::mutex> g(c->nic);
    auto out = std::move(c->msgs);
    c->msgs.clear();
    return out;
}

void on_response(Con* c, std::function<void(std::uint32_t, std::uint32_t)> fn) {
    std::lock_guard<std::mutex> g(c->nic);
    c->on_rsp = std::move(fn);
}

std::uint8_t* cpu_of(std::uint64_t addr, std::uint32_t len) {
    std::lock_guard<std::mutex> g(g_dma_mu);
    auto it = g_dma.upper_bound(addr);
    if (it == g_dma.begin()) return nullptr;
    --it;
    if (addr + len > it->first + it->second.len) return nullptr;
    return static_cast<std::uint8_t*>(it->second.cpu) + (addr - it->first);
}

int sysfs_store(const std::string& path, rtrs_core_path_attr attr, const std::string& text) {
    std::shared_lock<std::shared_mutex> g(g_sysfs_mu);
    auto it = g_sysfs.find(path);
    if (it == g_sysfs.end()) return -2;
    return rtrs_core_path_store(it->second->core_path, attr, text.data(), text.size());
}

int sysfs_show(const std::string& path, rtrs_core_path_attr attr, std::string* out) {
    std::shared_lock<std::shared_mutex> g(g_sysfs_mu);
    auto it = g_sysfs.find(path);
    if (it == g_sysfs.end()) return -2;
    char buf[4096];
    int n = rtrs_core_path_show(it->second->core_path, attr, buf, sizeof(buf));
    if (n > 0) out->assign(buf, static_cast<std::size_t>(n));
    return n;
}

std::vector<std::string> sysfs_paths() {
    std::shared_lock<std::shared_mutex> g(g_sysfs_mu);
    std::vector<std::string> out;
    for (auto& p : g_sysfs) out.push_back(p.first);
    return out;
}

std::vector<std::string> violations() {
    std::lock_guard<std::mutex> g(g_rec_mu);
    return g_violations;
}
void clear_records() {
    std::lock_guard<std::mutex> g(g_rec_mu);
    g_violations.clear();
    g_warnings.clear();
    g_loglines.clear();
}

std::vector<std::string> warnings() {
    std::lock_guard<std::mutex> g(g_rec_mu);
    return g_warnings;
}
std::vector<std::string> logs() {
    std::lock_guard<std::mutex> g(g_rec_mu);
    return g_loglines;
}
long logs_count() { return g_logs.load(); }

std::vector<std::string> leftovers() {
    std::vector<std::string> out;
    auto add = [&](const char* what, long n) {
        if (n) out.push_back(std::string(what) + ": " + std::to_string(n));
    };
    add("allocations", g_allocs.load());
    add("locks", g_locks.load());
    add("work items", g_works.load());
    add("waiters", g_waiters.load());
    add("devices", g_devs.load());
    add("registrations", g_mrs.load());
    add("buffers", g_bufs.load());
    add("chunks", g_chunks.load());
    add("connections", g_cons.load());
    add("sysfs objects", g_sysfs_live.load());
    add("listeners", g_listeners.load());
    return out;
}

}  // namespace tenv
