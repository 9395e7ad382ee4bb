// SPDX-License-Identifier: GPL-2.0
// What a command runs with: where sysfs is, where to print, how to tell
// time and wait (replaced in tests), and the output options.
#pragma once

#include <functional>
#include <istream>
#include <ostream>
#include <string>

#include "reader.h"

namespace rtrs_srv {

struct Context {
    Context(std::string root, std::ostream& out_, std::ostream& err_)
        : reader(std::move(root)), out(out_), err(err_) {}

    Reader reader;
    std::ostream& out;
    std::ostream& err;
    bool json = false;
    bool pretty = false;
    bool tty = false;  // stdout is a terminal: watch redraws in place

    // The module's parameters folder (admission), the modprobe.d folder
    // (admission set --persist), and standard input (nullptr: none).
    std::string params_dir;
    std::string modprobe_dir;
    std::istream* in = nullptr;

    // Seconds on a monotonic clock, and a sleep; real ones by default.
    std::function<double()> now;
    std::function<void(double)> sleep;

    // "rtrs-srv: " + message + "\n" on err.
    void error(const std::string& message) const;
};

// A name in quotes, made printable: "sess 1", "a\"b".
std::string quoted(const std::string& name);

}  // namespace rtrs_srv
