// SPDX-License-Identifier: GPL-2.0
// The command line: options, the command and its arguments, dispatch.
#pragma once

#include <functional>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace rtrs_srv {

struct Io {
    std::ostream& out;
    std::ostream& err;
    std::function<const char*(const char*)> getenv;  // the environment
    bool stdout_tty = false;
    std::function<double()> now;           // empty: the real clock
    std::function<void(double)> sleep;     // empty: a real sleep
    std::istream* in = nullptr;            // standard input (admission set -)
};

// Runs rtrs-srv with `args` (argv without argv[0]); returns the exit status.
int run(const std::vector<std::string>& args, const Io& io);

}  // namespace rtrs_srv
