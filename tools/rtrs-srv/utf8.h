// SPDX-License-Identifier: GPL-2.0
// UTF-8 validation, for output that must not pass arbitrary bytes through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rtrs_srv::utf8 {

// Length of the well-formed UTF-8 sequence at s[i] (1 for ASCII), or 0 if
// the bytes there are not one: overlong forms, surrogates and code points
// above U+10FFFF are not. `cp` receives the code point.
std::size_t sequence(std::string_view s, std::size_t i, std::uint32_t& cp);

}  // namespace rtrs_srv::utf8
