// SPDX-License-Identifier: GPL-2.0
// A small JSON writer: compact by default (one line, as `ip -j` prints),
// or pretty with four-space indentation. Strings are escaped per RFC 8259;
// bytes that are not valid UTF-8 become U+FFFD, so the output is always
// valid JSON whatever a session is named.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rtrs_srv {

class JsonWriter {
public:
    explicit JsonWriter(bool pretty = false) : pretty_(pretty) {}

    JsonWriter& begin_object();
    JsonWriter& end_object();
    JsonWriter& begin_array();
    JsonWriter& end_array();
    JsonWriter& key(std::string_view k);

    JsonWriter& string(std::string_view s);
    JsonWriter& number(std::uint64_t v);
    JsonWriter& number(std::int64_t v);
    JsonWriter& number(double v);  // non-finite values are written as null
    JsonWriter& boolean(bool v);
    JsonWriter& null();

    template <class T>
    JsonWriter& optional(const std::optional<T>& v) {
        if (!v) return null();
        return value(*v);
    }

    // key(k) followed by a value or null.
    template <class T>
    JsonWriter& member(std::string_view k, const T& v) {
        key(k);
        return value(v);
    }

    // The text so far; complete once every object and array is closed.
    // Pretty output ends with a newline.
    std::string str() const;

    static std::string escape(std::string_view s);  // with the quotes

private:
    JsonWriter& value(std::string_view s) { return string(s); }
    JsonWriter& value(const std::string& s) { return string(s); }
    JsonWriter& value(const char* s) { return string(s); }
    JsonWriter& value(std::uint64_t v) { return number(v); }
    JsonWriter& value(std::uint32_t v) { return number(static_cast<std::uint64_t>(v)); }
    JsonWriter& value(std::int64_t v) { return number(v); }
    JsonWriter& value(int v) { return number(static_cast<std::int64_t>(v)); }
    JsonWriter& value(double v) { return number(v); }
    JsonWriter& value(bool v) { return boolean(v); }
    template <class T>
    JsonWriter& value(const std::optional<T>& v) {
        return optional(v);
    }

    void before_value();
    void newline_indent();
    JsonWriter& open(char c);
    JsonWriter& close(char c);

    struct Level {
        bool any = false;  // has at least one element
    };
    bool pretty_;
    bool after_key_ = false;
    std::vector<Level> stack_;
    std::string out_;
};

}  // namespace rtrs_srv
