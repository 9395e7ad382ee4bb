// SPDX-License-Identifier: GPL-2.0
// The core under threads, for ThreadSanitizer (unit.tsan-stress, run.sh):
// two sessions of one path each, every I/O connection completing requests
// on a thread of its own (its CQ's context, a few requests in flight),
// the ULP answering from a pool of other threads, while the main thread
// ends it all one way or another: a path's sysfs disconnect, a client's
// disconnect of one connection, the server's close, the device's removal,
// each with I/O going on. Each round checks, once the server is closed and
// the core gone:
//   - every request the ULP got was answered (the ULP answers each), and
//     every request a connection's driver sent got its response, unless
//     its connection was drained under it;
//   - the environment saw no violation (a post after its connection's drain
//     began, a post without the connection's lock, a send queue overrun,
//     an immediate with no receive, two completions of one CQ at once)
//     and the core warned of nothing;
//   - nothing is left (allocations, locks, works, connections, ...).
// ThreadSanitizer fails the run by itself on a data race (halt_on_error).
//
//   rtrs_tsan_stress [--rounds N] [--ms MS]
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client.h"
#include "core/rtrs_core.h"
#include "thread_env.h"

namespace {

// The ULP: a queue of requests, answered by a pool.
std::mutex g_ulp_mu;
std::condition_variable g_ulp_cv;
std::deque<rtrs_srv_op*> g_ulp_q;
bool g_ulp_stop = false;
std::atomic<long> g_got{0}, g_answered{0};

void ulp_thread(int t) {
    unsigned n = static_cast<unsigned>(t);
    for (;;) {
        rtrs_srv_op* op;
        {
            std::unique_lock<std::mutex> g(g_ulp_mu);
            g_ulp_cv.wait(g, [] { return g_ulp_stop || !g_ulp_q.empty(); });
            if (g_ulp_q.empty()) return;
            op = g_ulp_q.front();
            g_ulp_q.pop_front();
        }
        // One answer in 16 an error, as a failed block device's would be.
        rtrs_core_answer(op, ++n % 16 == 0 ? -5 : 0);
        ++g_answered;
    }
}

struct Driver {
    tclient::Path* p;
    std::uint16_t cid;
    std::uint32_t first, step;
    long sent = 0, answered = 0, lost = 0;
    bool gone = false;
};

std::atomic<bool> g_stop_io{false};

// A connection's completions and requests, up to 4 in flight on its own
// chunks, until its connection is drained (or the round stops it).
void drive(Driver* d) {
    tclient::Path& p = *d->p;
    std::vector<std::uint32_t> mine;
    for (std::uint32_t id = d->first; id < p.queue_depth && mine.size() < 4; id += d->step) mine.push_back(id);
    std::vector<bool> busy(mine.size(), false);
    tenv::Con* c = p.con(d->cid);
    bool read = false;
    for (;;) {
        tenv::poll(c);
        bool any_busy = false;
        for (std::size_t i = 0; i < mine.size(); ++i) {
            std::uint32_t id = mine[i];
            if (busy[i] && p.done[id].load(std::memory_order_acquire)) {
                busy[i] = false;
                ++d->answered;
            }
            if (!busy[i] && !g_stop_io.load(std::memory_order_relaxed)) {
                if (tclient::request(p, d->cid, id, read = !read)) {
                    busy[i] = true;
                    ++d->sent;
                }
            }
            any_busy = any_busy || busy[i];
        }
        if (tenv::gone(c)) {
            d->gone = true;
            for (std::size_t i = 0; i < mine.size(); ++i)
                if (busy[i]) {
                    if (p.done[mine[i]].load(std::memory_order_acquire))
                        ++d->answered;
                    else
                        ++d->lost;
                }
            return;
        }
        if (g_stop_io.load(std::memory_order_relaxed) && !any_busy) return;
        std::this_thread::yield();
    }
}

enum class Ending { SysfsDisconnect, ClientDisconnect, ServerClose, DeviceRemoval, Count };
const char* name(Ending e) {
    switch (e) {
    case Ending::SysfsDisconnect: return "sysfs disconnect";
    case Ending::ClientDisconnect: return "client disconnect";
    case Ending::ServerClose: return "server close";
    case Ending::DeviceRemoval: return "device removal";
    case Ending::Count: break;
    }
    return "?";
}

// One round; false (with what went wrong on stderr) on a failure.
bool round(int r, int ms) {
    const Ending how = static_cast<Ending>(r % static_cast<int>(Ending::Count));
    bool ok = true;
    auto fail = [&](const std::string& what) {
        std::fprintf(stderr, "round %d (%s): %s\n", r, name(how), what.c_str());
        ok = false;
    };
    tenv::clear_records();
    g_ulp_stop = false;
    g_stop_io = false;
    g_got = 0;
    g_answered = 0;
    std::vector<std::thread> ulp;
    for (int t = 0; t < 3; ++t) ulp.emplace_back(ulp_thread, t);

    rtrs_core_config cfg{};
    cfg.always_invalidate = r % 2 == 0;
    cfg.max_chunk_size = 16384;
    cfg.sess_queue_depth = 32;
    cfg.page_size = 4096;
    cfg.signal_interval = 4;  // small: signaled completions often, pending lists sometimes
    if (int err = rtrs_core_init(&cfg, nullptr)) {
        fail("rtrs_core_init: " + std::to_string(err));
        return false;
    }
    rtrs_srv_ctx* srv = nullptr;
    if (int err = rtrs_core_server_open(reinterpret_cast<rtrs_env_ulp*>(std::uintptr_t{1}), 1234, &srv)) {
        fail("rtrs_core_server_open: " + std::to_string(err));
        return false;
    }
    void* dev = reinterpret_cast<void*>(std::uintptr_t{0x1000});
    if (int err = rtrs_core_on_device_add(dev)) fail("rtrs_core_on_device_add: " + std::to_string(err));
    std::vector<tclient::Path> paths;
    paths.push_back(tclient::make(1 + 2 * r, 3, dev));
    paths.push_back(tclient::make(2 + 2 * r, 3, dev));
    std::vector<Driver> drivers;
    for (std::size_t i = 0; i < paths.size(); ++i) {
        std::string why;
        if (!tclient::up(paths[i], "stress" + std::to_string(i), &why)) fail("path " + std::to_string(i) + ": " + why);
    }
    if (ok)
        for (auto& p : paths)
            for (std::uint16_t cid = 1; cid < p.cid_num; ++cid)
                drivers.push_back(Driver{&p, cid, static_cast<std::uint32_t>(cid - 1), 2});
    std::vector<std::thread> ts;
    for (auto& d : drivers) ts.emplace_back(drive, &d);
    // Readers of the files while it runs (sysfs users hold their path).
    std::atomic<bool> stop_reader{false};
    std::thread reader([&] {
        while (!stop_reader.load()) {
            for (auto& path : tenv::sysfs_paths()) {
                std::string out;
                tenv::sysfs_show(path, RTRS_CORE_ATTR_STATS_RDMA, &out);
                tenv::sysfs_show(path, RTRS_CORE_ATTR_LATENCY, &out);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    });

    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    switch (how) {
    case Ending::SysfsDisconnect: {
        auto names = tenv::sysfs_paths();
        if (names.empty()) fail("no path in sysfs");
        for (auto& n : names) tenv::sysfs_store(n, RTRS_CORE_ATTR_DISCONNECT, "1");
        break;
    }
    case Ending::ClientDisconnect:
        tenv::client_disconnect(paths[0].cms[1]);
        tenv::client_disconnect(paths[1].cms[2]);
        break;
    case Ending::ServerClose:
        break;  // below
    case Ending::DeviceRemoval:
        rtrs_core_on_device_remove(dev);
        break;
    case Ending::Count:
        break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(ms / 2));
    rtrs_core_server_close(srv);
    // Everything is closed: each driver's connection was drained.
    for (auto& t : ts) t.join();
    stop_reader = true;
    reader.join();
    {
        std::lock_guard<std::mutex> g(g_ulp_mu);
        g_ulp_stop = true;
        g_ulp_cv.notify_all();
    }
    for (auto& t : ulp) t.join();
    rtrs_core_exit();

    long sent = 0, answered = 0, lost = 0;
    for (auto& d : drivers) {
        sent += d.sent;
        answered += d.answered;
        lost += d.lost;
        if (!d.gone) fail("a driver's connection was not drained");
    }
    if (sent != answered + lost) fail("requests sent " + std::to_string(sent) + ", answered " +
                                      std::to_string(answered) + ", lost with their connection " +
                                      std::to_string(lost));
    if (g_got.load() != g_answered.load())
        fail("the ULP got " + std::to_string(g_got.load()) + " requests and answered " +
             std::to_string(g_answered.load()));
    if (answered == 0) fail("no request was answered");
    for (auto& v : tenv::violations()) fail("violation: " + v);
    for (auto& w : tenv::warnings()) fail("warning: " + w);
    for (auto& l : tenv::leftovers()) fail("left over: " + l);
    std::uint64_t sessions = 0, npaths = 0;
    rtrs_core_held(&sessions, &npaths);
    if (sessions || npaths) fail("sessions or paths held after the close");
    std::printf("round %d (%s, always_invalidate=%c): %ld requests sent, %ld answered, %ld lost with "
                "their connection; the ULP answered %ld\n",
                r, name(how), cfg.always_invalidate ? 'Y' : 'N', sent, answered, lost, g_answered.load());
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = 8, ms = 150;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--rounds" && i + 1 < argc) {
            rounds = std::atoi(argv[++i]);
        } else if (a == "--ms" && i + 1 < argc) {
            ms = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: %s [--rounds N] [--ms MS]\n", argv[0]);
            return 2;
        }
    }
    tenv::start();
    tenv::set_ulp(
        [](void*, rtrs_srv_op* op, int, void*, std::uint32_t, const void*, std::uint32_t) {
            ++g_got;
            std::lock_guard<std::mutex> g(g_ulp_mu);
            g_ulp_q.push_back(op);
            g_ulp_cv.notify_one();
            return 0;
        },
        [](void*, int, void*) { return 0; });
    int passed = 0, failed = 0;
    for (int r = 0; r < rounds; ++r) (round(r, ms) ? passed : failed)++;
    tenv::stop();
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
