// SPDX-License-Identifier: GPL-2.0
// The few type utilities the subset needs, since no standard library exists
// in the module.
#pragma once

#include "rt/types.h"

namespace rt {

template <class T> struct RemoveRef { using Type = T; };
template <class T> struct RemoveRef<T&> { using Type = T; };
template <class T> struct RemoveRef<T&&> { using Type = T; };

template <class T>
constexpr typename RemoveRef<T>::Type&& move(T&& v) noexcept {
    return static_cast<typename RemoveRef<T>::Type&&>(v);
}

template <class T>
constexpr T&& forward(typename RemoveRef<T>::Type& v) noexcept {
    return static_cast<T&&>(v);
}

template <class T>
constexpr T&& forward(typename RemoveRef<T>::Type&& v) noexcept {
    return static_cast<T&&>(v);
}

template <class T>
constexpr void swap(T& a, T& b) noexcept {
    T tmp = move(a);
    a = move(b);
    b = move(tmp);
}

template <class T> constexpr const T& min(const T& a, const T& b) { return b < a ? b : a; }
template <class T> constexpr const T& max(const T& a, const T& b) { return a < b ? b : a; }

// Tag for constructing an object in storage we already own; a distinct
// signature so that it never collides with the standard placement new.
struct InPlace {};
inline constexpr InPlace in_place{};

// Number of bits needed to number `n` distinct values (0 for n <= 1):
// ceil(log2(n)).
constexpr u32 bits_for(u64 n) {
    if (n <= 1) return 0;
    return 64u - static_cast<u32>(__builtin_clzll(n - 1));
}

constexpr bool is_power_of_two(u64 n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace rt

inline void* operator new(__SIZE_TYPE__, rt::InPlace, void* where) noexcept { return where; }
inline void operator delete(void*, rt::InPlace, void*) noexcept {}
