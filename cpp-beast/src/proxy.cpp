// ProxyConfig (the environment, proxy=) and the proxies a client uses (proxy.hpp).
#include "proxy.hpp"

#include "aliases.hpp"
#include "text.hpp"

#include <boost/asio/ip/address.hpp>

#include <algorithm>
#include <cstdlib>
#include <utility>

namespace beast_client {

namespace {

const char* env(const char* upper, const char* lower) {
    if (const char* v = std::getenv(upper)) return v;
    return std::getenv(lower);
}

}  // namespace

ProxyConfig ProxyConfig::all(std::string url) {
    ProxyConfig c;
    c.http = url;
    c.https = std::move(url);
    return c;
}

ProxyConfig ProxyConfig::from_environment() {
    ProxyConfig c;
    if (std::getenv("REQUEST_METHOD")) return c;  // CGI: HTTP_PROXY may be a request's header (httpoxy)
    const char* all = env("ALL_PROXY", "all_proxy");
    const char* http = env("HTTP_PROXY", "http_proxy");
    const char* https = env("HTTPS_PROXY", "https_proxy");
    const char* no = env("NO_PROXY", "no_proxy");
    // an empty variable is no proxy (reqwest: an empty value does not parse); ALL_PROXY fills in for either
    const auto pick = [all](const char* v) { return std::string(v && *v ? v : (all ? all : "")); };
    c.http = pick(http);
    c.https = pick(https);
    if (no) c.no_proxy = no;
    return c;
}

namespace detail {

namespace {

std::string percent_decode(std::string_view s) {
    const auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        c = ascii_lower(c);
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
            out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

std::string base64(std::string_view in) {
    static const char* const table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    std::size_t i = 0;
    for (; i + 2 < in.size(); i += 3) {
        const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                           static_cast<unsigned char>(in[i + 2]);
        for (int shift : {18, 12, 6, 0}) out += table[(v >> shift) & 63];
    }
    if (i + 1 == in.size()) {
        const unsigned v = static_cast<unsigned char>(in[i]) << 16;
        out += table[(v >> 18) & 63];
        out += table[(v >> 12) & 63];
        out += "==";
    } else if (i + 2 == in.size()) {
        const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
        out += table[(v >> 18) & 63];
        out += table[(v >> 12) & 63];
        out += table[(v >> 6) & 63];
        out += '=';
    }
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

}  // namespace

ProxyServer parse_proxy_url(std::string_view url) {
    const auto bad = [&](const std::string& why) {
        // the credentials stay out of the message
        std::string shown(url);
        const auto at = shown.rfind('@');
        if (at != std::string::npos) {
            const auto sep = shown.find("://");
            shown.replace(sep == std::string::npos ? 0 : sep + 3, at - (sep == std::string::npos ? 0 : sep + 3), "***");
        }
        return InvalidUrl("invalid proxy URL '" + printable(shown) + "': " + why);
    };
    std::string_view rest = url;
    const auto sep = url.find("://");
    if (sep != std::string_view::npos) {
        std::string scheme;
        for (char c : url.substr(0, sep)) scheme += ascii_lower(c);
        if (scheme != "http")
            throw bad("the '" + scheme + "' scheme is not supported: beast_client speaks to http:// proxies only");
        rest = url.substr(sep + 3);
    }
    const auto slash = rest.find_first_of("/?#");
    if (slash != std::string_view::npos) {
        if (rest.substr(slash) != "/") throw bad("a proxy URL has no path, query or fragment");
        rest = rest.substr(0, slash);
    }
    ProxyServer p;
    const auto at = rest.rfind('@');
    if (at != std::string_view::npos) {
        const std::string_view info = rest.substr(0, at);
        const auto colon = info.find(':');
        const std::string user = percent_decode(info.substr(0, colon));
        const std::string password = colon == std::string_view::npos ? "" : percent_decode(info.substr(colon + 1));
        p.authorization = "Basic " + base64(user + ":" + password);
        rest = rest.substr(at + 1);
    }
    Url u;
    try {
        u = parse_url("http://" + std::string(rest) + "/");
    } catch (const InvalidUrl& e) {
        throw bad(e.what());
    }
    p.host = u.host;
    p.port = u.port;
    p.where = host_port(u.host, u.port);
    return p;
}

NoProxy::NoProxy(std::string_view list) {
    while (!list.empty()) {
        const auto comma = list.find(',');
        const std::string_view entry = trim(list.substr(0, comma));
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        if (entry.empty()) continue;
        if (entry == "*") {
            all_ = true;
            continue;
        }
        // an address, or an address/prefix: a network
        const auto slash = entry.find('/');
        boost::system::error_code ec;
        const auto address = net::ip::make_address(std::string(entry.substr(0, slash)), ec);
        if (!ec) {
            Network n;
            if (address.is_v4()) {
                const auto b = address.to_v4().to_bytes();
                n.address.assign(b.begin(), b.end());
            } else {
                const auto b = address.to_v6().to_bytes();
                n.address.assign(b.begin(), b.end());
            }
            n.prefix = static_cast<unsigned>(n.address.size() * 8);
            if (slash != std::string_view::npos) {
                const std::string_view bits = entry.substr(slash + 1);
                if (bits.empty() || bits.size() > 3 || !std::all_of(bits.begin(), bits.end(), is_digit)) {
                    domains_.emplace_back(entry);  // not a network: never matches a host, as in reqwest
                    continue;
                }
                const unsigned prefix = static_cast<unsigned>(std::stoul(std::string(bits)));
                if (prefix > n.prefix) {
                    domains_.emplace_back(entry);
                    continue;
                }
                n.prefix = prefix;
            }
            networks_.push_back(std::move(n));
            continue;
        }
        std::string domain;
        for (char c : entry) domain += ascii_lower(c);
        if (domain.front() == '.') domain.erase(0, 1);
        if (!domain.empty()) domains_.push_back(std::move(domain));
    }
}

bool NoProxy::matches(std::string_view host) const {
    if (all_) return true;
    boost::system::error_code ec;
    const auto address = net::ip::make_address(std::string(host), ec);
    if (!ec) {
        std::vector<unsigned char> bytes;
        if (address.is_v4()) {
            const auto b = address.to_v4().to_bytes();
            bytes.assign(b.begin(), b.end());
        } else {
            const auto b = address.to_v6().to_bytes();
            bytes.assign(b.begin(), b.end());
        }
        for (const auto& n : networks_) {
            if (n.address.size() != bytes.size()) continue;
            unsigned bit = 0;
            bool same = true;
            for (; bit + 8 <= n.prefix && same; bit += 8) same = n.address[bit / 8] == bytes[bit / 8];
            if (same && bit < n.prefix) {
                const unsigned mask = (0xff00u >> (n.prefix - bit)) & 0xffu;
                same = (n.address[bit / 8] & mask) == (bytes[bit / 8] & mask);
            }
            if (same) return true;
        }
        return false;
    }
    for (const auto& d : domains_) {
        if (host.size() == d.size() && host == d) return true;
        if (host.size() > d.size() && host.substr(host.size() - d.size()) == d &&
            host[host.size() - d.size() - 1] == '.')
            return true;
    }
    return false;
}

Proxies::Proxies(const ProxyConfig& config) : no_(config.no_proxy) {
    if (!config.http.empty()) http_ = parse_proxy_url(config.http);
    if (!config.https.empty()) https_ = parse_proxy_url(config.https);
}

std::string connect_request(const Url& u, const ProxyServer& proxy) {
    const std::string authority = host_port(u.host, u.port);
    std::string out = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
    if (!proxy.authorization.empty()) out += "Proxy-Authorization: " + proxy.authorization + "\r\n";
    out += "\r\n";
    return out;
}

std::string absolute_target(const Url& u) {
    const bool v6 = u.host.find(':') != std::string::npos;
    std::string out = u.https ? "https://" : "http://";
    out += v6 ? "[" + u.host + "]" : u.host;
    if (u.port != (u.https ? 443 : 80)) out += ":" + std::to_string(u.port);
    return out + u.target;
}

}  // namespace detail

}  // namespace beast_client
