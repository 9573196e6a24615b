// One request on a connection of the pool: writing it, reading the response (or its header), the one retry
// on a kept-alive connection the server closed, and the redirects of send() / stream().
#include "beast_client/cookies.hpp"
#include "client_impl.hpp"
#include "io.hpp"
#include "text.hpp"

#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/version.hpp>

#include <stdexcept>
#include <utility>

namespace beast_client {

using namespace detail;

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

}  // namespace

Wire make_request(std::string_view method, const Url& u, const Headers& headers, std::string_view body) {
    if (!is_token(method)) throw std::invalid_argument("invalid HTTP method '" + printable(method) + "'");
    http::request<http::string_body> req;
    const auto verb = http::string_to_verb(bsv(method));
    if (verb == http::verb::unknown)
        req.method_string(bsv(method));
    else
        req.method(verb);
    req.target(u.target);
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
    req.body().assign(body.data(), body.size());
    req.prepare_payload();
    // what Beast's serializer writes for this message (its framing is Content-Length: never chunked)
    Wire w;
    w.method = str(req.method_string());
    w.head = req.method() == http::verb::head;
    w.idempotent = is_idempotent(req.method());
    std::string& out = w.bytes;
    out.reserve(256 + req.body().size());
    out.append(w.method).append(" ").append(u.target).append(" HTTP/1.1\r\n");
    for (const auto& field : req)
        out.append(field.name_string().data(), field.name_string().size())
            .append(": ")
            .append(field.value().data(), field.value().size())
            .append("\r\n");
    out.append("\r\n").append(req.body());
    return w;
}

}  // namespace detail

void validate_headers(const Headers& headers) {
    for (const auto& [name, value] : headers) detail::check_header(name, value);
}

std::shared_ptr<const Client::Impl::Target> Client::Impl::target(std::string_view url) {
    {
        std::lock_guard<std::mutex> lock(target_mutex);
        if (get_target && get_target->url == url) return get_target;
    }
    auto t = std::make_shared<Target>();  // built first: a URL that fails leaves the previous one
    t->u = parse_url(url);
    t->where = host_port(t->u.host, t->u.port);
    t->wire = make_request("GET", t->u, {}, {});
    t->url.assign(url.data(), url.size());
    std::lock_guard<std::mutex> lock(target_mutex);
    get_target = t;
    return t;
}

namespace {

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

Headers with_cookie(const Headers& headers, std::string cookie) {
    Headers out = headers;
    out.emplace_back("Cookie", std::move(cookie));
    return out;
}

void erase_header(Headers& headers, std::string_view name) {
    headers.erase(std::remove_if(headers.begin(), headers.end(),
                                 [&](const auto& h) { return beast::iequals(h.first, bsv(name)); }),
                  headers.end());
}

}  // namespace

// A failed read of the response: closes the connection and throws what the error means.
void Client::Impl::read_failed(Connection& c, const ResponseReader& parser, const beast::error_code& ec,
                               const std::string& where) {
    const bool tls_alert_reply = !c.https && is_http_error(ec) && c.buffer.size() >= 3 &&
                                 static_cast<const unsigned char*>(c.buffer.data().data())[0] == 0x15 &&
                                 static_cast<const unsigned char*>(c.buffer.data().data())[1] == 0x03;
    drop(c);
    if (ec == http::error::body_limit)  // the body as received, or decoded
        throw BodyTooLarge("the body of the response from " + where + " is larger than " +
                           (parser.kept_limit ? "max_body_size (" : "the limit (") +
                           std::to_string(parser.decoded_limit) + " bytes)");
    if (!parser.decode_error.empty())
        throw ProtocolError("cannot decode the response body from " + where + ": " + parser.decode_error);
    if (tls_alert_reply)  // an http:// URL to a TLS server, which answered with a TLS alert
        throw ProtocolError("malformed HTTP response from " + where + ": " + ec.message() +
                            " (the server answered with a TLS alert: is it an https:// server?)");
    fail(ec, Phase::read, where);
}

// After the whole response: Connection: close, HTTP/1.0, a body delimited by EOF, or a protocol switch
// we did not ask for end the connection.
void Client::Impl::finished(Connection& c, const ResponseReader& parser) {
    if (!parser.keep_alive() || parser.status == 101) drop(c);
}

