// One AsyncClient operation (async_exchange.hpp): the request's chain of completion handlers. Every handler
// starts with stopped(): the operation may have been abandoned meanwhile (cancel(), a timeout), which closes the
// connection so that the pending Beast / Asio operation completes at once; its handler then fails with the
// reason. The retry and redirect rules are the Client's (exchange.cpp), the decisions RequestPlan's.
#include "async_exchange.hpp"

#include "text.hpp"
#include "tls.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/version.hpp>

#include <openssl/err.h>

#include <fcntl.h>

#include <cerrno>

namespace beast_client::detail {

Exchange::Exchange(std::shared_ptr<AsyncClient::Impl> client, Kind kind)
    : client_(std::move(client)), kind_(kind), timer_(client_->io.ioc) {}

void Exchange::start() {
    client_->io.post([x = self()] { x->begin(); });
}

void Exchange::cancel() {
    try {
        client_->io.post([x = self()] { x->abort(std::make_exception_ptr(Cancelled("request cancelled"))); });
    } catch (const std::runtime_error&) {  // the IoThread is stopped: nothing of it runs any more
    }
}

bool Exchange::stopped() {
    if (state_ == State::finished) return true;
    if (!abort_) return false;
    if (state_ == State::streaming)
        stream_fail(abort_);
    else
        finish_error(abort_);
    return true;
}

// ---- the deadlines -----------------------------------------------------------------------------------

void Exchange::arm() {
    const auto at = d_.at();
    if (at == armed_at_) return;
    armed_at_ = at;
    ++timer_gen_;
    if (at == Deadline::never) {
        timer_.cancel();
        return;
    }
    timer_.expires_at(at);
    timer_.async_wait([x = self(), gen = timer_gen_](const beast::error_code& ec) {
        if (!ec && gen == x->timer_gen_) x->on_timer();
    });
}

void Exchange::on_timer() {
    if (state_ == State::finished) return;
    armed_at_ = Deadline::never;
    const auto now = Clock::now();
    if (now < d_.at()) return arm();  // the read deadline moved on: bytes arrived meanwhile
    if (waiting_) {
        const auto waited = std::chrono::duration_cast<std::chrono::nanoseconds>(now - d_.start);
        return abort(std::make_exception_ptr(
            TimeoutError("no free connection to " + std::string(u.https ? "https://" : "http://") + where + " within " +
                         seconds_text(waited) + ": max_connections (" + std::to_string(client_->max_connections) +
                         ") requests were in flight to it all along")));
    }
    abort(std::make_exception_ptr(TimeoutError(timeout_text(d_, now, phase_, to_.empty() ? where : to_))));
}

void Exchange::abort(std::exception_ptr why) {
    if (state_ == State::finished || abort_) return;
    if (state_ == State::streaming && stream_closed_) return;
    abort_ = std::move(why);
    if (waiting_) {
        client_->forget_waiter(*origin_, *this);
        waiting_ = false;
        finish_error(abort_);
    } else if (busy_) {
        conn_->close();  // the pending operation ends now; its handler reports abort_
    } else if (handing_) {
        // resume() gives the connection back and reports abort_
    } else if (state_ == State::streaming) {
        stream_fail(abort_);
    } else {
        finish_error(abort_);  // begin() has not run yet: it will find the exchange finished
    }
}

// ---- connecting ----------------------------------------------------------------------------------------

void Exchange::begin() {
    if (stopped()) return;
    d_ = client_->deadline(total_override);
    if (record_phases) d_.phases = &recorded_;
    arm();
    hop();
}

void Exchange::hop() {
    if (plan) {
        try {
            if (!prewired) wire = plan->wire(client_->proxies);
        } catch (...) {
            return finish_error(std::current_exception());
        }
        prewired = false;
        u = plan->target();
        where = plan->where();
    }
    acquire();
}

void Exchange::acquire() {
    to_.clear();
    if (kind_ == Kind::connect) return resume(std::make_unique<AsyncConn>(client_->io.ioc));  // outside the pool
    std::unique_ptr<AsyncConn> c = client_->checkout(u, self(), origin_);
    if (!c) {  // every connection to the origin is busy: in the queue, until one is handed back
        waiting_ = true;
        phase_ = Phase::connect;
        if (d_.connect_limit.count() > 0) d_.connect = Clock::now() + d_.connect_limit;
        arm();
        return;
    }
    resume(std::move(c));
}

void Exchange::resume(std::unique_ptr<AsyncConn> c) {
    waiting_ = handing_ = false;
    d_.connect = Deadline::never;
    if (state_ == State::finished || abort_) {
        client_->release(std::move(c));
        if (state_ != State::finished) finish_error(abort_);
        return;
    }
    conn_ = std::move(c);
    SSL* ssl = conn_->open && conn_->https ? conn_->tls->native_handle() : nullptr;
    if (conn_->open &&
        idle_usable(conn_->socket(), ssl, conn_->buffer, check_idle(d_.start, conn_->idle_since, wire.idempotent))) {
        reused_ = true;
        return write();
    }
    reused_ = false;
    connect();
}

void Exchange::connect() {
    if (conn_->open) {
        conn_->open = false;
        conn_->close();
    }
    phase_ = Phase::resolve;
    if (d_.connect_limit.count() > 0) d_.connect = Clock::now() + d_.connect_limit;
    arm();
    proxy_ = client_->proxies.for_url(u);
    to_ = proxy_ ? "proxy " + proxy_->where + " (for " + where + ")" : where;
    const std::string& host = proxy_ ? proxy_->host : u.host;
    const std::uint16_t port = proxy_ ? proxy_->port : u.port;
    beast::error_code ec;
    const auto address = net::ip::make_address(host, ec);
    if (!ec) return on_resolved({tcp::endpoint(address, port)});
    busy_ = true;
    if (d_.phases) d_.mark = Clock::now();
    conn_->resolver.async_resolve(host, std::to_string(port), tcp::resolver::numeric_service,
                                  [x = self()](const beast::error_code& e, const tcp::resolver::results_type& r) {
                                      x->busy_ = false;
                                      if (x->stopped()) return;
                                      if (e) return x->fail_ec(e, Phase::resolve, x->to_);
                                      if (x->d_.phases) {
                                          x->d_.add_phase(&Phases::dns);
                                          x->d_.phases->resolved = true;
                                      }
                                      std::vector<tcp::endpoint> endpoints;
                                      for (const auto& entry : r) endpoints.push_back(entry.endpoint());
                                      if (endpoints.empty())
                                          return x->finish_error(std::make_exception_ptr(ConnectionError(
                                              "cannot resolve the host of " + x->to_ + ": no addresses")));
                                      x->on_resolved(endpoints);
                                  });
}

void Exchange::on_resolved(const std::vector<tcp::endpoint>& endpoints) {
    try {
        if (u.https)
            conn_->tls = tls_stream_for(client_->io.ioc, client_->tls_context(), u, client_->tls.verify,
                                        client_->sessions, where);
        else
            conn_->tls.reset();
    } catch (...) {
        return finish_error(std::current_exception());
    }
    conn_->https = u.https;
    conn_->host = u.host;
    conn_->port = u.port;
    phase_ = Phase::connect;
    beast::tcp_stream& tcp_layer = conn_->https ? beast::get_lowest_layer(*conn_->tls) : conn_->stream;
    busy_ = true;
    if (d_.phases) d_.mark = Clock::now();
    tcp_layer.async_connect(endpoints, [x = self()](const beast::error_code& e, const tcp::endpoint&) {
        x->busy_ = false;
        if (x->stopped()) return;
        if (e) return x->fail_ec(e, Phase::connect, x->to_);
        if (x->d_.phases) x->d_.add_phase(&Phases::connect);
        x->on_connected();
    });
}

void Exchange::on_connected() {
    beast::error_code ignored;
    conn_->socket().set_option(tcp::no_delay(true), ignored);
    if (proxy_ && conn_->https) return tunnel();
    if (conn_->https) return handshake();
    connected();
}

void Exchange::tunnel() {
    if (d_.phases) d_.mark = Clock::now();  // the tunnel is part of connecting
    tunnel_request_ = connect_request(u, *proxy_);
    beast::tcp_stream& tcp_layer = beast::get_lowest_layer(*conn_->tls);
    busy_ = true;
    net::async_write(tcp_layer, net::buffer(tunnel_request_), [x = self()](const beast::error_code& e, std::size_t) {
        x->busy_ = false;
        if (x->stopped()) return;
        if (e) return x->fail_ec(e, Phase::connect, x->to_);
        x->tunnel_answer_.emplace();
        x->tunnel_answer_->skip(true);  // the answer to a CONNECT has no body (RFC 9110 9.3.6)
        x->conn_->buffer.clear();
        x->busy_ = true;
        http::async_read_header(
            beast::get_lowest_layer(*x->conn_->tls), x->conn_->buffer, *x->tunnel_answer_,
            [x](beast::error_code ec, std::size_t) {
                x->busy_ = false;
                if (x->stopped()) return;
                const std::size_t extra = x->conn_->buffer.size();
                x->conn_->buffer.clear();
                if (ec == http::error::end_of_stream || ec == net::error::eof)
                    return x->finish_error(
                        std::make_exception_ptr(ConnectionError("the " + x->to_ +
                                                                    " closed the connection instead of answering the "
                                                                    "CONNECT",
                                                                ConnectionError::Kind::reset)));
                if (ec) return x->fail_ec(ec, Phase::connect, x->to_);
                try {
                    const auto& answer = x->tunnel_answer_->get();
                    check_tunnel(answer.result_int(), str(answer.reason()), extra, *x->proxy_, x->where);
                } catch (...) {
                    return x->finish_error(std::current_exception());
                }
                if (x->d_.phases) x->d_.add_phase(&Phases::connect);
                x->handshake();
            });
    });
}

void Exchange::handshake() {
    phase_ = Phase::handshake;
    busy_ = true;
    if (d_.phases) d_.mark = Clock::now();
    conn_->tls->async_handshake(ssl::stream_base::client, [x = self()](const beast::error_code& e) {
        x->busy_ = false;
        if (x->stopped()) return;
        SSL* ssl = x->conn_->tls->native_handle();
        if (e) {
            const std::string why = handshake_failure(e, ssl);
            ERR_clear_error();
            return x->finish_error(
                std::make_exception_ptr(TLSError("TLS handshake with " + x->where + " failed: " + why, kind_of(e))));
        }
        if (x->d_.phases) x->d_.add_phase(&Phases::tls);
        x->client_->set_info(TlsInfo{SSL_get_version(ssl), SSL_get_cipher_name(ssl)});
        x->connected();
    });
}

void Exchange::connected() {
    d_.connect = Deadline::never;
    if (!conn_->https) client_->set_info(std::nullopt);
    conn_->buffer.clear();
    conn_->open = true;
    conn_->broken = false;
    conn_->generation = client_->generation;
    client_->opened.fetch_add(1, std::memory_order_relaxed);
    if (kind_ == Kind::connect) return hand_over();
    write();
}

// AsyncClient::connect()'s end: the socket goes to the caller, released by Asio (which takes it out of the
// io_context's epoll: the IoThread never hears of it again; a duplicate, or closing Asio's descriptor, would leave
// it there), close-on-exec as Python's own sockets are.
void Exchange::hand_over() {
#if BOOST_VERSION >= 107500
    beast::error_code ec;
    const int fd = conn_->socket().release(ec);
    if (ec) return fail_ec(ec, Phase::connect, where);
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
#else  // (never reached: loop_request() offers no LoopRequest without socket::release())
    const int fd = -1;
#endif
    drop_conn();
    state_ = State::finished;
    ++timer_gen_;
    timer_.cancel();
    invoke(on_socket, fd, std::exception_ptr());
    invoke(on_connected_phases, fd, recorded_, std::exception_ptr());
}

// ---- the exchange --------------------------------------------------------------------------------------

void Exchange::write() {
    phase_ = Phase::write;
    arm();
    busy_ = true;
    if (d_.phases) {
        d_.mark = Clock::now();
        first_read_ = true;
    }
    const bool streamed = upload && plan && plan->streamed();
    with_stream([&](auto& s) {
        net::async_write(s, net::buffer(wire.bytes),
                         [x = self(), streamed](const beast::error_code& e, std::size_t sent) {
                             x->busy_ = false;
                             if (x->stopped()) return;
                             if (streamed && !e) return x->pull();  // the head went out: the body's pieces follow
                             x->wrote(e, sent);
                         });
    });
}

// The request is written (or its write failed after `sent` bytes).
void Exchange::wrote(const beast::error_code& e, std::size_t sent) {
    if (d_.phases) d_.add_phase(&Phases::send);
    if (e && sent == 0 && reused_ && attempt_ == 0 && !pulled_ && is_stale_connection(e))
        return retry();  // found closed before a byte went out: it cannot have reached the server
    end_upload();
    // the server closed or reset the connection: its answer may have come first (as the Client's)
    if (e && !is_stale_connection(e)) return fail_ec(e, Phase::write, where);
    write_error_ = e;
    conn_->broken = bool(e);
    read();
}

void Exchange::read() {
    ResponseReader& parser = reader_.emplace(spec.keep, spec.keep);
    parser.header_limit(header_limit);
    parser.body_limit(spec.body_limit);
    if (spec.keep) {
        parser.decoded_limit = spec.kept_limit ? *spec.kept_limit : spec.body_limit;
        parser.kept_limit = spec.kept_limit;
    }
    parser.chunk_limit = spec.chunk_limit;
    parser.decompress = spec.decompress;
    if (wire.head) parser.skip(true);
    if (d_.read_limit.count() > 0) parser.progress = &d_.progress;
    phase_ = Phase::read;
    d_.start_read();
    arm();
    if (!first_read_) return read_message();
    // recording phases: the response's first bytes into the read buffer on their own (the read Beast's would have
    // made first; the parser takes what is buffered before it reads more): they end `wait`
    first_read_ = false;
    if (conn_->buffer.size() != 0) {
        d_.add_phase(&Phases::wait);
        return read_message();
    }
    busy_ = true;
    with_stream([&](auto& s) {
        s.async_read_some(conn_->buffer.prepare(beast::read_size(conn_->buffer, 65536)),
                          [x = self()](beast::error_code ec, std::size_t n) {
                              x->busy_ = false;
                              x->conn_->buffer.commit(n);
                              if (!ec) {
                                  x->d_.add_phase(&Phases::wait);
                                  if (x->stopped()) return;
                                  return x->read_message();
                              }
                              x->d_.reading = false;
                              // what Beast's read says of a connection closed before any byte of the response
                              if (ec == net::error::eof) ec = http::error::end_of_stream;
                              x->on_read(ec);
                          });
    });
}

void Exchange::read_message() {
    ResponseReader& parser = *reader_;
    busy_ = true;
    const auto done = [x = self()](beast::error_code ec, std::size_t) {
        x->busy_ = false;
        x->d_.reading = false;
        x->on_read(ec);
    };
    with_stream([&](auto& s) {
        if (spec.header_only)
            http::async_read_header(s, conn_->buffer, parser, done);
        else
            http::async_read(s, conn_->buffer, parser, done);
    });
}

void Exchange::on_read(beast::error_code ec) {
    if (stopped()) return;
    ResponseReader& parser = *reader_;
    bool closed = false;
    if (ec == ssl::error::stream_truncated) {
        // the TLS peer closed without close_notify: what Beast does for a TCP EOF (a body delimited by the end of
        // the connection is complete; anything else was cut short)
        if (parser.got_some()) {
            parser.put_eof(ec);
            closed = !ec;
        } else {
            ec = http::error::end_of_stream;
        }
    }
    if (ec) {
        if (write_error_ && !interim_ && !parser.got_some()) return write_failed();
        if (reused_ && attempt_ == 0 && !interim_ && !parser.got_some() && is_stale_connection(ec))
            return closed_under("before a response was received");
        return read_failed(ec);
    }
    if (closed) drop_conn();
    // 1xx interim responses (100 Continue, 103 Early Hints) have no body: the final one follows
    if (parser.status >= 100 && parser.status < 200 && parser.status != 101) {
        interim_ = true;
        return read();
    }
    if (d_.phases && !spec.header_only) d_.add_phase(&Phases::receive);
    if (parser.is_done() && conn_ && (!parser.keep_alive() || parser.status == 101 || conn_->broken)) drop_conn();
    headed();
}

void Exchange::headed() {
    if (plan) {
        bool redirect = false;
        try {
            redirect = plan->follow(reader_->status, reader_->headers);
        } catch (...) {
            return finish_error(std::current_exception());
        }
        if (redirect) {  // its own body is read (so that the connection can be re-used) and dropped
            reader_->discard = true;
            return read_rest(true);
        }
    }
    if (kind_ != Kind::stream) return spec.header_only ? read_rest(false) : finish_ok();
    // the stream's head: the body is read by next()
    state_ = State::streaming;
    auto st = std::make_shared<AsyncResponseStream::State>();
    st->head = StreamHead{reader_->status, reader_->reason, reader_->headers, plan ? plan->url() : std::string()};
    st->exchange = self();
    st->io = &client_->io;
    invoke(on_stream, std::make_unique<AsyncResponseStream>(std::move(st)), std::exception_ptr());
}

void Exchange::read_rest(bool redirect) {
    if (reader_->is_done()) return on_rest({}, redirect);
    d_.start_read();
    arm();
    busy_ = true;
    with_stream([&](auto& s) {
        http::async_read(s, conn_->buffer, *reader_, [x = self(), redirect](beast::error_code ec, std::size_t) {
            x->busy_ = false;
            x->d_.reading = false;
            x->on_rest(ec, redirect);
        });
    });
}

void Exchange::on_rest(beast::error_code ec, bool redirect) {
    if (stopped()) return;
    ResponseReader& parser = *reader_;
    if (ec == ssl::error::stream_truncated) {  // as in on_read(); the head has been read
        parser.put_eof(ec);
        if (!ec) drop_conn();
    }
    if (ec) return read_failed(ec);
    if (conn_ && (!parser.keep_alive() || parser.status == 101 || conn_->broken)) drop_conn();
    while (parser.pending()) {  // a whole body: nothing is left held back
        parser.drain(ec);
        if (ec) return read_failed(ec);
    }
    if (d_.phases) d_.add_phase(&Phases::receive);
    if (!redirect) return finish_ok();
    release_conn();
    interim_ = false;
    attempt_ = 0;
    pulled_ = false;  // the next hop sends no streamed body (a 307 / 308 to one is not followed)
    hop();
}

// No answer came after a write the server cut short: what the failed write means.
void Exchange::write_failed() {
    const beast::error_code e = write_error_;
    if (reused_ && attempt_ == 0) return closed_under("as the request was sent");
    fail_ec(e, Phase::write, where);
}

// A kept-alive connection the server closed under the request: sent again on a new one when that is safe.
void Exchange::closed_under(const char* when) {
    if (wire.idempotent && !pulled_) return retry();
    drop_conn();
    const std::string why = pulled_ ? "its body was streamed" : wire.method + " is not idempotent";
    finish_error(
        std::make_exception_ptr(ConnectionError("connection to " + where + " closed by the server " + when + " (" +
                                                    why + ": not re-sent, the server may have received it)",
                                                ConnectionError::Kind::reset)));
}

void Exchange::retry() {
    write_error_ = {};
    drop_conn();
    ++attempt_;
    interim_ = false;
    acquire();
}

// ---- the end ---------------------------------------------------------------------------------------------

void Exchange::finish_ok() {
    end_upload();
    release_conn();
    state_ = State::finished;
    ++timer_gen_;
    timer_.cancel();
    ResponseReader& r = *reader_;
    std::optional<Phases> phases;
    if (d_.phases) phases = recorded_;
    if (kind_ == Kind::fetch)
        return invoke(on_fetch, FetchResult{r.status, r.body_bytes, phases}, std::exception_ptr());
    Response out;
    out.status = r.status;
    out.headers = std::move(r.headers);
    out.body = std::move(r.body);
    out.reason = std::move(r.reason);
    if (plan) out.url = plan->url();
    out.phases = phases;
    invoke(on_response, std::move(out), std::exception_ptr());
}

void Exchange::finish_error(std::exception_ptr e) {
    if (state_ == State::finished) return;
    if (state_ == State::streaming) return stream_fail(e);
    end_upload();
    drop_conn();
    state_ = State::finished;
    ++timer_gen_;
    timer_.cancel();
    invoke(on_fetch, FetchResult{}, e);
    invoke(on_response, Response{}, e);
    invoke(on_stream, std::unique_ptr<AsyncResponseStream>(), e);
    invoke(on_socket, -1, e);
    invoke(on_connected_phases, -1, Phases{}, e);
}

void Exchange::fail_ec(const beast::error_code& ec, Phase phase, const std::string& to) {
    drop_conn();
    try {
        fail(ec, phase, to);
    } catch (...) {
        finish_error(std::current_exception());
    }
}

void Exchange::read_failed(const beast::error_code& ec) {
    const bool tls_alert = conn_ && !conn_->https && tls_alert_reply(ec, conn_->buffer);
    drop_conn();
    try {
        throw_read_error(*reader_, ec, where, tls_alert);
    } catch (...) {
        finish_error(std::current_exception());
    }
}

void Exchange::drop_conn() {
    if (!conn_) return;
    conn_->open = false;
    conn_->close();
    client_->release(std::move(conn_));
}

void Exchange::release_conn() {
    if (conn_) client_->release(std::move(conn_));
}

}  // namespace beast_client::detail
