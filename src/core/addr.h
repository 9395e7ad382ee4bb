// SPDX-License-Identifier: GPL-2.0
// Addresses as sysfs shows them and paths are named: "ip:10.77.0.1",
// "ip:fd00::1" (IPv6 compressed as the kernel's %pI6c does it), or
// "gid:fe80:0000:0000:0000:0002:c9ff:fe00:0001" (every group, as %pI6).
#pragma once

#include "core/rtrs_core.h"
#include "rt/types.h"

namespace core {

// Writes the address's text to buf (NUL-terminated, cut to cap); returns
// the length of the text.
rt::usize format_addr(const rtrs_core_addr& a, char* buf, rt::usize cap);

// Whether two addresses are the same (family and address; ports aside).
bool same_addr(const rtrs_core_addr& a, const rtrs_core_addr& b);

}  // namespace core
