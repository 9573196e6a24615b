// One request on a connection of the pool: writing it, reading the response (or its header), the one retry
// on a kept-alive connection the server closed, and the redirects of send() / stream().
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

std::shared_ptr<const Client::Impl::Target> Client::Impl::target(std::string_view url) {
    {
        std::lock_guard<std::mutex> lock(target_mutex);
        if (get_target && get_target->url == url) return get_target;
    }
    auto t = std::make_shared<Target>();  // built first: a URL that fails leaves the previous one
    t->u = parse_url(url);
    t->where = host_port(t->u.host, t->u.port);
    t->wire = make_request("GET", t->u, {}, {}, false, t->u.https ? nullptr : proxies.for_url(t->u));
    t->url.assign(url.data(), url.size());
    std::lock_guard<std::mutex> lock(target_mutex);
    get_target = t;
    return t;
}

bool detail::tls_alert_reply(const beast::error_code& ec, const beast::flat_buffer& buffer) {
    const auto* b = static_cast<const unsigned char*>(buffer.data().data());
    return is_http_error(ec) && buffer.size() >= 3 && b[0] == 0x15 && b[1] == 0x03;
}

void detail::throw_read_error(const ResponseReader& parser, const beast::error_code& ec, const std::string& where,
                              bool tls_alert) {
    if (ec == http::error::body_limit)  // the body as received, or decoded
        throw BodyTooLarge("the body of the response from " + where + " is larger than " +
                           (parser.kept_limit ? "max_body_size (" : "the limit (") +
                           std::to_string(parser.decoded_limit) + " bytes)");
    if (!parser.decode_error.empty())
        throw ProtocolError("cannot decode the response body from " + where + ": " + parser.decode_error);
    if (tls_alert)  // an http:// URL to a TLS server, which answered with a TLS alert
        throw ProtocolError("malformed HTTP response from " + where + ": " + ec.message() +
                            " (the server answered with a TLS alert: is it an https:// server?)");
    fail(ec, Phase::read, where);
}

// A failed read of the response: closes the connection and throws what the error means.
void Client::Impl::read_failed(Connection& c, const ResponseReader& parser, const beast::error_code& ec,
                               const std::string& where) {
    const bool tls_alert = !c.https && tls_alert_reply(ec, c.buffer);
    drop(c);
    throw_read_error(parser, ec, where, tls_alert);
}

// After the whole response: Connection: close, HTTP/1.0, a body delimited by EOF, a protocol switch we did not
// ask for, or a request that could not be sent whole end the connection.
void Client::Impl::finished(Connection& c, const ResponseReader& parser) {
    if (!parser.keep_alive() || parser.status == 101 || c.broken) drop(c);
}

namespace {

// The request on the wire: its head (and body), or its head and a streamed body's pieces as the source gives them,
// each between its chunk's size line and CRLF in one gathering write (the piece is not copied), the first
// with the head (one write for a small body), then the last chunk. Stops at the first write error. Returns the
// bytes of the first write that the kernel (or the TLS layer) took.
template <class Io>
std::size_t send_request(Io& io, const Wire& req, const BodySource* upload, beast::error_code& ec) {
    if (!upload) return io.write(req.bytes, ec);
    std::string_view piece;  // the source's bytes, valid until its next call
    const auto next = [&] {  // an exception ends the request: roundtrip() closes the connection
        for (;;) {
            piece = {};
            if (!(*upload)(piece)) return false;
            if (!piece.empty()) return true;
        }
    };
    bool more = next();
    std::string size = chunk_size_line(more ? piece.size() : 0);  // 0: the last chunk, "0\r\n" and the final CRLF
    const std::size_t sent = io.write({req.bytes, size, piece, "\r\n"}, ec);
    while (!ec && more) {
        more = next();
        size = chunk_size_line(more ? piece.size() : 0);
        io.write({size, piece, "\r\n"}, ec);
    }
    return sent;
}

}  // namespace

