// SPDX-License-Identifier: GPL-2.0
// rtrs-srv's exit status, as documented in --help and rtrs-srv(8).
#pragma once

namespace rtrs_srv {

enum Exit : int {
    exit_ok = 0,          // done
    exit_failure = 1,     // the kernel refused a write, or an I/O error
    exit_usage = 2,       // bad command line
    exit_not_found = 3,   // no such session or path, or no rtrs-server class
    exit_permission = 4,  // permission denied (writing needs root)
};

}  // namespace rtrs_srv
