// SPDX-License-Identifier: GPL-2.0
// `rtrs-client bad CASE`: one malformed or out-of-order request, and what
// the server did about it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "addr.h"
#include "status.h"

namespace rc {

struct BadConfig {
    std::string which;
    std::optional<Addr> src;
    Addr dst;
    // The second path's ends, for the cases of two paths.
    std::optional<Addr> src2, dst2;
    uint16_t port = 1234;
    std::string session = "rtrs-bad";
    bool verbose = true;
    // io-* cases: how long to keep the path after the result (0: close).
    long hold = 0;
};

const std::vector<std::string>& bad_case_names();
// Prints one line on stdout: "result: rejected errno=-N", "result:
// accepted", "result: closed", "result: answered" (io-* cases: "result:
// answered errno=-N") or "result: timeout" (the server neither answered nor
// closed in time). An io-* case the server answered also prints "after:
// write ok" (or what went wrong) for a good write on the same chunk that
// follows. Fails only when the client itself could not carry out the case.
Status run_bad_case(const BadConfig& cfg);

}  // namespace rc
