// SPDX-License-Identifier: GPL-2.0
#include "status.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <vector>

namespace rc {

std::string strf(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    const int n = std::vsnprintf(nullptr, 0, fmt, ap);
    va_end(ap);
    std::string out;
    if (n > 0) {
        std::vector<char> buf(static_cast<size_t>(n) + 1);
        std::vsnprintf(buf.data(), buf.size(), fmt, ap2);
        out.assign(buf.data(), static_cast<size_t>(n));
    }
    va_end(ap2);
    return out;
}

std::string errno_name(int err) {
    if (err < 0) err = -err;
    const char* name = strerrorname_np(err);
    return name ? name : strf("errno %d", err);
}

Status sys_error(int err, const std::string& what) {
    return Status::error(
        err, strf("%s: %s (%s)", what.c_str(), std::strerror(err), errno_name(err).c_str()));
}

}  // namespace rc
