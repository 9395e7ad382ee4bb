// SPDX-License-Identifier: GPL-2.0
// A bounds-checked view of contiguous memory: the only way the core reads
// bytes that came from the network.
#pragma once

#include "rt/types.h"

namespace rt {

template <class T>
class Span {
public:
    constexpr Span() = default;
    constexpr Span(T* data, usize size) : data_(data), size_(size) {}
    template <usize N>
    constexpr Span(T (&arr)[N]) : data_(arr), size_(N) {}

    constexpr T* data() const { return data_; }
    constexpr usize size() const { return size_; }
    constexpr bool empty() const { return size_ == 0; }

    // The part [offset, offset + count); false (and *out untouched) when it
    // does not lie wholly inside, overflow included.
    [[nodiscard]] constexpr bool sub(usize offset, usize count, Span* out) const {
        if (offset > size_ || count > size_ - offset) return false;
        *out = Span(data_ + offset, count);
        return true;
    }
    [[nodiscard]] constexpr bool sub(usize offset, Span* out) const {
        if (offset > size_) return false;
        *out = Span(data_ + offset, size_ - offset);
        return true;
    }

    T* begin() const { return data_; }
    T* end() const { return data_ + size_; }

private:
    T* data_ = nullptr;
    usize size_ = 0;
};

using Bytes = Span<const u8>;
using MutBytes = Span<u8>;

}  // namespace rt
