// A client's proxies as it uses them (parsed once, from a ProxyConfig), and what a request through one needs:
// the CONNECT request of a tunnel and the Proxy-Authorization value. Shared by the Client and the AsyncClient.
#pragma once

#include "beast_client/client.hpp"
#include "beast_client/proxy.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace beast_client::detail {

// One http:// proxy.
struct ProxyServer {
    std::string host;
    std::uint16_t port = 80;
    std::string authorization;  // "Basic <base64(user:password)>", or empty without credentials
    std::string where;          // host:port, for messages
};

// Parses "http://[user[:password]@]host[:port][/]" (no scheme: http://). Throws InvalidUrl, also for another
// scheme (https://, socks5://: not supported) and for a path, a query or a fragment.
ProxyServer parse_proxy_url(std::string_view url);

// NO_PROXY's rules (beast_client/proxy.hpp): whether `host` (a Url's: lower-case, an IPv6 address without
// brackets) is to be reached directly.
class NoProxy {
public:
    explicit NoProxy(std::string_view list = {});
    bool matches(std::string_view host) const;

private:
    struct Network {
        std::vector<unsigned char> address;  // 4 or 16 bytes
        unsigned prefix = 0;                 // bits compared
    };
    std::vector<Network> networks_;
    std::vector<std::string> domains_;  // lower-case, without a leading dot
    bool all_ = false;
};

// The proxies of a client.
class Proxies {
public:
    Proxies() = default;
    explicit Proxies(const ProxyConfig& config);  // throws InvalidUrl for a proxy URL it cannot use
    // The proxy of a request to u, or null: straight to the server.
    const ProxyServer* for_url(const Url& u) const {
        const auto& p = u.https ? https_ : http_;
        if (!p || no_.matches(u.host)) return nullptr;
        return &*p;
    }

private:
    std::optional<ProxyServer> http_, https_;
    NoProxy no_;
};

// The CONNECT request of a tunnel to u's host and port.
std::string connect_request(const Url& u, const ProxyServer& proxy);

// The request target of u for a proxy (absolute form): "http://host[:port]/path?query".
std::string absolute_target(const Url& u);

}  // namespace beast_client::detail