// Sends the request (and its streamed body: `upload`) and reads the response (or, spec.header_only, its header)
// on the open connection. Returns true when the request is to be sent again on a new connection (see
// roundtrip()). A write that failed because the server closed or reset the connection may have come after
// the server's answer (a 413 to a body it did not want, a redirect it did not read the body for: RFC 9112 9.5
// asks a client to watch for one): that answer is read and is the response, the connection closed after it.
template <class Io>
bool Client::Impl::exchange(Connection& c, Io& io, const Wire& req, std::optional<ResponseReader>& reader,
                            const ReadSpec& spec, Deadline& d, const std::string& where, bool may_retry,
                            const BodySource* upload) {
    beast::error_code write_error;
    if (d.phases) d.mark = Clock::now();
    const std::size_t sent = send_request(io, req, upload, write_error);
    if (d.phases) d.add_phase(&Phases::send);
    if (write_error && may_retry && sent == 0 && is_stale_connection(write_error)) {
        drop(c);  // found closed before a byte of the request went out: it cannot have reached the server
        return true;
    }
    const auto write_failed = [&] {  // no answer came: what the failed write means
        drop(c);
        if (may_retry && is_stale_connection(write_error)) {
            if (req.idempotent) return true;
            throw ConnectionError("connection to " + where + " closed by the server as the request was sent (" +
                                      req.method + " is not idempotent: not re-sent, the server may have received it)",
                                  ConnectionError::Kind::reset);
        }
        fail(write_error, Phase::write, where);
    };
    if (write_error && !is_stale_connection(write_error)) return write_failed();
    c.broken = bool(write_error);  // an answer may still be read; the connection then goes

    beast::error_code ec;
    bool interim = false;              // a 1xx interim response was received: the response has started
    bool first = d.phases != nullptr;  // recording phases: the first read is timed on its own (wait)
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
        if (first) {
            first = false;
            if (c.buffer.size() == 0) io.fill(ec);
            // what Beast's read says of a connection closed before any byte of the response
            if (ec == net::error::eof) ec = http::error::end_of_stream;
            if (!ec) d.add_phase(&Phases::wait);  // from here on, `receive`
        }
        if (!ec) io.read(parser, spec.header_only, ec);
        d.reading = false;
        if (ec == ssl::error::stream_truncated) {
            // the TLS peer closed without close_notify: what Beast does for a TCP EOF (a body delimited
            // by the end of the connection is complete; anything else was cut short)
            if (parser.got_some()) {
                parser.put_eof(ec);
                if (!ec) {
                    if (d.phases && !spec.header_only) d.add_phase(&Phases::receive);
                    drop(c);
                    return false;
                }
            } else {
                ec = http::error::end_of_stream;
            }
        }
        if (ec) {
            const bool started = interim || parser.got_some();
            if (write_error && !started) return write_failed();
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
    if (d.phases && !spec.header_only) d.add_phase(&Phases::receive);
    if (reader->is_done()) finished(c, *reader);
    return false;
}

// One request/response exchange on the pool's connection to u, returned (out of the pool) afterwards.
// acquire() has already replaced a kept-alive connection found closed. If the server closes a re-used
// connection after that check (a race with its idle timeout), the request is sent again once, on a new
// connection, only when that is harmless: no byte of the response had arrived, the body is not streamed, and
// either no byte of the request could be written (the connection was found closed as it went out: the request
// cannot have reached the server; hyper-util, under reqwest, re-sends such an unstarted request whatever its
// method too) or the method is idempotent (a repeat has the effect of one request, RFC 9110 9.2.2). A POST or
// PATCH of which some bytes went out is never re-sent. `reader` is (re)created for each attempt; after a
// failure it holds what was received.
std::unique_ptr<Client::Impl::Connection> Client::Impl::roundtrip(const Url& u, const Wire& req,
                                                                  std::optional<ResponseReader>& reader,
                                                                  const ReadSpec& spec, Deadline& d,
                                                                  const CancelCheck& cancel, const std::string& where,
                                                                  const BodySource* upload) {
    for (int attempt = 0;; ++attempt) {
        reader.reset();
        bool reused = false;
        auto c = acquire(u, d, cancel, where, req.idempotent && !upload, reused);
        const bool may_retry = reused && attempt == 0 && !upload;  // a streamed body cannot be sent twice
        bool retry = false;
        try {
            if (c->https) {
                AsyncIo io(*this, *c, d, cancel, where);
                retry = exchange(*c, io, req, reader, spec, d, where, may_retry, upload);
            } else {
                BlockingIo io(*this, *c, d, cancel, where);
                retry = exchange(*c, io, req, reader, spec, d, where, may_retry, upload);
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
    // recording phases: the response ends when its body has been read (send(): in this call; a stream: in the
    // call that reads its last bytes; never called again once it has)
    struct Received {
        Deadline& d;
        const ResponseReader& parser;
        ~Received() {
            if (d.phases && parser.is_done()) d.add_phase(&Phases::receive);
        }
    } received{a.deadline, parser};
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
    while (!some && parser.pending()) drain(a);  // a whole body: nothing is left held back
}

void Client::Impl::drain(Active& a) {
    beast::error_code ec;
    a.reader->drain(ec);
    if (ec) read_failed(*a.conn, *a.reader, ec, a.where);
}

// send() and stream(): the request, and the redirects it leads to (RequestPlan), up to the final response's
// header.
void Client::Impl::open(Active& a, std::string method, std::string_view url, Headers headers,
                        std::string_view body_view, const RequestOptions& o, const CancelCheck& cancel,
                        bool streaming) {
    a.deadline = deadline(o.timeout);
    if (o.phases) a.deadline.phases = &a.recorded;
    RequestPlan plan(std::move(method), url, std::move(headers), body_view, o);
    ReadSpec spec;
    spec.keep = true;
    spec.body_limit = streaming ? std::numeric_limits<std::uint64_t>::max() : request_body_limit;
    if (!streaming && o.max_body_size) spec.kept_limit = std::min(request_body_limit, *o.max_body_size);
    spec.decompress = o.decompress;
    spec.header_only = true;
    if (streaming) spec.chunk_limit = 64 * 1024;
    for (;;) {
        const Wire req = plan.wire(proxies);
        a.where = plan.where();
        a.url = plan.url();
        const Url u = plan.target();
        a.conn = roundtrip(u, req, a.reader, spec, a.deadline, cancel, a.where, plan.upload());
        if (!plan.follow(a.reader->status, a.reader->headers)) return;  // throws: the caller drops a.conn
        // the redirect's own body is read (so that the connection can be re-used) and dropped
        a.reader->discard = true;
        read_body(a, cancel, false);
        release(std::move(a.conn));
    }
}

}  // namespace beast_client
