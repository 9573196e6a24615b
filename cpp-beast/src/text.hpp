// Character classes and text helpers shared by the library's sources (no Boost, no OpenSSL).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace beast_client::detail {

inline char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// RFC 9110 token characters (methods, header names)
inline bool is_tchar(char c) {
    if (is_alpha(c) || is_digit(c)) return true;
    // clang-format off
    switch (c) {
        case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-':
        case '.': case '^': case '_': case '`': case '|': case '~':
            return true;
        default:
            return false;
    }
    // clang-format on
}

inline bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar); }

// For error messages: the input with control / non-ASCII bytes escaped, cut at 200 characters.
inline std::string printable(std::string_view s) {
    std::string out;
    const std::size_t limit = 200;
    for (std::size_t i = 0; i < s.size() && i < limit; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c >= 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (s.size() > limit) out += "...";
    return out;
}

inline std::string host_port(const std::string& host, std::uint16_t port) {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

inline std::string seconds_text(std::chrono::nanoseconds d) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g s", std::chrono::duration<double>(d).count());
    return buf;
}

}  // namespace beast_client::detail
