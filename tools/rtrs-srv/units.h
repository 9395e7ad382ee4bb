// SPDX-License-Identifier: GPL-2.0
// Human-readable quantities: bytes in binary (IEC) units, rates per second.
#pragma once

#include <cstdint>
#include <string>

namespace rtrs_srv::units {

// "0 B" .. "1023 B", then one decimal in the largest unit that keeps the
// rounded value below 1024: "1.0 KiB", "48.0 KiB", "1.0 MiB" (for 1048575
// too, not "1024.0 KiB"), up to "16.0 EiB". Rounds half up.
std::string bytes(std::uint64_t n);

// A byte rate: as bytes() with "/s", for a non-negative rate; "0 B/s" for
// less than half a byte a second.
std::string byte_rate(double per_second);

// A count rate with one decimal: "0.0", "12.5".
std::string count_rate(double per_second);

}  // namespace rtrs_srv::units
