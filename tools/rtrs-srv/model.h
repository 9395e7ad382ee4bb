// SPDX-License-Identifier: GPL-2.0
// What rtrs-srv knows about the server: sessions, their paths, and each
// path's attributes as read from /sys/class/rtrs-server. Every attribute is
// optional: a file can be missing, unreadable or hold something unexpected,
// and the tool shows what it could read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rtrs_srv {

// One attribute: its value if the file was read and understood, otherwise
// why not ("missing", "invalid", or strerror of the read). `raw` holds the
// file's content whenever it was read, understood or not.
template <class T>
struct Field {
    std::optional<T> value;
    std::string raw;
    std::string problem;

    bool ok() const { return value.has_value(); }
};

// stats/rdma: "<read-cnt> <read-bytes> <write-cnt> <write-bytes> [<inflight>]".
// Upstream's server prints the first four only.
struct Stats {
    std::uint64_t read_cnt = 0;
    std::uint64_t read_bytes = 0;
    std::uint64_t write_cnt = 0;
    std::uint64_t write_bytes = 0;
    std::optional<std::int64_t> inflight;

    bool operator==(const Stats&) const = default;
};

// One latency histogram of the debugfs latency file (rtrs-server only):
// buckets[i] counts requests that took [2^i, 2^(i+1)) microseconds (bucket
// 0 also below 1 us, the last one everything above); count is their total.
struct Histogram {
    std::uint64_t count = 0;
    std::uint64_t sum_us = 0;
    std::uint64_t max_us = 0;
    std::vector<std::uint64_t> buckets;

    bool operator==(const Histogram&) const = default;
};

// /sys/kernel/debug/rtrs-server/<session>/<path>/latency: from a request's
// arrival to the upper layer's answer (ulp), and from the answer to the
// completion of the response (transport).
struct Latency {
    Histogram ulp;
    Histogram transport;

    bool operator==(const Latency&) const = default;
};

struct Path {
    std::string name;  // the directory name, "<src>@<dst>"
    Field<std::string> hca_name;
    Field<std::uint32_t> hca_port;
    Field<std::string> src_addr;  // the client's end
    Field<std::string> dst_addr;  // the server's own end
    Field<Stats> stats;
    // Not in sysfs: debugfs, root's only. "missing" when there is no file
    // (another server, no debugfs), else why it could not be read.
    Field<Latency> latency;
};

struct Session {
    std::string name;
    std::vector<Path> paths;  // sorted by name
    std::string problem;      // set when paths/ could not be listed
};

// All sessions of the class, sorted by name.
struct Snapshot {
    std::vector<Session> sessions;
};

}  // namespace rtrs_srv
