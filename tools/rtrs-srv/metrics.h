// SPDX-License-Identifier: GPL-2.0
// `metrics`: the Prometheus text exposition format (version 0.0.4, which
// node_exporter's textfile collector reads), one family a metric with
// HELP and TYPE lines, labels session and path.
#pragma once

#include <string>

#include "admission.h"
#include "model.h"

namespace rtrs_srv::metrics {

// Every metric of the snapshot; loaded: whether the class folder exists
// (without it only rtrs_server_loaded 0). With `admission` (the module's
// admission parameter, read), its refusals by reason and its allow-list.
std::string exposition(const Snapshot& snap, bool loaded,
                       const admission::State* admission = nullptr);

// A label value as the format wants it: \ " and newline escaped, bytes
// that are not UTF-8 replaced by U+FFFD.
std::string label_value(const std::string& s);

// 2^(i+1) microseconds in seconds, as a bucket's "le": "0.000002",
// "0.004096", "2147.483648".
std::string le_seconds(std::size_t i);

// Microseconds as seconds, exact: "0.000123", "12.5", "0".
std::string us_as_seconds(std::uint64_t us);

// Writes the exposition to DIR/rtrs_server.prom atomically: a temporary
// file beside it (not ending in .prom, which the collector would read),
// then rename(2). 0 or an errno.
int write_textfile(const std::string& dir, const std::string& text);

}  // namespace rtrs_srv::metrics
