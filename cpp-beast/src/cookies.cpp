// The cookie jar of send() / stream() (include/beast_client/cookies.hpp): RFC 6265 section 5, with the
// choices of reqwest's cookie store (see the header).
#include "beast_client/cookies.hpp"

#include "text.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/beast/core/string.hpp>

#include <algorithm>
#include <array>
#include <limits>

namespace beast_client {

using detail::ascii_lower;
using detail::is_digit;

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::string lower(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (const char c : s) out += ascii_lower(c);
    return out;
}

// seconds: about 31 million years
constexpr std::int64_t kForever = 1'000'000'000'000'000;

bool is_ip(const std::string& host) {
    boost::system::error_code ec;
    boost::asio::ip::make_address(host, ec);
    return !ec;
}

// RFC 6265 5.1.3
bool domain_match(const std::string& host, const std::string& domain) {
    if (host == domain) return true;
    return host.size() > domain.size() && host.compare(host.size() - domain.size(), domain.size(), domain) == 0 &&
           host[host.size() - domain.size() - 1] == '.' && !is_ip(host);
}

// the path of a request target (without its query)
std::string_view path_of(const Url& u) {
    std::string_view t = u.target;
    return t.substr(0, t.find('?'));
}

// RFC 6265 5.1.4
std::string default_path(std::string_view path) {
    if (path.empty() || path.front() != '/') return "/";
    const auto last = path.rfind('/');
    return last == 0 ? std::string("/") : std::string(path.substr(0, last));
}

bool path_match(std::string_view request_path, const std::string& cookie_path) {
    if (request_path == cookie_path) return true;
    return request_path.size() > cookie_path.size() && request_path.compare(0, cookie_path.size(), cookie_path) == 0 &&
           (cookie_path.back() == '/' || request_path[cookie_path.size()] == '/');
}

std::int64_t seconds_of(CookieJar::Time t) {
    return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

// Howard Hinnant's days_from_civil: days since 1970-01-01 of a proleptic Gregorian date
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool is_delimiter(unsigned char c) {
    return c == 0x09 || (c >= 0x20 && c <= 0x2f) || (c >= 0x3b && c <= 0x40) || (c >= 0x5b && c <= 0x60) ||
           (c >= 0x7b && c <= 0x7e);
}

// 1*max DIGIT at the start of `s`, then nothing or a non-digit: the number, or -1
int leading_number(std::string_view s, std::size_t min, std::size_t max) {
    std::size_t n = 0;
    while (n < s.size() && is_digit(s[n])) ++n;
    if (n < min || n > max) return -1;
    return std::stoi(std::string(s.substr(0, n)));
}

}  // namespace

std::optional<std::int64_t> parse_cookie_date(std::string_view text) {
    int hour = -1, minute = -1, second = -1, day = -1, month = -1, year = -1;
    static constexpr std::array<const char*, 12> months{"jan", "feb", "mar", "apr", "may", "jun",
                                                        "jul", "aug", "sep", "oct", "nov", "dec"};
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && is_delimiter(static_cast<unsigned char>(text[i]))) ++i;
        std::size_t j = i;
        while (j < text.size() && !is_delimiter(static_cast<unsigned char>(text[j]))) ++j;
        const std::string_view token = text.substr(i, j - i);
        i = j;
        if (token.empty()) continue;
        if (hour < 0) {  // hms-time = 1*2DIGIT ":" 1*2DIGIT ":" 1*2DIGIT ( non-digit *OCTET )
            int parts[3];
            std::string_view rest = token;
            bool ok = true;
            for (int k = 0; k < 3 && ok; ++k) {
                std::size_t n = 0;
                while (n < rest.size() && is_digit(rest[n])) ++n;
                ok = n >= 1 && n <= 2;
                if (!ok) break;
                parts[k] = std::stoi(std::string(rest.substr(0, n)));
                rest.remove_prefix(n);
                if (k < 2) {
                    ok = !rest.empty() && rest.front() == ':';
                    if (ok) rest.remove_prefix(1);
                } else {
                    ok = rest.empty() || !is_digit(rest.front());
                }
            }
            if (ok) {
                hour = parts[0], minute = parts[1], second = parts[2];
                continue;
            }
        }
        if (day < 0) {
            const int n = leading_number(token, 1, 2);
            if (n >= 0) {
                day = n;
                continue;
            }
        }
        if (month < 0 && token.size() >= 3) {
            const std::string m = lower(token.substr(0, 3));
            const auto it = std::find(months.begin(), months.end(), m);
            if (it != months.end()) {
                month = static_cast<int>(it - months.begin()) + 1;
                continue;
            }
        }
        if (year < 0) {
            const int n = leading_number(token, 2, 4);
            if (n >= 0) year = n;
        }
    }
    if (year >= 70 && year <= 99) year += 1900;
    if (year >= 0 && year <= 69) year += 2000;
    if (hour < 0 || day < 1 || day > 31 || month < 0 || year < 1601 || hour > 23 || minute > 59 || second > 59)
        return std::nullopt;
    static constexpr int month_days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (day > month_days[month - 1] || (month == 2 && day == 29 && !leap)) return std::nullopt;
    return days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 + hour * 3600 +
           minute * 60 + second;
}

