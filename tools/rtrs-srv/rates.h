// SPDX-License-Identifier: GPL-2.0
// Per-second rates of each path from two successive snapshots.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model.h"

namespace rtrs_srv {

struct PathRates {
    std::string session;
    std::string path;
    // Absent when the path has no earlier sample (new, or a reconnect under
    // the same name), when a counter went backwards (reset during the
    // interval) or when stats/rdma could not be read in either sample.
    std::optional<double> reads, read_bytes, writes, write_bytes;
    std::optional<std::int64_t> inflight;  // the current value
    // The latency histograms' requests of the interval (all of the current
    // sample's for a new path or after a reset), with the max since the
    // last reset; absent without a latency file. latency_problem: why the
    // file could not be read (permission: debugfs is root's), else empty.
    std::optional<Latency> latency;
    std::string latency_problem;
};

// One entry per path of `cur`, in its order. `seconds` is the time between
// the samples; rates are absent if it is not positive.
std::vector<PathRates> compute_rates(const Snapshot& prev, const Snapshot& cur, double seconds);

}  // namespace rtrs_srv
