// SPDX-License-Identifier: GPL-2.0
// Parses the content of the sysfs attributes. Each parser accepts what the
// kernel prints (one line, ending in a newline) and nothing else; a value it
// does not accept is reported as invalid rather than guessed at.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model.h"

namespace rtrs_srv::parse {

// One line of text: the content without its trailing newline; the newline is
// optional, but the line must be non-empty and hold no other newline or NUL.
std::optional<std::string> line(std::string_view content);

// An unsigned decimal number on one line ("1\n"), at most `max`.
std::optional<std::uint64_t> number(std::string_view content,
                                    std::uint64_t max = UINT64_MAX);

// stats/rdma: four unsigned counters and, from this module, a signed
// inflight count, separated by single spaces, on one line.
std::optional<Stats> stats(std::string_view content);

// The debugfs latency file: lines beginning with '#' are comments; then
// "<name> <count> <sum_us> <max_us> <bucket 0> ... <bucket N-1>" a line,
// 1 <= N <= 64, count the buckets' total. Both "ulp" and "transport" must be
// there; other names are skipped (for later additions).
std::optional<Latency> latency(std::string_view content);

}  // namespace rtrs_srv::parse
