// SPDX-License-Identifier: GPL-2.0
// Random (version 4) UUIDs for the session and its paths, and UUIDs given
// on the command line.
#pragma once

#include <string>

#include "core/wire.h"

namespace rc {

wire::Uuid random_uuid();
std::string format_uuid(const wire::Uuid& u);
// 32 hex digits, dashes anywhere ignored (so format_uuid's output parses).
bool parse_uuid(const std::string& s, wire::Uuid* out);

}  // namespace rc
