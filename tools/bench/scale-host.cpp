// SPDX-License-Identifier: GPL-2.0
// How the core's I/O path scales with the connections of one path: the
// core on the threaded host environment (test/threaded/thread_env.h), one
// path of three connections (the service connection and two for I/O),
// each I/O connection driven by a thread of its own as its CQ's context
// would be: a request's arrival (the immediate), with always_invalidate the
// local invalidation's completion, the ULP's answer (inline, as a
// null_blk behind rnbd answers), the response's post and the send
// completions, in a loop, one request in flight per connection. Rounds of
// one thread, then two, each for a fixed time; prints requests a second
// and the ratio two threads / one thread of each round, and the median;
// and each thread's CPU time per request (its thread clock), two threads
// against one: what sharing costs when both do run at once, which the
// throughput shows only on an otherwise idle machine.
//
//   rtrs_scale_host [--rounds N] [--ms MS] [--invalidate Y|N]
//
// Not a test: it asserts nothing about speed (tools/bench/scale-host.sh
// builds and runs it; doc/benchmarks.md has its figures).
#include <algorithm>
#include <ctime>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "client.h"
#include "core/rtrs_core.h"
#include "thread_env.h"

namespace {

std::atomic<bool> g_go{false}, g_stop{false};

// One connection's loop: requests on its own chunks until told to stop.
std::uint64_t thread_cpu_ns() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

void drive(tclient::Path* p, std::uint16_t cid, std::uint32_t first, std::uint32_t step,
           std::uint64_t* count, std::uint64_t* cpu_ns, bool* failed) {
    while (!g_go.load(std::memory_order_acquire)) {
    }
    const std::uint64_t cpu0 = thread_cpu_ns();
    std::uint64_t n = 0;
    std::uint32_t id = first;
    bool read = false;
    while (!g_stop.load(std::memory_order_relaxed)) {
        if (!tclient::request(*p, cid, id, read) || !tclient::wait_response(*p, cid, id)) {
            *failed = true;
            break;
        }
        ++n;
        read = !read;
        id += step;
        if (id >= p->queue_depth) id = first;
    }
    *count = n;
    *cpu_ns = thread_cpu_ns() - cpu0;
}

// Requests a second; *cpu_per_req the threads' CPU ns per request.
double run(tclient::Path& p, int threads, int ms, bool* failed, double* cpu_per_req) {
    std::vector<std::thread> ts;
    std::vector<std::uint64_t> counts(threads, 0), cpu(threads, 0);
    bool fail[8] = {};
    g_go = false;
    g_stop = false;
    for (int t = 0; t < threads; ++t)
        ts.emplace_back(drive, &p, static_cast<std::uint16_t>(1 + t), static_cast<std::uint32_t>(t),
                        static_cast<std::uint32_t>(threads), &counts[t], &cpu[t], &fail[t]);
    auto start = std::chrono::steady_clock::now();
    g_go = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    g_stop = true;
    for (auto& t : ts) t.join();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::uint64_t total = 0, total_cpu = 0;
    for (int t = 0; t < threads; ++t) {
        total += counts[t];
        total_cpu += cpu[t];
        if (fail[t]) *failed = true;
    }
    *cpu_per_req = total ? static_cast<double>(total_cpu) / static_cast<double>(total) : 0;
    return static_cast<double>(total) / secs;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = 7, ms = 1000;
    bool inval = true;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--rounds" && i + 1 < argc) {
            rounds = std::atoi(argv[++i]);
        } else if (a == "--ms" && i + 1 < argc) {
            ms = std::atoi(argv[++i]);
        } else if (a == "--invalidate" && i + 1 < argc) {
            inval = argv[++i][0] == 'Y';
        } else {
            std::fprintf(stderr, "usage: %s [--rounds N] [--ms MS] [--invalidate Y|N]\n", argv[0]);
            return 2;
        }
    }
    tenv::start();
    tenv::set_ulp(
        [](void*, rtrs_srv_op* op, int, void*, std::uint32_t, const void*, std::uint32_t) {
            rtrs_core_answer(op, 0);
            return 0;
        },
        [](void*, int, void*) { return 0; });
    rtrs_core_config cfg{};
    cfg.always_invalidate = inval;
    cfg.max_chunk_size = 128 * 1024;
    cfg.sess_queue_depth = 128;
    cfg.page_size = 4096;
    if (int err = rtrs_core_init(&cfg, nullptr)) {
        std::fprintf(stderr, "rtrs_core_init: %d\n", err);
        return 1;
    }
    rtrs_srv_ctx* srv = nullptr;
    if (int err = rtrs_core_server_open(reinterpret_cast<rtrs_env_ulp*>(std::uintptr_t{1}), 1234, &srv)) {
        std::fprintf(stderr, "rtrs_core_server_open: %d\n", err);
        return 1;
    }
    if (int err = rtrs_core_on_device_add(reinterpret_cast<void*>(std::uintptr_t{0x1000}))) {
        std::fprintf(stderr, "rtrs_core_on_device_add: %d\n", err);
        return 1;
    }
    tclient::Path p = tclient::make(1, 3, reinterpret_cast<void*>(std::uintptr_t{0x1000}));
    std::string why;
    if (!tclient::up(p, "scale", &why)) {
        std::fprintf(stderr, "the path did not come up: %s\n", why.c_str());
        return 1;
    }
    bool failed = false;
    double ca = 0, cb = 0;
    run(p, 2, ms / 4, &failed, &ca);  // warm up
    std::vector<double> one, two, ratio, cpu_ratio;
    std::printf("always_invalidate=%c, %d rounds of %d ms, one request in flight per connection\n",
                inval ? 'Y' : 'N', rounds, ms);
    std::printf("round  1 thread (req/s)  2 threads (req/s)  2/1    CPU ns/req 1 thread, 2 threads, 2/1\n");
    for (int r = 0; r < rounds && !failed; ++r) {
        double a = run(p, 1, ms, &failed, &ca);
        double b = run(p, 2, ms, &failed, &cb);
        one.push_back(a);
        two.push_back(b);
        ratio.push_back(b / a);
        cpu_ratio.push_back(cb / ca);
        std::printf("%5d  %17.0f  %17.0f  %.3f  %8.0f %8.0f  %.3f\n", r + 1, a, b, b / a, ca, cb, cb / ca);
    }
    int ret = 0;
    if (failed) {
        std::fprintf(stderr, "a request was not answered\n");
        ret = 1;
    } else {
        auto mm = std::minmax_element(ratio.begin(), ratio.end());
        auto mc = std::minmax_element(cpu_ratio.begin(), cpu_ratio.end());
        std::printf("median  %15.0f  %17.0f  %.3f (%.3f-%.3f); CPU per request 2/1: %.3f (%.3f-%.3f)\n",
                    median(one), median(two), median(ratio), *mm.first, *mm.second, median(cpu_ratio),
                    *mc.first, *mc.second);
    }
    rtrs_core_server_close(srv);
    rtrs_core_exit();
    tenv::stop();
    for (auto& v : tenv::violations()) {
        std::fprintf(stderr, "violation: %s\n", v.c_str());
        ret = 1;
    }
    for (auto& w : tenv::warnings()) {
        std::fprintf(stderr, "warning: %s\n", w.c_str());
        ret = 1;
    }
    return ret;
}
