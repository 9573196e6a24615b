// The Client's connections: the pool, opening a connection (resolve, TCP connect, TLS handshake), and waiting
// for an operation with the deadlines and the cancel check.
#include "client_impl.hpp"
#include "text.hpp"
#include "tls.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <sys/socket.h>

#include <cerrno>

namespace beast_client {

using namespace detail;

Client::Impl::Impl(Client& client) : owner(client), proxies(client.proxy_) {
    // a CA bundle is loaded now, so that a bad path fails at construction; the system store on first use
    if (!owner.tls_.ca_file.empty() && owner.tls_.verify) tls_ctx = tls_context(owner.tls_);
}

Client::Impl::Deadline Client::Impl::deadline(std::optional<std::chrono::nanoseconds> total_override) const {
    Deadline d;
    const auto& t = owner.timeouts_;
    const auto total = total_override ? total_override : t.total;
    d.start = Clock::now();
    if (total) {
        d.total_limit = *total;
        d.total = d.start + *total;
    }
    if (t.connect) d.connect_limit = *t.connect;
    if (t.read) d.read_limit = *t.read;
    return d;
}

// Closes the TCP socket (also under TLS: no close_notify exchange, nothing waits for the server). The TLS
// stream object itself is replaced only by the next connect(), when no operation can be pending on it.
void Client::Impl::drop(Connection& c) {
    beast::error_code ignored;
    c.socket().close(ignored);
    c.buffer.clear();
    if (c.open) {
        c.open = false;
        open_connections.fetch_sub(1, std::memory_order_relaxed);
    }
}

namespace {

// Closed connection objects kept for re-use, at most.
constexpr std::size_t kSpares = Client::pool_size;

}  // namespace

// The record of u's origin (pool_mutex held). Records nobody counts or waits for are forgotten when there
// are many.
Origin& Client::Impl::origin_of(const Url& u) {
    for (auto& o : origins)
        if (o->matches(u)) return *o;
    if (origins.size() >= 4 * Client::pool_size)
        origins.erase(std::remove_if(origins.begin(), origins.end(),
                                     [](const auto& o) { return o->counted == 0 && o->waiting == 0; }),
                      origins.end());
    auto o = std::make_unique<Origin>();
    o->host = u.host;
    o->port = u.port;
    o->https = u.https;
    origins.push_back(std::move(o));
    return *origins.back();
}

// Takes a connection to u's origin out of the pool: its most recently used idle one, or a slot for a new one
// (a closed object, or null: the caller makes it) while max_connections allows, or else waits for either until
// the connect timeout or the total deadline (TimeoutError), calling the CancelCheck every poll interval.
std::unique_ptr<Connection> Client::Impl::checkout(const Url& u, const Deadline& d, const CancelCheck& cancel,
                                                   const std::string& where, Origin*& origin) {
    const std::size_t max = owner.max_connections_;
    std::unique_lock<std::mutex> lock(pool_mutex);
    Origin& o = origin_of(u);
    origin = &o;  // stable while it counts the connection
    if (!o.idle.empty()) {
        auto c = std::move(o.idle.back());
        o.idle.pop_back();
        return c;
    }
    if (max == 0 || o.counted < max) {
        ++o.counted;
        std::unique_ptr<Connection> c;
        if (!spares.empty()) {
            c = std::move(spares.back());
            spares.pop_back();
            c->origin = &o;
        }
        return c;
    }
    const auto start = Clock::now();
    auto until = d.total;
    if (d.connect_limit.count() > 0) until = std::min(until, start + d.connect_limit);
    ++o.waiting;
    struct Waiting {  // however the wait ends
        Origin& o;
        ~Waiting() { --o.waiting; }
    } waiting{o};
    for (;;) {
        const auto now = Clock::now();
        if (now >= until) {
            const auto waited = std::chrono::duration_cast<std::chrono::nanoseconds>(now - start);
            throw TimeoutError("no free connection to " + std::string(u.https ? "https://" : "http://") + where +
                               " within " + seconds_text(waited) + ": max_connections (" + std::to_string(max) +
                               ") requests were in flight to it all along");
        }
        const auto slice = until - now > owner.poll_interval_ ? now + owner.poll_interval_ : until;
        pool_cv.wait_until(lock, slice);
        if (!o.idle.empty()) {
            auto c = std::move(o.idle.back());
            o.idle.pop_back();
            return c;
        }
        if (o.counted < max) {
            ++o.counted;
            std::unique_ptr<Connection> c;
            if (!spares.empty()) {
                c = std::move(spares.back());
                spares.pop_back();
                c->origin = &o;
            }
            return c;
        }
        if (cancel && Clock::now() < until) {  // the callback may take the GIL: not under the pool's lock
            lock.unlock();
            const bool stop = cancel();
            lock.lock();
            if (stop) throw Cancelled("request to " + where + " cancelled (while waiting for a free connection)");
        }
    }
}

// A connection goes back to the pool: an open one to its origin's idle ones, a closed one frees its slot (and
// its object is kept for re-use). Idle connections of more than pool_size origins: the least recently used
// origin's are closed.
void Client::Impl::release(std::unique_ptr<Connection> c) {
    if (!c) return;
    if (c->open) c->idle_since = Clock::now();
    std::vector<std::unique_ptr<Connection>> closing;  // closed and destroyed after the lock
    {
        std::lock_guard<std::mutex> lock(pool_mutex);
        Origin& o = *c->origin;
        if (c->open) {
            const bool first = o.idle.empty();
            o.used = ++tick;
            o.idle.push_back(std::move(c));
            if (first) {
                std::size_t holding = 0;
                Origin* oldest = nullptr;
                for (auto& other : origins) {
                    if (other->idle.empty()) continue;
                    ++holding;
                    if (!oldest || other->used < oldest->used) oldest = other.get();
                }
                if (holding > Client::pool_size) {
                    oldest->counted -= oldest->idle.size();
                    for (auto& idle : oldest->idle) closing.push_back(std::move(idle));
                    oldest->idle.clear();
                }
            }
        } else {
            --o.counted;
            if (spares.size() < kSpares)
                spares.push_back(std::move(c));
            else
                closing.push_back(std::move(c));
        }
        if (o.waiting > 0) pool_cv.notify_all();
    }
    for (auto& closed : closing) drop(*closed);
}

void Client::Impl::close_all() {
    std::vector<std::unique_ptr<Connection>> closing;
    {
        std::lock_guard<std::mutex> lock(pool_mutex);
        for (auto& o : origins) {
            o->counted -= o->idle.size();
            for (auto& idle : o->idle) closing.push_back(std::move(idle));
            o->idle.clear();
        }
        if (std::any_of(origins.begin(), origins.end(), [](const auto& o) { return o->waiting > 0; }))
            pool_cv.notify_all();
    }
    for (auto& closed : closing) drop(*closed);
}

// Closes the socket (and cancels a resolve) so that the pending operation completes. Socket
// operations complete at once with operation_aborted and are drained here, because their handlers
// refer to the caller's stack. A resolve cannot be interrupted (getaddrinfo runs on Asio's private
// thread): it is abandoned instead; its handler only holds a shared_ptr.
void Client::Impl::abort(const bool& done, bool drain, Connection& c) {
    c.resolver.cancel();
    drop(c);
    if (!drain) return;
    c.ioc.restart();
    while (!done) {
        if (c.ioc.run_one() == 0) break;
    }
}

std::string detail::timeout_text(const Deadline& d, Clock::time_point now, Phase phase, const std::string& where) {
    const std::string during = std::string(" (while ") + phase_text(phase) + ")";
    if (now >= d.total) return "request to " + where + " timed out after " + seconds_text(d.total_limit) + during;
    if (now >= d.connect)
        return "connecting to " + where + " timed out after " + seconds_text(d.connect_limit) + " (connect timeout" +
               (phase == Phase::handshake ? ", during the TLS handshake)" : ")");
    return "no data from " + where + " for " + seconds_text(d.read_limit) + " (read timeout" +
           (phase == Phase::read ? ")" : ", while " + std::string(phase_text(phase)) + ")");
}

// Runs the io_context until `done`, checking the deadlines and the cancel callback between slices.
void Client::Impl::wait(const bool& done, const Deadline& d, const CancelCheck& cancel, Phase phase, bool drain,
                        const std::string& where, Connection& c) {
    while (!done) {
        const auto now = Clock::now();
        const auto deadline = d.at();
        if (now >= deadline) {
            abort(done, drain, c);
            throw TimeoutError(timeout_text(d, now, phase, where));
        }
        const auto until = deadline - now > owner.poll_interval_ ? now + owner.poll_interval_ : deadline;
        if (c.ioc.stopped()) c.ioc.restart();
        try {
            while (!done && c.ioc.run_one_until(until) != 0) {
            }
        } catch (...) {  // thrown by a handler (e.g. bad_alloc while storing the body)
            abort(done, drain, c);
            throw;
        }
        if (done) return;
        if (c.ioc.stopped()) {  // out of work although the operation has not completed: a bug
            abort(done, drain, c);
            throw Error("internal error: no pending operation while " + std::string(phase_text(phase)) + " for " +
                        where);
        }
        if (cancel) {
            bool stop = false;
            try {
                stop = cancel();
            } catch (...) {
                abort(done, drain, c);
                throw;
            }
            if (stop) {
                abort(done, drain, c);
                throw Cancelled("request to " + where + " cancelled (while " + phase_text(phase) + ")");
            }
        }
    }
}

void detail::check_tunnel(int status, const std::string& reason, std::size_t extra, const ProxyServer& proxy,
                          const std::string& where) {
    if (status < 200 || status > 299)
        throw ConnectionError("the proxy " + proxy.where + " refused the tunnel to " + where + ": " +
                              std::to_string(status) + (reason.empty() ? "" : " " + printable(reason)));
    if (extra != 0)  // the server speaks first in no protocol we tunnel: this is the proxy's
        throw ConnectionError("the proxy " + proxy.where + " sent data after accepting the tunnel to " + where);
}

// The CONNECT request to the proxy on the open TCP connection, and its answer: a tunnel to u's host and port
// (part of connecting: the connect timeout covers it).
void Client::Impl::tunnel(Connection& c, const Url& u, const ProxyServer& proxy, Deadline& d, const CancelCheck& cancel,
                          const std::string& where) {
    const std::string to = "proxy " + proxy.where + " (for " + where + ")";
    beast::tcp_stream& tcp_layer = beast::get_lowest_layer(*c.tls);
    const std::string request = connect_request(u, proxy);
    beast::error_code ec;
    bool done = false;
    net::async_write(tcp_layer, net::buffer(request), [&](const beast::error_code& e, std::size_t) {
        ec = e;
        done = true;
    });
    wait(done, d, cancel, Phase::connect, true, to, c);
    if (ec) {
        drop(c);
        fail(ec, Phase::connect, to);
    }
    http::response_parser<http::empty_body> answer;
    answer.skip(true);  // the answer to a CONNECT has no body (RFC 9110 9.3.6)
    done = false;
    c.buffer.clear();
    http::async_read_header(tcp_layer, c.buffer, answer, [&](const beast::error_code& e, std::size_t) {
        ec = e;
        done = true;
    });
    wait(done, d, cancel, Phase::connect, true, to, c);
    const std::size_t extra = c.buffer.size();
    c.buffer.clear();
    if (ec) {
        drop(c);
        if (ec == http::error::end_of_stream || ec == net::error::eof)
            throw ConnectionError("the " + to + " closed the connection instead of answering the CONNECT",
                                  ConnectionError::Kind::reset);
        fail(ec, Phase::connect, to);
    }
    try {
        check_tunnel(answer.get().result_int(), str(answer.get().reason()), extra, proxy, where);
    } catch (...) {
        drop(c);
        throw;
    }
}

// Whether the idle kept-alive connection can carry a new request: nothing unread is buffered and, when
// `peek`, the server has neither closed nor reset it. One non-blocking MSG_PEEK: EAGAIN = open and quiet;
// 0 = the server's FIN (e.g. its keep-alive timeout); an error = reset; data = bytes the server sent unasked
// (e.g. a 408 before closing), which cannot be the response to the next request. Over TLS the peek is on
// the TCP socket under the TLS layer, where data is a TLS record the server sent unasked: on an idle
// connection that is its close_notify (or another alert) ahead of its FIN. TLS records already read
// from the socket but not yet processed (OpenSSL's buffers) count as data too.
bool Client::Impl::reusable(Connection& c, bool peek) {
    return idle_usable(c.socket(), c.https ? c.tls->native_handle() : nullptr, c.buffer, peek);
}

bool detail::idle_usable(tcp::socket& socket, SSL* ssl, const beast::flat_buffer& buffer, bool peek) {
    if (buffer.size() != 0) return false;
    if (ssl && (SSL_has_pending(ssl) || BIO_ctrl_pending(SSL_get_rbio(ssl)) != 0)) return false;
    if (!peek) return true;
    char ch;
    for (;;) {
        const auto n = ::recv(socket.native_handle(), &ch, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
}

std::unique_ptr<TlsStream> detail::tls_stream_for(net::io_context& ioc, ssl::context& ctx, const Url& u, bool verify,
                                                  const std::shared_ptr<SessionCache>& sessions,
                                                  const std::string& where) {
    const bool is_ip = [&] {
        beast::error_code not_ip;
        (void)net::ip::make_address(u.host, not_ip);
        return !not_ip;
    }();
    auto fresh = std::make_unique<TlsStream>(ioc, ctx);
    SSL* ssl = fresh->native_handle();
    // SNI carries host names only (RFC 6066 3)
    if (!is_ip && SSL_set_tlsext_host_name(ssl, u.host.c_str()) != 1) {
        ERR_clear_error();
        throw TLSError("cannot use '" + u.host + "' as the TLS server name (SNI)");
    }
    if (verify) fresh->set_verify_callback(VerifyHost(u.host, is_ip));
    offer_session(ssl, sessions, where);
    return fresh;
}

void Client::Impl::set_info(std::optional<TlsInfo> value) {
    std::lock_guard<std::mutex> lock(info_mutex);
    info = std::move(value);
}

// A connection to u's scheme + host + port, out of the pool (checkout()), opened when it is not open (TCP,
// and for https the TLS handshake). `reused`: an open kept-alive connection is re-used. A connection that the
// server closed while it sat idle is replaced here, before anything is sent on it.
std::unique_ptr<Connection> Client::Impl::acquire(const Url& u, Deadline& d, const CancelCheck& cancel,
                                                  const std::string& where, bool idempotent, bool& reused) {
    Origin* o = nullptr;
    std::unique_ptr<Connection> c = checkout(u, d, cancel, where, o);
    // the socket is looked at after the connection sat idle for a while, or for a request that cannot be re-sent
    if (c && c->open && reusable(*c, check_idle(d.start, c->idle_since, idempotent))) {
        reused = true;
        return c;
    }
    reused = false;
    if (!c) {  // a slot for a new connection
        try {
            c = std::make_unique<Connection>();
        } catch (...) {
            std::lock_guard<std::mutex> lock(pool_mutex);
            --o->counted;
            throw;
        }
        c->origin = o;
    }
    try {
        connect(*c, u, d, cancel, where);
    } catch (...) {
        drop(*c);
        release(std::move(c));
        throw;
    }
    return c;
}

void Client::Impl::connect(Connection& c, const Url& u, Deadline& d, const CancelCheck& cancel,
                           const std::string& where) {
    drop(c);
    if (d.connect_limit.count() > 0) d.connect = Clock::now() + d.connect_limit;
    struct ConnectPhase {  // the connect deadline ends with the phase, however it ends
        Deadline& d;
        ~ConnectPhase() { d.connect = Deadline::never; }
    } phase{d};
    // through a proxy the TCP connection is the proxy's (messages name both)
    const ProxyServer* proxy = proxies.for_url(u);
    const std::string& host = proxy ? proxy->host : u.host;
    const std::uint16_t port = proxy ? proxy->port : u.port;
    const std::string to = proxy ? "proxy " + proxy->where + " (for " + where + ")" : where;
    std::vector<tcp::endpoint> endpoints;
    beast::error_code ec;
    const auto address = net::ip::make_address(host, ec);
    if (!ec) {
        endpoints.emplace_back(address, port);
    } else {
        if (d.phases) d.mark = Clock::now();
        auto state = std::make_shared<ResolveState>();
        c.resolver.async_resolve(host, std::to_string(port), tcp::resolver::numeric_service,
                                 [state](const beast::error_code& e, tcp::resolver::results_type r) {
                                     state->ec = e;
                                     state->results = std::move(r);
                                     state->done = true;
                                 });
        wait(state->done, d, cancel, Phase::resolve, false, to, c);
        if (state->ec) fail(state->ec, Phase::resolve, to);
        for (const auto& entry : state->results) endpoints.push_back(entry.endpoint());
        if (endpoints.empty()) throw ConnectionError("cannot resolve the host of " + to + ": no addresses");
        if (d.phases) {
            d.add_phase(&Phases::dns);
            d.phases->resolved = true;
        }
    }
    if (u.https) {
        std::shared_ptr<ssl::context> ctx;
        {
            std::lock_guard<std::mutex> lock(tls_mutex);
            if (!tls_ctx) tls_ctx = tls_context(owner.tls_);
            ctx = tls_ctx;
        }
        // the previous connection's stream is replaced: nothing is pending on it (every wait drains)
        c.tls = tls_stream_for(c.ioc, *ctx, u, owner.tls_.verify, sessions, where);
    } else {
        c.tls.reset();
    }
    c.https = u.https;
    c.host = u.host;
    c.port = u.port;
    beast::tcp_stream& tcp_layer = c.https ? beast::get_lowest_layer(*c.tls) : c.stream;
    bool done = false;
    if (d.phases) d.mark = Clock::now();
    tcp_layer.async_connect(endpoints, [&](const beast::error_code& e, const tcp::endpoint&) {
        ec = e;
        done = true;
    });
    wait(done, d, cancel, Phase::connect, true, to, c);
    if (ec) {
        drop(c);
        fail(ec, Phase::connect, to);
    }
    if (d.phases) d.add_phase(&Phases::connect);
    beast::error_code ignored;
    tcp_layer.socket().set_option(tcp::no_delay(true), ignored);
    if (proxy && c.https) {
        if (d.phases) d.mark = Clock::now();
        tunnel(c, u, *proxy, d, cancel, where);
        if (d.phases) d.add_phase(&Phases::connect);  // the tunnel is part of connecting
    }
    if (c.https) {
        done = false;
        if (d.phases) d.mark = Clock::now();
        c.tls->async_handshake(ssl::stream_base::client, [&](const beast::error_code& e) {
            ec = e;
            done = true;
        });
        wait(done, d, cancel, Phase::handshake, true, where, c);
        if (ec) {
            const std::string why = handshake_failure(ec, c.tls->native_handle());
            ERR_clear_error();
            drop(c);
            throw TLSError("TLS handshake with " + where + " failed: " + why, kind_of(ec));
        }
        if (d.phases) d.add_phase(&Phases::tls);
        SSL* ssl = c.tls->native_handle();
        set_info(TlsInfo{SSL_get_version(ssl), SSL_get_cipher_name(ssl)});
    } else {
        set_info(std::nullopt);
    }
    c.buffer.clear();
    c.send_slice = c.receive_slice = std::chrono::microseconds(0);  // a new socket: no timeouts set
    c.open = true;
    c.broken = false;
    open_connections.fetch_add(1, std::memory_order_relaxed);
    owner.connections_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace beast_client
