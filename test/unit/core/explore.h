// SPDX-License-Identifier: GPL-2.0
// The schedule explorer: runs the core on the fake kernel (fake_kernel.h)
// with a client, an upper layer and an operator around it, and lets a
// seeded chooser decide the order of everything that may happen at once in
// the kernel: connection requests, CM events, each connection's
// completions, work items and timers, the ULP's answers from other CPUs,
// sysfs writes, a device's removal, the server's close, failures of the
// kernel's calls. Another thread also gets to run in the middle of the
// core's own calls: at each failure point and lock release that leaves no
// lock held (the fake's on_preempt).
//
// After each step it checks what must hold whatever the order: no rule of
// the fake kernel broken (locks, posts, lifetimes, devices), no warning of
// the core; the ULP hears CONNECTED before any request of the session and
// DISCONNECTED once after it; every request it was given is new; every
// response the client gets is for a request in flight. At the end
// (everything answered, the server closed, the module unloaded): nothing
// left, every CONNECTED matched, every request of a path that stayed up
// answered. Under ASan a use after free ends the process: the seed and the
// events are printed first (the death callback).
//
// Every choice is a number; a run is its list of choices. A failure prints
// the seed, the choices and the events, and replays with the choices
// (RTRS_EXPLORE_REPLAY=...), whatever the seeds do then.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace ex {

// What a run is made of; each scenario is one of these.
struct Scenario {
    const char* name = "mix";
    int sessions = 2;
    int paths_per_session = 2;  // each on its own device (1 .. devices)
    int cons_per_path = 2;
    int devices = 2;
    std::uint32_t queue_depth = 4;
    bool always_invalidate = true;
    std::uint32_t signal_interval = 1;
    int max_steps = 300;
    // The client: I/O requests it sends in all; whether it may leave
    // (disconnect, die) and come back.
    int requests = 40;
    bool client_leaves = true;
    // The operator: sysfs disconnects and counter resets.
    bool sysfs = true;
    // The ULP: refuses a session's CONNECTED now and then.
    bool ulp_refuses = false;
    // The server's open: its listener's IB half may fail while the IP half
    // already takes requests.
    bool open_race = false;
    // Devices removed (each once, both halves) during the run.
    int device_removals = 0;
    // The server closed in the middle of the run (else at its end).
    bool close_midway = false;
    // Kernel calls failed now and then (a failure point fails with
    // fault_percent in 100, at most max_faults times a run).
    int fault_percent = 0;
    int max_faults = 2;
    // Another thread runs at a preemption point this often (in 100), and
    // at most this deep.
    int preempt_percent = 4;
    int preempt_depth = 1;
};

// Where the choices come from: a seed, a list to replay, or an enumeration
// of every list (depth-first) up to a bound.
class Chooser {
public:
    static Chooser seeded(std::uint64_t seed);
    static Chooser replaying(std::vector<int> choices);
    // For enumerate(): the forced prefix, then the first option always.
    static Chooser prefixed(std::vector<int> prefix);

    // One of n options, with weights in random mode (all equal otherwise).
    int pick(const std::vector<int>& weights);
    // A yes/no that is yes with percent in 100 in random mode.
    bool coin(int percent);

    const std::vector<int>& choices() const { return taken_; }
    const std::vector<int>& options() const { return options_; }
    std::uint64_t seed() const { return seed_; }
    bool random() const { return mode_ == Mode::Random; }

private:
    enum class Mode { Random, Replay };
    Mode mode_ = Mode::Random;
    std::uint64_t seed_ = 0;
    std::mt19937_64 rng_;
    std::vector<int> forced_;
    std::vector<int> taken_;
    std::vector<int> options_;  // how many options each choice had
};

struct Result {
    bool ok = true;
    std::string failure;             // what broke, first
    std::vector<std::string> events; // what happened, in order
    std::vector<int> choices;
    int steps = 0;
    // What the run got to do (for the suite's own checks that the
    // explorer explores): preemptions taken, faults, paths up, requests
    // answered, paths closed, removals, opens that failed.
    int preemptions = 0, faults = 0, paths_up = 0, answered = 0, closes = 0,
        removals = 0, failed_opens = 0, refused_in_window = 0, refused_opening = 0;
};

Result run(const Scenario& s, Chooser& ch);

// A failed run in words: scenario, seed, choices (for replay), the events.
std::string report(const Scenario& s, const Chooser& ch, const Result& r);

// Every list of choices of a scenario, depth-first, up to max_runs runs
// and choices at most max_choices deep (past it, always the first option).
// Stops at the first failure; returns it, or the last run.
Result enumerate(const Scenario& s, int max_runs, int max_choices, int* runs);

}  // namespace ex
