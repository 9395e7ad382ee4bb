// SPDX-License-Identifier: GPL-2.0
// Helpers of the codecs in wire.cpp (the server's) and wire_client.cpp (a
// client's): bounded copies in and out of wire structures.
#pragma once

#include "core/wire.h"

namespace wire::detail {

// Copies sizeof(T) bytes at `off` of `in` into *out; false if they are not
// all there.
template <class T>
bool load(rt::Bytes in, usize off, T* out) {
    rt::Bytes part;
    if (!in.sub(off, sizeof(T), &part)) return false;
    __builtin_memcpy(out, part.data(), sizeof(T));
    return true;
}

// Copies v to `off` of `out`; false (nothing written) if it does not fit.
template <class T>
bool store(rt::MutBytes out, usize off, const T& v) {
    rt::MutBytes part;
    if (!out.sub(off, sizeof(T), &part)) return false;
    __builtin_memcpy(part.data(), &v, sizeof(T));
    return true;
}

template <class T>
void zero(T* v) {
    __builtin_memset(v, 0, sizeof(T));
}

constexpr u16 raw(MsgType t) { return static_cast<u16>(t); }

// Writes the descriptors at `off` of out; the caller has checked the room.
inline void store_descs(rt::MutBytes out, usize off, rt::Span<const SgDescFields> descs) {
    for (usize i = 0; i < descs.size(); ++i)
        store(out, off + i * sizeof(SgDesc), encode_sg_desc(descs.data()[i]));
}


}  // namespace wire::detail
