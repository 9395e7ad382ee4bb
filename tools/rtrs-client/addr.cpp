// SPDX-License-Identifier: GPL-2.0
#include "addr.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>

namespace rc {

void Addr::set_port(uint16_t port) {
    if (family() == AF_INET)
        reinterpret_cast<sockaddr_in*>(&ss)->sin_port = htons(port);
    else if (family() == AF_INET6)
        reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port = htons(port);
}

Expected<Addr> parse_addr(const std::string& text) {
    std::string s = text;
    if (s.rfind("ip:", 0) == 0) s = s.substr(3);
    Addr a;
    auto* in4 = reinterpret_cast<sockaddr_in*>(&a.ss);
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&a.ss);
    if (inet_pton(AF_INET, s.c_str(), &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        return a;
    }
    std::memset(&a.ss, 0, sizeof(a.ss));
    if (inet_pton(AF_INET6, s.c_str(), &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        return a;
    }
    return Status::error(EINVAL, strf("not an IPv4 or IPv6 address: '%s'", text.c_str()));
}

std::string format_addr(const sockaddr* sa) {
    char buf[INET6_ADDRSTRLEN] = "?";
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, buf, sizeof(buf));
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, buf,
                  sizeof(buf));
    return std::string("ip:") + buf;
}

}  // namespace rc
