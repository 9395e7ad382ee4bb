// SPDX-License-Identifier: GPL-2.0
#include "context.h"

#include "table.h"

namespace rtrs_srv {

void Context::error(const std::string& message) const { err << "rtrs-srv: " << message << '\n'; }

std::string quoted(const std::string& name) {
    std::string p = printable(name);
    std::string o = "\"";
    for (char c : p) {
        if (c == '"') o += '\\';
        o += c;
    }
    return o + "\"";
}

}  // namespace rtrs_srv
