// SPDX-License-Identifier: GPL-2.0
// Text into a caller's fixed buffer: always NUL-terminated, never overrun,
// and it remembers whether anything was cut off.
#pragma once

#include "rt/types.h"

namespace rt {

class StrBuf {
public:
    // `cap` includes the terminating NUL; cap 0 holds nothing at all.
    StrBuf(char* buf, usize cap) : buf_(buf), cap_(cap) {
        if (cap_) buf_[0] = '\0';
    }

    StrBuf& put(char c) {
        ++wanted_;
        if (len_ + 1 < cap_) {
            buf_[len_++] = c;
            buf_[len_] = '\0';
        } else {
            truncated_ = true;
        }
        return *this;
    }
    StrBuf& put(const char* s) {
        while (*s) put(*s++);
        return *this;
    }
    StrBuf& put(const char* s, usize n) {
        for (usize i = 0; i < n; ++i) put(s[i]);
        return *this;
    }
    StrBuf& dec(u64 v) {
        char tmp[20];
        usize n = 0;
        do {
            tmp[n++] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v);
        while (n) put(tmp[--n]);
        return *this;
    }
    StrBuf& dec(i64 v) {
        if (v < 0) {
            put('-');
            return dec(static_cast<u64>(0) - static_cast<u64>(v));
        }
        return dec(static_cast<u64>(v));
    }
    StrBuf& dec(int v) { return dec(static_cast<i64>(v)); }
    StrBuf& dec(u32 v) { return dec(static_cast<u64>(v)); }
    // Lower-case hex, at least `width` digits, no prefix.
    StrBuf& hex(u64 v, u32 width = 1) {
        static constexpr char digits[] = "0123456789abcdef";
        char tmp[16];
        u32 n = 0;
        do {
            tmp[n++] = digits[v & 0xf];
            v >>= 4;
        } while (v);
        while (n < width && n < sizeof(tmp)) tmp[n++] = '0';
        while (n) put(tmp[--n]);
        return *this;
    }

    const char* c_str() const { return cap_ ? buf_ : ""; }
    usize len() const { return len_; }
    bool truncated() const { return truncated_; }
    // The length the text would have without the cut.
    usize wanted() const { return wanted_; }

private:
    char* buf_;
    usize cap_;
    usize len_ = 0;
    usize wanted_ = 0;
    bool truncated_ = false;
};

}  // namespace rt
