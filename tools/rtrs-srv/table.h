// SPDX-License-Identifier: GPL-2.0
// Plain-text tables: a header row, columns padded to their widest cell
// (width in characters, not bytes), two spaces apart, no trailing blanks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rtrs_srv {

class Table {
public:
    enum class Align { left, right };

    void column(std::string header, Align align = Align::left);
    void row(std::vector<std::string> cells);
    std::string render() const;
    bool empty() const { return rows_.empty(); }

private:
    std::vector<std::string> headers_;
    std::vector<Align> aligns_;
    std::vector<std::vector<std::string>> rows_;
};

// A name as it is safe to print on a terminal: control characters (a
// newline, an escape sequence) and bytes that are not UTF-8 become C-style
// escapes ("\n", "\x1b"), a backslash becomes "\\"; the rest is kept.
std::string printable(std::string_view s);

// Display width of UTF-8 text: its number of code points.
std::size_t text_width(std::string_view s);

}  // namespace rtrs_srv
