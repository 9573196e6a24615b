#include "plan.hpp"

#include "aliases.hpp"
#include "beast_client/cookies.hpp"
#include "decode.hpp"
#include "response.hpp"
#include "text.hpp"

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/version.hpp>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace beast_client {

namespace detail {

namespace {

void check_header(const std::string& name, const std::string& value) {
    if (!is_token(name)) throw std::invalid_argument("invalid header name '" + printable(name) + "'");
    // RFC 9110 5.5: field values are visible characters, SP, HTAB and obs-text; no other controls
    for (const char ch : value) {
        const auto c = static_cast<unsigned char>(ch);
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            throw std::invalid_argument("invalid value for header '" + name + "' (contains a control character)");
    }
    // the message framing is derived from the body: a caller's framing header would desync it
    if (beast::iequals(name, "content-length") || beast::iequals(name, "transfer-encoding"))
        throw std::invalid_argument("header '" + name + "' is set by the client from the body; do not pass it");
}

std::string_view trim_ows(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool is_redirect(int status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

const std::string* find_header(const Headers& headers, std::string_view name) {
    for (const auto& [n, v] : headers)
        if (beast::iequals(n, bsv(name))) return &v;
    return nullptr;
}

void erase_header(Headers& headers, std::string_view name) {
    headers.erase(std::remove_if(headers.begin(), headers.end(),
                                 [&](const auto& h) { return beast::iequals(h.first, bsv(name)); }),
                  headers.end());
}

// make_request()'s message: method, target, headers, Host, User-Agent, Proxy-Authorization; no payload yet.
http::request<http::string_body> message(std::string_view method, const Url& u, const Headers& headers,
                                         const std::string& target, const ProxyServer* proxy) {
    if (!is_token(method)) throw std::invalid_argument("invalid HTTP method '" + printable(method) + "'");
    http::request<http::string_body> req;
    const auto verb = http::string_to_verb(bsv(method));
    if (verb == http::verb::unknown)
        req.method_string(bsv(method));
    else
        req.method(verb);
    req.target(target);
    req.version(11);
    for (const auto& [name, value] : headers) {
        check_header(name, value);
        req.insert(name, value);
    }
    if (req.find(http::field::host) == req.end())
        req.set(http::field::host, u.port == (u.https ? 443 : 80)
                                       ? (u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host)
                                       : host_port(u.host, u.port));
    if (req.find(http::field::user_agent) == req.end())
        req.set(http::field::user_agent, std::string("beast-client/") + version + " " + BOOST_BEAST_VERSION_STRING);
    if (proxy && !proxy->authorization.empty() && req.find(http::field::proxy_authorization) == req.end())
        req.set(http::field::proxy_authorization, proxy->authorization);
    return req;
}

// What Beast's serializer writes for this message's head, and its body with Content-Length.
Wire serialized(const http::request<http::string_body>& req, const std::string& target) {
    Wire w;
    w.method = str(req.method_string());
    w.head = req.method() == http::verb::head;
    w.idempotent = is_idempotent(req.method());
    std::string& out = w.bytes;
    out.reserve(256 + req.body().size());
    out.append(w.method).append(" ").append(target).append(" HTTP/1.1\r\n");
    for (const auto& field : req)
        out.append(field.name_string().data(), field.name_string().size())
            .append(": ")
            .append(field.value().data(), field.value().size())
            .append("\r\n");
    out.append("\r\n").append(req.body());
    return w;
}

}  // namespace

Wire make_request(std::string_view method, const Url& u, const Headers& headers, std::string_view body, bool chunked,
                  const ProxyServer* proxy) {
    const std::string target = proxy ? absolute_target(u) : u.target;
    auto req = message(method, u, headers, target, proxy);
    if (chunked) {
        req.chunked(true);
    } else {
        req.body().assign(body.data(), body.size());
        req.prepare_payload();
    }
    return serialized(req, target);
}

Wire make_request_head(std::string_view method, const Url& u, std::uint64_t body_length) {
    auto req = message(method, u, {}, u.target, nullptr);
    if (body_length > 0)
        req.content_length(body_length);
    else
        req.prepare_payload();  // as make_request() with an empty body
    return serialized(req, u.target);
}

std::string chunk_size_line(std::size_t size) {
    char line[32];
    std::snprintf(line, sizeof line, "%zx\r\n", size);
    return line;
}

RequestPlan::RequestPlan(std::string method, std::string_view url, Headers headers, std::string_view body,
                         const RequestOptions& o, bool streamed)
    : method_(std::move(method)),
      headers_(std::move(headers)),
      body_(body),
      upload_(bool(o.upload) || streamed),
      o_(o) {
    reject_control_characters(url);
    if (upload_ && !body.empty()) throw std::invalid_argument("a request has a body or an upload, not both");
    if (o_.decompress && !find_header(headers_, "accept-encoding"))
        headers_.emplace_back("Accept-Encoding", accept_encoding());
    if (!find_header(headers_, "user-agent"))
        headers_.emplace_back("User-Agent",
                              o_.user_agent.empty() ? std::string("beast-client/") + version : o_.user_agent);
    set_url(encode_url(url));
}

void RequestPlan::set_url(std::string url) {
    u_ = parse_url(url);
    where_ = host_port(u_.host, u_.port);
    current_ = std::move(url);
}

Wire RequestPlan::wire(const Proxies& proxies) const {
    const ProxyServer* proxy = u_.https ? nullptr : proxies.for_url(u_);  // https goes through a tunnel
    std::string cookie;  // the jar's, unless the request has its own Cookie header
    if (o_.cookies && !find_header(headers_, "cookie")) cookie = o_.cookies->header_for(u_);
    if (cookie.empty()) return make_request(method_, u_, headers_, body_, upload_, proxy);
    Headers with = headers_;
    with.emplace_back("Cookie", std::move(cookie));
    return make_request(method_, u_, with, body_, upload_, proxy);
}

bool RequestPlan::follow(int status, const Headers& response_headers) {
    if (o_.cookies) o_.cookies->store(u_, response_headers);
    if (!o_.follow_redirects || !is_redirect(status)) return false;
    const std::string* location = find_header(response_headers, "location");
    if (!location) return false;  // a 3xx without Location is the final response
    const bool keeps_body = status == 307 || status == 308;
    if (keeps_body && upload_) return false;  // a streamed body cannot be sent twice: the 3xx is the answer
    if (hops_ >= o_.max_redirects)
        throw TooManyRedirects("more than " + std::to_string(o_.max_redirects) + " redirects; the last URL was " +
                               current_ + " (redirecting to " + printable(*location) + ")");
    std::string next;
    Url nu;
    try {
        const std::string_view reference = trim_ows(*location);
        reject_control_characters(reference);
        next = encode_url(resolve_url(current_, reference));
        nu = parse_url(next);
    } catch (const InvalidUrl& e) {
        throw ProtocolError("redirect from " + current_ + " to an unsupported or invalid URL: " + e.what());
    }
    ++hops_;
    if (!keeps_body && method_ != "HEAD") {
        method_ = "GET";
        body_.clear();
        upload_ = false;
        erase_header(headers_, "content-type");
    }
    if (nu.https != u_.https || nu.host != u_.host || nu.port != u_.port) {
        erase_header(headers_, "authorization");
        erase_header(headers_, "cookie");
        erase_header(headers_, "proxy-authorization");
    }
    erase_header(headers_, "host");
    set_url(std::move(next));
    return true;
}

}  // namespace detail

void validate_headers(const Headers& headers) {
    for (const auto& [name, value] : headers) detail::check_header(name, value);
}

}  // namespace beast_client
