// SPDX-License-Identifier: GPL-2.0
#include "table.h"

#include <algorithm>
#include <cstdio>

#include "utf8.h"

namespace rtrs_srv {

void Table::column(std::string header, Align align) {
    headers_.push_back(std::move(header));
    aligns_.push_back(align);
}

void Table::row(std::vector<std::string> cells) {
    cells.resize(headers_.size());
    rows_.push_back(std::move(cells));
}

std::size_t text_width(std::string_view s) {
    std::size_t w = 0;
    for (char c : s)
        if ((static_cast<unsigned char>(c) & 0xc0) != 0x80) ++w;
    return w;
}

std::string Table::render() const {
    std::vector<std::size_t> width(headers_.size());
    for (std::size_t c = 0; c < headers_.size(); ++c) {
        width[c] = text_width(headers_[c]);
        for (const auto& r : rows_) width[c] = std::max(width[c], text_width(r[c]));
    }
    std::string out;
    auto emit = [&](const std::vector<std::string>& cells) {
        std::string line;
        for (std::size_t c = 0; c < cells.size(); ++c) {
            std::size_t pad = width[c] - text_width(cells[c]);
            if (c > 0) line += "  ";
            if (aligns_[c] == Align::right) line.append(pad, ' ');
            line += cells[c];
            if (aligns_[c] == Align::left) line.append(pad, ' ');
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line;
        out += '\n';
    };
    emit(headers_);
    for (const auto& r : rows_) emit(r);
    return out;
}

std::string printable(std::string_view s) {
    std::string o;
    for (std::size_t i = 0; i < s.size();) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '\\') {
            o += "\\\\";
            ++i;
            continue;
        }
        if (c >= 0x20 && c < 0x7f) {
            o += static_cast<char>(c);
            ++i;
            continue;
        }
        const char* named = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : nullptr;
        if (named) {
            o += named;
            ++i;
            continue;
        }
        // A well-formed UTF-8 sequence of a printable character is kept;
        // C1 controls (U+0080..U+009F) are escaped like C0 ones.
        std::uint32_t cp;
        std::size_t n = utf8::sequence(s, i, cp);
        if (n > 1 && cp >= 0xa0) {
            o.append(s.substr(i, n));
            i += n;
            continue;
        }
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\x%02x", c);
        o += buf;
        ++i;
    }
    return o;
}

}  // namespace rtrs_srv
