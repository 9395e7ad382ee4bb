// SPDX-License-Identifier: GPL-2.0
// Random (version 4) UUIDs for the session and its paths.
#pragma once

#include <string>

#include "core/wire.h"

namespace rc {

wire::Uuid random_uuid();
std::string format_uuid(const wire::Uuid& u);

}  // namespace rc
