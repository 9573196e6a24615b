// How requests go on the wire (make_request), and send()'s and stream()'s request across its redirects
// (RequestPlan): what each hop sends, and where a redirect leads. Shared by the Client (exchange.cpp) and the
// AsyncClient (async_exchange.cpp).
#pragma once

#include "beast_client/client.hpp"
#include "proxy.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace beast_client::detail {

// A request as it goes on the wire, serialized once (head and body), and what the exchange needs to know of it.
struct Wire {
    std::string bytes;        // the head, and the body unless it is streamed
    std::string method;       // for messages
    bool head = false;        // HEAD: the response has no body
    bool idempotent = false;  // may be sent again after a connection failure (RFC 9110 9.2.2)
};

// The request as sent: method, target, the caller's headers (checked), Host and User-Agent unless given, the
// body with Content-Length, or (`chunked`) Transfer-Encoding: chunked and no body yet (the pieces follow, framed
// by chunk_size_line()). Through an http:// `proxy`: the target in absolute form and the proxy's
// Proxy-Authorization. Throws std::invalid_argument for a method or header that is not valid HTTP.
Wire make_request(std::string_view method, const Url& u, const Headers& headers, std::string_view body,
                  bool chunked = false, const ProxyServer* proxy = nullptr);

// make_request()'s head for a body of `body_length` bytes sent apart (Content-Length), without headers of the
// caller's or a proxy: what AsyncClient::request() sends before its body, for a LoopConnection.
Wire make_request_head(std::string_view method, const Url& u, std::uint64_t body_length);

// A chunk's size line in a chunked body ("<hex size>\r\n"), before its data and CRLF; the last chunk's is "0\r\n".
std::string chunk_size_line(std::size_t size);

class RequestPlan {
public:
    // Checks and prepares the request: InvalidUrl for a control character in `url` (before anything is sent),
    // std::invalid_argument for a bad method or header; the Accept-Encoding (o.decompress) and User-Agent
    // defaults added. The body is o.upload when set, or with `streamed` an AsyncBodySource the caller holds
    // (either way `body` must be empty).
    RequestPlan(std::string method, std::string_view url, Headers headers, std::string_view body,
                const RequestOptions& o, bool streamed = false);

    const std::string& url() const noexcept { return current_; }  // this hop's URL (encoded)
    const Url& target() const noexcept { return u_; }
    const std::string& where() const noexcept { return where_; }  // host:port
    // This hop's request (with the jar's cookies for it), and its body source when it is streamed.
    Wire wire(const Proxies& proxies) const;
    const BodySource* upload() const noexcept { return upload_ ? &o_.upload : nullptr; }
    // This hop's body is streamed (a redirect to a GET ends that).
    bool streamed() const noexcept { return upload_; }
    const RequestOptions& options() const noexcept { return o_; }

    // After a hop's response head: stores its cookies; true when the response is a redirect to follow, the plan
    // then being the next hop's (the caller reads and drops the redirect's body first). Throws
    // TooManyRedirects, and ProtocolError for a Location that cannot be followed.
    bool follow(int status, const Headers& response_headers);

private:
    void set_url(std::string url);

    std::string method_;
    Headers headers_;
    std::string body_;
    bool upload_ = false;  // the body is o_.upload (until a redirect turns the request into a GET)
    RequestOptions o_;
    std::string current_;
    Url u_;
    std::string where_;
    int hops_ = 0;
};

}  // namespace beast_client::detail