// Sends the request and reads the response (or, spec.header_only, its header) on the open connection.
// Returns true when the request is to be sent again on a new connection (see roundtrip()).
template <class Io>
bool Client::Impl::exchange(Connection& c, Io& io, const Wire& req, std::optional<ResponseReader>& reader,
                            const ReadSpec& spec, Deadline& d, const std::string& where, bool may_retry) {
    beast::error_code ec;
    const std::size_t sent = io.write(req.bytes, ec);  // bytes handed to the kernel (to the TLS layer)
    if (ec) {
        drop(c);
        if (may_retry && is_stale_connection(ec) && (req.idempotent || sent == 0)) return true;
        fail(ec, Phase::write, where);
    }

    bool interim = false;  // a 1xx interim response was received: the response has started
    for (;;) {
        ResponseReader& parser = reader.emplace(spec.keep, spec.keep);
        parser.header_limit(header_limit);
        parser.body_limit(spec.body_limit);
        if (spec.keep) {
            parser.decoded_limit = spec.kept_limit ? *spec.kept_limit : spec.body_limit;
            parser.kept_limit = spec.kept_limit;
        }
        parser.chunk_limit = spec.chunk_limit;
        parser.decompress = spec.decompress;
        if (req.head) parser.skip(true);
        if (d.read_limit.count() > 0) parser.progress = &d.progress;
        d.start_read();
        io.read(parser, spec.header_only, ec);
        d.reading = false;
        if (ec == ssl::error::stream_truncated) {
            // the TLS peer closed without close_notify: what Beast does for a TCP EOF (a body delimited
            // by the end of the connection is complete; anything else was cut short)
            if (parser.got_some()) {
                parser.put_eof(ec);
                if (!ec) {
                    drop(c);
                    return false;
                }
            } else {
                ec = http::error::end_of_stream;
            }
        }
        if (ec) {
            const bool started = interim || parser.got_some();
            if (may_retry && !started && is_stale_connection(ec)) {
                drop(c);
                if (req.idempotent) return true;
                throw ConnectionError("connection to " + where + " closed by the server before a response was " +
                                          "received (" + req.method +
                                          " is not idempotent: not re-sent, the server may have received it)",
                                      ConnectionError::Kind::reset);
            }
            read_failed(c, parser, ec, where);
        }
        // 1xx interim responses (100 Continue, 103 Early Hints) have no body: the final one follows
        if (parser.status >= 100 && parser.status < 200 && parser.status != 101) {
            interim = true;
            continue;
        }
        break;
    }
    if (reader->is_done()) finished(c, *reader);
    return false;
}

// One request/response exchange on the pool's connection to u, returned (out of the pool) afterwards.
// acquire() has already replaced a kept-alive connection found closed. If the server closes a re-used
// connection after that check (a race with its idle timeout), the request is sent again once, on a new
// connection, only when that is harmless: no byte of the response had arrived, and either no byte of the
// request had been sent or the method is idempotent (a repeat has the effect of one request, RFC 9110
// 9.2.2). `reader` is (re)created for each attempt; after a failure it holds what was received.
std::unique_ptr<Client::Impl::Connection> Client::Impl::roundtrip(const Url& u, const Wire& req,
                                                                  std::optional<ResponseReader>& reader,
                                                                  const ReadSpec& spec, Deadline& d,
                                                                  const CancelCheck& cancel, const std::string& where) {
    for (int attempt = 0;; ++attempt) {
        reader.reset();
        bool reused = false;
        auto c = acquire(u, d, cancel, where, reused);
        const bool may_retry = reused && attempt == 0;
        bool retry = false;
        try {
            if (c->https) {
                AsyncIo io(*this, *c, d, cancel, where);
                retry = exchange(*c, io, req, reader, spec, d, where, may_retry);
            } else {
                BlockingIo io(*this, *c, d, cancel, where);
                retry = exchange(*c, io, req, reader, spec, d, where, may_retry);
            }
        } catch (...) {
            drop(*c);
            release(std::move(c));
            throw;
        }
        if (!retry) return c;
        release(std::move(c));
    }
}

