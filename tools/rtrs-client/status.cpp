// SPDX-License-Identifier: GPL-2.0
#include "status.h"

#include <cerrno>
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

// Linux's errno names, the canonical one of each value first (EAGAIN, not
// EWOULDBLOCK). glibc's strerrorname_np() says the same, but only from 2.32
// on: Debian 11's glibc (2.31) has none.
#define RC_ERRNO_NAMES(X)                                                                      \
    X(EPERM) X(ENOENT) X(ESRCH) X(EINTR) X(EIO) X(ENXIO) X(E2BIG) X(ENOEXEC) X(EBADF)           \
    X(ECHILD) X(EAGAIN) X(ENOMEM) X(EACCES) X(EFAULT) X(ENOTBLK) X(EBUSY) X(EEXIST) X(EXDEV)   \
    X(ENODEV) X(ENOTDIR) X(EISDIR) X(EINVAL) X(ENFILE) X(EMFILE) X(ENOTTY) X(ETXTBSY)          \
    X(EFBIG) X(ENOSPC) X(ESPIPE) X(EROFS) X(EMLINK) X(EPIPE) X(EDOM) X(ERANGE) X(EDEADLK)      \
    X(ENAMETOOLONG) X(ENOLCK) X(ENOSYS) X(ENOTEMPTY) X(ELOOP) X(ENOMSG) X(EIDRM) X(ENOSTR)     \
    X(ENODATA) X(ETIME) X(ENOSR) X(ENOLINK) X(EPROTO) X(EBADMSG) X(EOVERFLOW) X(EILSEQ)        \
    X(EUSERS) X(ENOTSOCK) X(EDESTADDRREQ) X(EMSGSIZE) X(EPROTOTYPE) X(ENOPROTOOPT)             \
    X(EPROTONOSUPPORT) X(ESOCKTNOSUPPORT) X(EOPNOTSUPP) X(EPFNOSUPPORT) X(EAFNOSUPPORT)        \
    X(EADDRINUSE) X(EADDRNOTAVAIL) X(ENETDOWN) X(ENETUNREACH) X(ENETRESET) X(ECONNABORTED)     \
    X(ECONNRESET) X(ENOBUFS) X(EISCONN) X(ENOTCONN) X(ESHUTDOWN) X(ETOOMANYREFS)               \
    X(ETIMEDOUT) X(ECONNREFUSED) X(EHOSTDOWN) X(EHOSTUNREACH) X(EALREADY) X(EINPROGRESS)       \
    X(ESTALE) X(EREMOTEIO) X(EDQUOT) X(ENOMEDIUM) X(EMEDIUMTYPE) X(ECANCELED) X(ENOKEY)        \
    X(EKEYEXPIRED) X(EKEYREVOKED) X(EKEYREJECTED) X(EOWNERDEAD) X(ENOTRECOVERABLE)             \
    X(ERFKILL) X(EHWPOISON)

std::string errno_name(int err) {
    if (err < 0) err = -err;
    static const struct {
        int value;
        const char* name;
    } names[] = {
#define RC_ERRNO_ENTRY(e) {e, #e},
        RC_ERRNO_NAMES(RC_ERRNO_ENTRY)
#undef RC_ERRNO_ENTRY
    };
    for (const auto& n : names)
        if (n.value == err) return n.name;
    return strf("errno %d", err);
}

Status sys_error(int err, const std::string& what) {
    return Status::error(
        err, strf("%s: %s (%s)", what.c_str(), std::strerror(err), errno_name(err).c_str()));
}

}  // namespace rc
