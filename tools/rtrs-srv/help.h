// SPDX-License-Identifier: GPL-2.0
// The help texts: the whole tool's (--help) and each command's
// (rtrs-srv COMMAND --help, rtrs-srv help COMMAND).
#pragma once

#include <optional>
#include <string>

namespace rtrs_srv::help {

std::string tool();                                        // --help
std::optional<std::string> command(const std::string& name);  // nullopt: no such command
std::string usage_line();                                  // one line, for usage errors

}  // namespace rtrs_srv::help