void CookieJar::store(const Url& request, const Headers& response_headers, Time now) {
    for (const auto& [name, value] : response_headers)
        if (boost::beast::iequals(name, "set-cookie")) store_one(request, value, now);
}

void CookieJar::store_one(const Url& request, std::string_view set_cookie, Time now) {
    const auto semi = set_cookie.find(';');
    const std::string_view pair = set_cookie.substr(0, semi);
    const auto eq = pair.find('=');
    if (eq == std::string_view::npos) return;
    Cookie c;
    c.name = std::string(trim(pair.substr(0, eq)));
    c.value = std::string(trim(pair.substr(eq + 1)));
    if (c.name.empty()) return;
    std::optional<std::int64_t> max_age, expires;
    std::optional<std::string> domain, path;
    std::string_view attrs = semi == std::string_view::npos ? std::string_view{} : set_cookie.substr(semi + 1);
    while (!attrs.empty()) {
        const auto end = attrs.find(';');
        const std::string_view av = attrs.substr(0, end);
        attrs = end == std::string_view::npos ? std::string_view{} : attrs.substr(end + 1);
        const auto aeq = av.find('=');
        const std::string key = lower(trim(av.substr(0, aeq)));
        const std::string_view val = aeq == std::string_view::npos ? std::string_view{} : trim(av.substr(aeq + 1));
        if (key == "expires") {
            if (const auto t = parse_cookie_date(val)) expires = t;
        } else if (key == "max-age") {
            const bool negative = !val.empty() && val.front() == '-';
            const std::string_view digits = negative ? val.substr(1) : val;
            if (digits.empty() || !std::all_of(digits.begin(), digits.end(), is_digit)) continue;
            std::int64_t v = 0;  // saturating: a huge Max-Age is for ever
            for (const char d : digits) v = std::min<std::int64_t>(v * 10 + (d - '0'), kForever);
            max_age = negative ? 0 : v;
        } else if (key == "domain") {
            std::string_view d = val;
            if (!d.empty() && d.front() == '.') d.remove_prefix(1);
            if (!d.empty()) domain = lower(d);
        } else if (key == "path") {
            path = val.empty() || val.front() != '/' ? std::optional<std::string>() : std::string(val);
        } else if (key == "secure") {
            c.secure = true;
        }
    }
    if (c.secure && !request.https) return;  // RFC 6265bis 5.6: only a secure origin sets a Secure cookie
    if (domain) {
        if (!domain_match(request.host, *domain)) return;
        c.host_only = false;
        c.domain = *domain;
    } else {
        c.domain = request.host;
    }
    c.path = path ? *path : default_path(path_of(request));
    const std::int64_t now_s = seconds_of(now);
    if (max_age)
        c.expires = *max_age <= 0 ? std::numeric_limits<std::int64_t>::min() : now_s + *max_age;
    else if (expires)
        c.expires = expires;
    const bool expired = c.expires && *c.expires <= now_s;

    std::lock_guard<std::mutex> lock(mutex_);
    const auto same = std::find_if(cookies_.begin(), cookies_.end(), [&](const Cookie& o) {
        return o.name == c.name && o.domain == c.domain && o.path == c.path;
    });
    if (same != cookies_.end()) {
        if (expired) {
            cookies_.erase(same);
            return;
        }
        c.created = same->created;
        *same = std::move(c);
        return;
    }
    if (expired) return;
    c.created = next_++;
    cookies_.push_back(std::move(c));
}

std::string CookieJar::header_for(const Url& request, Time now) const {
    const std::int64_t now_s = seconds_of(now);
    const std::string_view path = path_of(request);
    std::vector<const Cookie*> out;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Cookie& c : cookies_) {
        if (c.expires && *c.expires <= now_s) continue;
        if (c.host_only ? request.host != c.domain : !domain_match(request.host, c.domain)) continue;
        if (!path_match(path, c.path) || (c.secure && !request.https)) continue;
        out.push_back(&c);
    }
    std::stable_sort(out.begin(), out.end(), [](const Cookie* a, const Cookie* b) {
        return a->path.size() != b->path.size() ? a->path.size() > b->path.size() : a->created < b->created;
    });
    std::string header;
    for (const Cookie* c : out) {
        if (!header.empty()) header += "; ";
        header += c->name;
        header += '=';
        header += c->value;
    }
    return header;
}

std::size_t CookieJar::size(Time now) const {
    const std::int64_t now_s = seconds_of(now);
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<std::size_t>(std::count_if(cookies_.begin(), cookies_.end(),
                                                  [&](const Cookie& c) { return !c.expires || *c.expires > now_s; }));
}

void CookieJar::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    cookies_.clear();
}

}  // namespace beast_client
