// SPDX-License-Identifier: GPL-2.0
// Runs rtrs-srv's command line in the test process, with captured output.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"

namespace cli_test {

struct Outcome {
    int status;
    std::string out;
    std::string err;
};

struct RunOptions {
    std::map<std::string, std::string> env;
    bool tty = false;
    std::function<double()> now;
    std::function<void(double)> sleep;
    std::optional<std::string> stdin_text;  // standard input; none without it
};

inline Outcome run_cli(const std::vector<std::string>& args, const RunOptions& o = {}) {
    std::ostringstream out, err;
    std::istringstream in(o.stdin_text.value_or(""));
    auto env = o.env;
    rtrs_srv::Io io{out, err,
                    [env](const char* name) -> const char* {
                        auto it = env.find(name);
                        return it == env.end() ? nullptr : it->second.c_str();
                    },
                    o.tty, o.now, o.sleep, o.stdin_text ? &in : nullptr};
    int status = rtrs_srv::run(args, io);
    return {status, out.str(), err.str()};
}

}  // namespace cli_test
