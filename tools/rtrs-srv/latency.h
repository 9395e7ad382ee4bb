// SPDX-License-Identifier: GPL-2.0
// Percentiles of the server's latency histograms (log2 buckets of
// microseconds), and the difference of two samples of one (watch).
#pragma once

#include <optional>
#include <string>

#include "model.h"

namespace rtrs_srv::latency {

// Bucket i's bounds in microseconds: [2^i, 2^(i+1)), bucket 0 from 0.
double lower_us(std::size_t i);
double upper_us(std::size_t i);

// The q-quantile (0 < q <= 1) in microseconds, interpolated linearly
// inside the bucket it falls in (as Prometheus' histogram_quantile does),
// and never above the largest value seen (max_us, exact). The last bucket
// has no upper bound: its values lie between its lower bound and max_us.
// nullopt for an empty histogram.
std::optional<double> quantile(const Histogram& h, double q);

// What `now` counted since `before` (bucket by bucket), with now's max
// (the max is since the last reset). If any bucket went back (a reset in
// between), `now` itself: everything it holds came after the reset.
Histogram since(const Histogram& before, const Histogram& now);

// "850 us", "12.4 ms", "3.20 s": three significant digits at most.
std::string duration(double us);

// "p50 1.20 ms, p99 3.90 ms, max 4.10 ms (65 requests)", or for an empty
// histogram "no requests".
std::string summary(const Histogram& h);

// "1.20ms/3.90ms/4.10ms" (p50/p99/max) for a table cell; "-" when empty.
std::string cell(const Histogram& h);

}  // namespace rtrs_srv::latency
