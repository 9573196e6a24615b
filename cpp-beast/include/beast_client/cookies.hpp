// beast_client::CookieJar: the cookies of send() / stream() (RequestOptions::cookies), RFC 6265's storage and
// retrieval rules as reqwest's cookie store (the Rust `cookie_store` crate) applies them, so that both of
// clientbench's Python bindings behave the same:
// - no Domain attribute: host-only (sent to that host only); Domain=example.org (a leading dot ignored, case
//   too): that host and its subdomains, ignored unless the request's host is it or one of them; an IP address
//   only ever gets host-only cookies (a Domain other than the address itself is ignored); ports do not matter;
// - a Path that starts with '/' is the cookie's, otherwise the default path (the request path up to its last
//   '/'); a cookie goes to its path and below ("/acc" matches "/acc" and "/acc/x", not "/accounts");
// - Secure cookies are sent only over https, and a Set-Cookie with Secure that arrives over http is ignored
//   (RFC 6265bis 5.6);
// - Max-Age (an integer; <= 0 is the earliest time) wins over Expires (RFC 6265 5.1.1's date algorithm); an
//   expired cookie deletes the stored one of the same name, domain and path; without either, a cookie lasts as
//   long as the jar; a new cookie of the same name, domain and path replaces the old one;
// - a Set-Cookie without '=' or with an empty name is ignored. There is no public-suffix list.
// The Cookie header lists longer paths first, then older cookies first. Thread-safe (one mutex).
#pragma once

#include "beast_client/client.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace beast_client {

class CookieJar {
public:
    using Time = std::chrono::system_clock::time_point;

    /// Stores the Set-Cookie fields among `response_headers` (names compared case-insensitively) of a
    /// response to `request` (the URL as sent); `now` is the time they arrived.
    void store(const Url& request, const Headers& response_headers, Time now = std::chrono::system_clock::now());
    /// Stores one Set-Cookie field value received from `request`.
    void store_one(const Url& request, std::string_view set_cookie, Time now = std::chrono::system_clock::now());
    /// The Cookie header value for a request to `request` ("name=value; name2=value2"); empty: none applies.
    std::string header_for(const Url& request, Time now = std::chrono::system_clock::now()) const;
    /// The cookies stored and not expired at `now`.
    std::size_t size(Time now = std::chrono::system_clock::now()) const;
    void clear();

private:
    struct Cookie {
        std::string name, value, domain, path;
        bool host_only = true;
        bool secure = false;
        std::optional<std::int64_t> expires;  // seconds since the Unix epoch; none: until the jar goes
        std::uint64_t created = 0;            // order of creation (kept when a cookie is replaced)
    };
    mutable std::mutex mutex_;
    std::vector<Cookie> cookies_;
    std::uint64_t next_ = 0;
};

/// RFC 6265 5.1.1: the date of an Expires attribute (every format servers send: RFC 1123, RFC 850, asctime)
/// in seconds since the Unix epoch (UTC); nullopt when it is not a date.
std::optional<std::int64_t> parse_cookie_date(std::string_view text);

}  // namespace beast_client
