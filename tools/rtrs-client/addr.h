// SPDX-License-Identifier: GPL-2.0
// IP addresses as the command line gives them and as RTRS prints them.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "status.h"

namespace rc {

struct Addr {
    sockaddr_storage ss{};

    sockaddr* sa() { return reinterpret_cast<sockaddr*>(&ss); }
    const sockaddr* sa() const { return reinterpret_cast<const sockaddr*>(&ss); }
    int family() const { return ss.ss_family; }
    void set_port(uint16_t port);
};

// "10.77.0.1", "fd00::1", optionally prefixed "ip:" as RTRS writes them.
Expected<Addr> parse_addr(const std::string& text);
// "ip:10.77.0.1" / "ip:fd00::1": the form of the server's sysfs path names.
std::string format_addr(const sockaddr* sa);

}  // namespace rc