// Reads (more of) the body of a response whose header was read with spec.header_only: all of it, or
// (`some`) the next piece.
void Client::Impl::read_body(Active& a, const CancelCheck& cancel, bool some) {
    Connection& c = *a.conn;
    ResponseReader& parser = *a.reader;
    if (parser.is_done()) return;
    beast::error_code ec;
    const auto read = [&](auto&& io) {
        a.deadline.start_read();
        if (some)
            io.read_some(parser, ec);
        else
            io.read(parser, false, ec);
        a.deadline.reading = false;
    };
    if (c.https)
        read(AsyncIo(*this, c, a.deadline, cancel, a.where));
    else
        read(BlockingIo(*this, c, a.deadline, cancel, a.where));
    if (ec == ssl::error::stream_truncated) {  // as in exchange(); the header has been read
        parser.put_eof(ec);
        if (!ec) {
            drop(c);
            return;
        }
    }
    if (ec) read_failed(c, parser, ec, a.where);
    if (parser.is_done()) finished(c, parser);
}

// send() and stream(): the request, and the redirects it leads to, up to the final response's header.
void Client::Impl::open(Active& a, std::string method, std::string_view url, Headers headers,
                        std::string_view body_view, const RequestOptions& o, const CancelCheck& cancel,
                        bool streaming) {
    a.deadline = deadline(o.timeout);
    reject_control_characters(url);
    std::string body(body_view);
    std::string current = encode_url(url);
    if (o.decompress && !find_header(headers, "accept-encoding"))
        headers.emplace_back("Accept-Encoding", "gzip, deflate");
    if (!find_header(headers, "user-agent"))
        headers.emplace_back("User-Agent",
                             o.user_agent.empty() ? std::string("beast-client/") + version : o.user_agent);
    ReadSpec spec;
    spec.keep = true;
    spec.body_limit = streaming ? std::numeric_limits<std::uint64_t>::max() : request_body_limit;
    if (!streaming && o.max_body_size) spec.kept_limit = std::min(request_body_limit, *o.max_body_size);
    spec.decompress = o.decompress;
    spec.header_only = true;
    if (streaming) spec.chunk_limit = 64 * 1024;
    for (int hops = 0;; ++hops) {
        const Url u = parse_url(current);
        std::string cookie;  // the jar's, unless the request has its own Cookie header
        if (o.cookies && !find_header(headers, "cookie")) cookie = o.cookies->header_for(u);
        const Wire req = cookie.empty() ? make_request(method, u, headers, body)
                                        : make_request(method, u, with_cookie(headers, std::move(cookie)), body);
        a.where = host_port(u.host, u.port);
        a.url = current;
        a.conn = roundtrip(u, req, a.reader, spec, a.deadline, cancel, a.where);
        if (o.cookies) o.cookies->store(u, a.reader->headers);
        const int status = a.reader->status;
        if (!o.follow_redirects || !is_redirect(status)) return;
        const std::string* location = find_header(a.reader->headers, "location");
        if (!location) return;  // a 3xx without Location is the final response
        if (hops >= o.max_redirects) {
            drop(*a.conn);
            release(std::move(a.conn));
            throw TooManyRedirects("more than " + std::to_string(o.max_redirects) + " redirects; the last URL was " +
                                   current + " (redirecting to " + printable(*location) + ")");
        }
        std::string next;
        Url nu;
        try {
            const std::string_view reference = trim_ows(*location);
            reject_control_characters(reference);
            next = encode_url(resolve_url(current, reference));
            nu = parse_url(next);
        } catch (const InvalidUrl& e) {
            drop(*a.conn);
            release(std::move(a.conn));
            throw ProtocolError("redirect from " + current + " to an unsupported or invalid URL: " + e.what());
        }
        // the redirect's own body is read (so that the connection can be re-used) and dropped
        a.reader->discard = true;
        read_body(a, cancel, false);
        release(std::move(a.conn));
        if ((status == 301 || status == 302 || status == 303) && method != "HEAD") {
            method = "GET";
            body.clear();
            erase_header(headers, "content-type");
        }
        if (nu.https != u.https || nu.host != u.host || nu.port != u.port) {
            erase_header(headers, "authorization");
            erase_header(headers, "cookie");
            erase_header(headers, "proxy-authorization");
        }
        erase_header(headers, "host");
        current = std::move(next);
    }
}

}  // namespace beast_client
