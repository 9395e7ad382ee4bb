// SPDX-License-Identifier: GPL-2.0
#include "json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "utf8.h"

namespace rtrs_srv {


std::string JsonWriter::escape(std::string_view s) {
    std::string o;
    o.reserve(s.size() + 2);
    o += '"';
    for (std::size_t i = 0; i < s.size();) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        switch (c) {
        case '"': o += "\\\""; ++i; continue;
        case '\\': o += "\\\\"; ++i; continue;
        case '\b': o += "\\b"; ++i; continue;
        case '\f': o += "\\f"; ++i; continue;
        case '\n': o += "\\n"; ++i; continue;
        case '\r': o += "\\r"; ++i; continue;
        case '\t': o += "\\t"; ++i; continue;
        default: break;
        }
        if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            o += buf;
            ++i;
            continue;
        }
        std::uint32_t cp;
        std::size_t n = utf8::sequence(s, i, cp);
        if (n == 0) {
            o += "\\ufffd";
            ++i;
            continue;
        }
        o.append(s.substr(i, n));
        i += n;
    }
    o += '"';
    return o;
}

void JsonWriter::newline_indent() {
    out_ += '\n';
    out_.append(4 * stack_.size(), ' ');
}

void JsonWriter::before_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (stack_.empty()) return;
    if (stack_.back().any) out_ += ',';
    stack_.back().any = true;
    if (pretty_) newline_indent();
}

JsonWriter& JsonWriter::open(char c) {
    before_value();
    out_ += c;
    stack_.push_back({});
    return *this;
}

JsonWriter& JsonWriter::close(char c) {
    bool any = !stack_.empty() && stack_.back().any;
    if (!stack_.empty()) stack_.pop_back();
    if (pretty_ && any) newline_indent();
    out_ += c;
    return *this;
}

JsonWriter& JsonWriter::begin_object() { return open('{'); }
JsonWriter& JsonWriter::end_object() { return close('}'); }
JsonWriter& JsonWriter::begin_array() { return open('['); }
JsonWriter& JsonWriter::end_array() { return close(']'); }

JsonWriter& JsonWriter::key(std::string_view k) {
    before_value();
    out_ += escape(k);
    out_ += pretty_ ? ": " : ":";
    after_key_ = true;
    return *this;
}

JsonWriter& JsonWriter::string(std::string_view s) {
    before_value();
    out_ += escape(s);
    return *this;
}

JsonWriter& JsonWriter::number(std::uint64_t v) {
    before_value();
    out_ += std::to_string(v);
    return *this;
}

JsonWriter& JsonWriter::number(std::int64_t v) {
    before_value();
    out_ += std::to_string(v);
    return *this;
}

JsonWriter& JsonWriter::number(double v) {
    if (!std::isfinite(v)) return null();
    before_value();
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.17g", v);
    // Shortest form that reads back the same.
    for (int prec = 1; prec <= 17; ++prec) {
        char tmp[64];
        std::snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
        if (std::strtod(tmp, nullptr) == v) {
            out_ += tmp;
            return *this;
        }
    }
    out_ += buf;
    return *this;
}

JsonWriter& JsonWriter::boolean(bool v) {
    before_value();
    out_ += v ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::null() {
    before_value();
    out_ += "null";
    return *this;
}

std::string JsonWriter::str() const {
    if (pretty_ && stack_.empty() && !out_.empty()) return out_ + "\n";
    return out_;
}

}  // namespace rtrs_srv
