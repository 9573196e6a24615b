// URLs: parsing (parse_url), percent-encoding (encode_url, encode_component, add_query) and RFC 3986
// reference resolution (resolve_url, for redirects).
#include "beast_client/client.hpp"
#include "text.hpp"

#include <boost/asio/ip/address_v6.hpp>
#include <boost/system/error_code.hpp>

#include <algorithm>
#include <string>

namespace beast_client {

using detail::ascii_lower;
using detail::is_alpha;
using detail::is_digit;
using detail::printable;

Url parse_url(std::string_view url) {
    const auto bad = [&](const std::string& why) { return InvalidUrl("invalid URL '" + printable(url) + "': " + why); };
    if (url.empty()) throw InvalidUrl("invalid URL: empty string (expected http[s]://host[:port][/path])");
    for (char c : url) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f) throw bad("contains whitespace or control characters");
    }
    const auto sep = url.find("://");
    if (sep == std::string_view::npos) throw bad("missing scheme (expected http[s]://host[:port][/path])");
    std::string scheme;
    for (char c : url.substr(0, sep)) scheme += ascii_lower(c);
    if (scheme != "http" && scheme != "https") throw bad("unsupported scheme '" + scheme + "' (http:// or https://)");

    const std::string_view rest = url.substr(sep + 3);
    const auto end = rest.find_first_of("/?#");
    const std::string_view authority = rest.substr(0, end);
    std::string_view tail = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
    if (authority.find('@') != std::string_view::npos) throw bad("user info (user@host) is not supported");

    const bool https = scheme == "https";
    Url out{{}, static_cast<std::uint16_t>(https ? 443 : 80), {}, https};
    std::string_view host, port;
    bool has_port = false;
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) throw bad("unterminated '[' in the host");
        host = authority.substr(1, close - 1);
        const std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') throw bad("unexpected characters after ']'");
            has_port = true;
            port = after.substr(1);
        }
        boost::system::error_code ec;
        boost::asio::ip::make_address_v6(std::string(host), ec);
        if (host.empty() || ec) throw bad("invalid IPv6 address '" + std::string(host) + "'");
    } else {
        const auto colon = authority.find(':');
        host = authority.substr(0, colon);
        if (colon != std::string_view::npos) {
            has_port = true;
            port = authority.substr(colon + 1);
        }
        if (host.empty()) throw bad("missing host");
        for (char c : host)
            if (!(is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_'))
                throw bad("invalid character '" + printable(std::string_view(&c, 1)) + "' in the host");
    }
    if (has_port) {
        if (port.empty()) throw bad("empty port");
        if (port.size() > 5 || !std::all_of(port.begin(), port.end(), is_digit))
            throw bad("port must be a number from 1 to 65535");
        const unsigned long value = std::stoul(std::string(port));
        if (value < 1 || value > 65535) throw bad("port must be a number from 1 to 65535");
        out.port = static_cast<std::uint16_t>(value);
    }
    for (char c : host) out.host += ascii_lower(c);

    const auto hash = tail.find('#');
    if (hash != std::string_view::npos) tail = tail.substr(0, hash);
    if (tail.empty() || tail.front() != '/') out.target = "/";
    out.target += std::string(tail);
    return out;
}

void reject_control_characters(std::string_view url) {
    for (const char ch : url) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7f)
            throw InvalidUrl("invalid URL '" + printable(url) + "': contains a control character");
    }
}

namespace {

const char kHex[] = "0123456789ABCDEF";

void percent(std::string& out, unsigned char c) {
    out += '%';
    out += kHex[c >> 4];
    out += kHex[c & 15];
}

}  // namespace

std::string encode_url(std::string_view url) {
    // scheme://authority stays as it is (parse_url() checks it)
    const auto sep = url.find("://");
    std::size_t start = sep == std::string_view::npos ? 0 : sep + 3;
    start = std::min(url.find_first_of("/?#", start), url.size());
    std::string out(url.substr(0, start));
    out.reserve(url.size() + 16);
    bool query = false;
    for (std::size_t i = start; i < url.size(); ++i) {
        const auto c = static_cast<unsigned char>(url[i]);
        if (c == '#') break;  // the fragment is not sent
        if (c == '?') query = true;
        bool encode = c <= 0x20 || c >= 0x7f || c == '"' || c == '<' || c == '>';
        if (!query) encode = encode || c == '`' || c == '{' || c == '}';
        if (query) encode = encode || c == '\'';
        if (encode)
            percent(out, c);
        else
            out += static_cast<char>(c);
    }
    return out;
}

