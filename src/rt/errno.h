/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Linux errno values the core uses. The core cannot include kernel or
 * libc headers, so the numbers are spelled out; the glue (at build time) and
 * the host tests check every one against the real definition.
 */
#ifndef RTRS_RT_ERRNO_H
#define RTRS_RT_ERRNO_H

/* X(macro, name, value): one line per errno; rt::errc::name in C++. */
#define RT_ERRNO_LIST(X) \
	X(EPERM, perm, 1) \
	X(ENOENT, noent, 2) \
	X(EIO, io, 5) \
	X(ENXIO, nxio, 6) \
	X(EAGAIN, again, 11) \
	X(ENOMEM, nomem, 12) \
	X(EFAULT, fault, 14) \
	X(EBUSY, busy, 16) \
	X(EEXIST, exist, 17) \
	X(ENODEV, nodev, 19) \
	X(EINVAL, inval, 22) \
	X(ENOSPC, nospc, 28) \
	X(ERANGE, range, 34) \
	X(ENAMETOOLONG, nametoolong, 36) \
	X(EPROTO, proto, 71) \
	X(EBADMSG, badmsg, 74) \
	X(EMSGSIZE, msgsize, 90) \
	X(EPROTONOSUPPORT, protonosupport, 93) \
	X(ECONNRESET, connreset, 104) \
	X(ENOBUFS, nobufs, 105) \
	X(ENOTCONN, notconn, 107) \
	X(ESHUTDOWN, shutdown, 108) \
	X(ETIMEDOUT, timedout, 110) \
	X(ECONNREFUSED, connrefused, 111) \
	X(EDQUOT, dquot, 122)

#ifdef __cplusplus
namespace rt::errc {
#define RT_ERRC_CONSTANT(macro, name, value) inline constexpr int name = value;
RT_ERRNO_LIST(RT_ERRC_CONSTANT)
#undef RT_ERRC_CONSTANT
}  // namespace rt::errc
#endif

#endif /* RTRS_RT_ERRNO_H */
