// SPDX-License-Identifier: GPL-2.0
// What the commands print: the list and watch tables, the detail of one
// session, and JSON. Pure functions of the model, so tests can check them
// byte for byte.
#pragma once

#include <string>
#include <vector>

#include "model.h"
#include "rates.h"

namespace rtrs_srv::format {

// SESSION PATH HCA READS WRITES INFLIGHT, one row a path (a session without
// paths has one row with "-" for the path); "-" for each absent value.
std::string list_table(const Snapshot& snap);

// SESSION PATH READS/S READ-B/S WRITES/S WRITE-B/S INFLIGHT, one row a path.
std::string watch_table(const std::vector<PathRates>& rates);

// Every path of one session with every attribute, byte counts exact and in
// human units, and the reason for each absent value.
std::string show_text(const Session& s);

// A JSON array with one object a session: {"session":..., "paths":[...]};
// each path has "path", "hca_name", "hca_port", "src_addr", "dst_addr",
// "read_cnt", "read_bytes", "write_cnt", "write_bytes", "inflight" (null when
// absent). With `detail` (show), each path also has "errors": an object from
// attribute file to the reason it has no value.
std::string json(const std::vector<Session>& sessions, bool pretty, bool detail);

// "rxe0/1", "-/1", "rxe0/-" or "-".
std::string hca(const Path& p);

// "12 (48.0 KiB)", or "-".
std::string count_and_bytes(const std::optional<Stats>& s, bool reads);

}  // namespace rtrs_srv::format
