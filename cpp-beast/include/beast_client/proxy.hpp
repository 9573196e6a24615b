// beast_client::ProxyConfig: the HTTP proxy a Client's (or an AsyncClient's) connections go through. An http://
// URL is requested from the proxy in absolute form (`GET http://host:port/path HTTP/1.1`, RFC 9112 3.2.2), on a
// connection to the proxy; an https:// URL goes through a tunnel (`CONNECT host:port`, RFC 9110 9.3.6) in which
// the TLS handshake is the server's, as without a proxy. The proxy's credentials (its URL's user info) go in a
// Proxy-Authorization: Basic header to the proxy only (on the CONNECT request, or on each absolute-form request),
// never through a tunnel. Only http:// proxies are supported (no TLS to the proxy, no SOCKS).
//
// The environment is read as reqwest (hyper-util's proxy matcher) reads it, so that clientbench's two Python
// bindings route alike: HTTP_PROXY then http_proxy for http:// URLs, HTTPS_PROXY then https_proxy for https://
// ones, ALL_PROXY then all_proxy for either when that one is unset; NO_PROXY then no_proxy. Nothing is read when
// REQUEST_METHOD is set (a CGI script, where HTTP_PROXY may come from a request's `Proxy:` header: "httpoxy").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace beast_client {

struct ProxyConfig {
    /// The proxy URL of http:// requests, and of https:// ones: "http://[user[:password]@]host[:port]" (a
    /// missing scheme is http://, a missing port 80; the user and password are percent-decoded). Empty: direct.
    std::string http;
    std::string https;
    /// Where to go direct (NO_PROXY): comma-separated entries; an IP address or a CIDR block (`10.0.0.0/8`,
    /// `::1`) matches those addresses, `*` every host, any other entry a host name and its subdomains
    /// (`example.org` and `.example.org` alike: example.org, www.example.org; not notexample.org), case
    /// insensitively. Ports are not compared.
    std::string no_proxy;

    bool empty() const noexcept { return http.empty() && https.empty(); }

    /// One proxy for every URL (no NO_PROXY): Python's `proxy=`.
    static ProxyConfig all(std::string url);
    /// What the environment says (see above); empty when it names no proxy.
    static ProxyConfig from_environment();
};

}  // namespace beast_client
