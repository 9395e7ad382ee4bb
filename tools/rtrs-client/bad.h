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
    uint16_t port = 1234;
    std::string session = "rtrs-bad";
    bool verbose = true;
};

const std::vector<std::string>& bad_case_names();
// Prints one line on stdout: "result: rejected errno=-N", "result:
// accepted", "result: closed", "result: answered" or "result: timeout"
// (the server neither answered nor closed in time). Fails only when the
// client itself could not carry out the case.
Status run_bad_case(const BadConfig& cfg);

}  // namespace rc