std::string encode_component(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (is_alpha(ch) || is_digit(ch) || c == '-' || c == '.' || c == '_' || c == '~')
            out += ch;
        else
            percent(out, c);
    }
    return out;
}

std::string add_query(std::string_view url, const std::vector<std::pair<std::string, std::string>>& params) {
    const auto hash = url.find('#');
    std::string out(url.substr(0, hash));
    if (params.empty()) return out;
    const auto q = out.find('?');
    char sep = q == std::string::npos ? '?' : (q + 1 == out.size() || out.back() == '&' ? '\0' : '&');
    for (const auto& [name, value] : params) {
        if (sep) out += sep;
        sep = '&';
        out += encode_component(name);
        out += '=';
        out += encode_component(value);
    }
    return out;
}

namespace {

// RFC 3986 5.2.4
std::string remove_dot_segments(std::string_view in) {
    std::string out;
    while (!in.empty()) {
        if (in.substr(0, 3) == "../") {
            in.remove_prefix(3);
        } else if (in.substr(0, 2) == "./") {
            in.remove_prefix(2);
        } else if (in.substr(0, 3) == "/./") {
            in.remove_prefix(2);
        } else if (in == "/.") {
            in = "/";
        } else if (in.substr(0, 4) == "/../" || in == "/..") {
            in = in.size() == 3 ? std::string_view("/") : in.substr(3);
            const auto slash = out.rfind('/');
            out.erase(slash == std::string::npos ? 0 : slash);
        } else if (in == "." || in == "..") {
            in = {};
        } else {
            const auto next = in.find('/', in.front() == '/' ? 1 : 0);
            const auto seg = in.substr(0, next);
            out.append(seg.data(), seg.size());
            in.remove_prefix(seg.size());
        }
    }
    return out;
}

bool has_scheme(std::string_view ref) {
    const auto colon = ref.find(':');
    if (colon == std::string_view::npos || colon == 0) return false;
    for (std::size_t i = 0; i < colon; ++i) {
        const char c = ref[i];
        if (!(is_alpha(c) || (i > 0 && (is_digit(c) || c == '+' || c == '-' || c == '.')))) return false;
    }
    return true;
}

}  // namespace

std::string resolve_url(std::string_view base, std::string_view reference) {
    // surrounding whitespace of a header value is not part of it
    while (!reference.empty() && (reference.front() == ' ' || reference.front() == '\t')) reference.remove_prefix(1);
    while (!reference.empty() && (reference.back() == ' ' || reference.back() == '\t')) reference.remove_suffix(1);
    if (has_scheme(reference)) {
        parse_url(encode_url(reference));  // only http(s) (throws InvalidUrl)
        return std::string(reference);
    }
    parse_url(base);
    const auto sep = base.find("://");
    const std::string_view scheme = base.substr(0, sep);  // without ':'
    const auto auth_end = std::min(base.find_first_of("/?#", sep + 3), base.size());
    const std::string_view origin = base.substr(0, auth_end);  // scheme://authority
    std::string_view path_query = base.substr(auth_end);
    path_query = path_query.substr(0, path_query.find('#'));
    const auto q = path_query.find('?');
    const std::string_view base_path = path_query.substr(0, q);
    const std::string_view base_query = q == std::string_view::npos ? std::string_view{} : path_query.substr(q);

    if (reference.substr(0, 2) == "//") return std::string(scheme) + ":" + std::string(reference);
    const std::string_view ref = reference.substr(0, reference.find('#'));
    const auto rq = ref.find('?');
    const std::string_view ref_path = ref.substr(0, rq);
    const std::string_view ref_query = rq == std::string_view::npos ? std::string_view{} : ref.substr(rq);
    std::string path;
    if (ref_path.empty()) {
        path = base_path.empty() ? "/" : std::string(base_path);
        return std::string(origin) + path + std::string(rq == std::string_view::npos ? base_query : ref_query);
    }
    if (ref_path.front() == '/') {
        path = remove_dot_segments(ref_path);
    } else {  // merge (5.2.3)
        const std::string base_dir =
            base_path.empty() ? std::string("/") : std::string(base_path.substr(0, base_path.rfind('/') + 1));
        path = remove_dot_segments(base_dir + std::string(ref_path));
    }
    if (path.empty() || path.front() != '/') path.insert(path.begin(), '/');
    return std::string(origin) + path + std::string(ref_query);
}

}  // namespace beast_client
