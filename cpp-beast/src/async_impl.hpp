// The AsyncClient's internals, shared by async_client.cpp (the IoThread, the public API, the pool) and
// async_exchange.cpp (one operation: connecting, the exchange, redirects, a stream's pieces). Everything here
// but the IoThread's start and stop, the counters and tls_info runs on the IoThread: no locks.
#pragma once

#include "beast_client/async_client.hpp"
#include "client_impl.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace beast_client {

struct IoThread::Impl {
    net::io_context ioc{1};  // one thread runs it
    net::executor_work_guard<net::io_context::executor_type> work{ioc.get_executor()};
    std::thread thread;
    std::mutex stopping;
    std::atomic<bool> stopped{false};

    // Runs `f` on the thread (std::runtime_error once it is stopped).
    template <class F>
    void post(F&& f) {
        if (stopped.load()) throw std::runtime_error("the IoThread of this AsyncClient is stopped");
        net::post(ioc, std::forward<F>(f));
    }
};

namespace detail {

struct AsyncOrigin;
class Exchange;

// One connection of an AsyncClient's pool (the Client's Connection, on the IoThread's io_context).
struct AsyncConn {
    explicit AsyncConn(net::io_context& ioc) : resolver(ioc), stream(ioc) { buffer.reserve(64 * 1024); }

    tcp::resolver resolver;
    beast::tcp_stream stream;        // the http:// connection
    std::unique_ptr<TlsStream> tls;  // the https:// one
    beast::flat_buffer buffer;
    std::string host;
    std::uint16_t port = 0;
    bool https = false;
    bool open = false;
    bool broken = false;           // the request could not be sent whole (its answer came anyway): closed after it
    std::uint64_t generation = 0;  // the pool's when it was opened (a close() since: it closes when handed back)
    Clock::time_point idle_since{};
    AsyncOrigin* origin = nullptr;

    tcp::socket& socket() { return https && tls ? beast::get_lowest_layer(*tls).socket() : stream.socket(); }
    bool matches(const Url& u) const { return u.https == https && u.port == port && u.host == host; }
    // Closes the socket (a pending operation completes with an error) and stops a resolve.
    void close() {
        beast::error_code ignored;
        resolver.cancel();
        socket().close(ignored);
        buffer.clear();
    }
};

// The pool's record of one origin, as the Client's (Origin), with a queue of the requests waiting for a
// connection to it (max_connections).
struct AsyncOrigin {
    std::string host;
    std::uint16_t port = 0;
    bool https = false;
    std::size_t counted = 0;                       // connections out of the pool, or idle and open
    std::vector<std::unique_ptr<AsyncConn>> idle;  // the most recently handed back last
    std::list<std::shared_ptr<Exchange>> waiting;  // first come, first served
    std::uint64_t used = 0;

    bool matches(const Url& u) const { return u.https == https && u.port == port && u.host == host; }
};

}  // namespace detail

struct AsyncClient::Impl : std::enable_shared_from_this<AsyncClient::Impl> {
    using AsyncConn = detail::AsyncConn;
    using AsyncOrigin = detail::AsyncOrigin;

    Impl(IoThread::Impl& io, const Timeouts& timeouts, TlsConfig tls, std::size_t max_connections,
         const ProxyConfig& proxy);

    IoThread::Impl& io;
    const Timeouts timeouts;
    const TlsConfig tls;
    const std::size_t max_connections;
    const detail::Proxies proxies;
    const std::shared_ptr<detail::SessionCache> sessions = std::make_shared<detail::SessionCache>();
    std::shared_ptr<ssl::context> tls_ctx;  // made on the IoThread at the first https connection (or with a CA file)

    // the pool (the IoThread's alone)
    std::vector<std::unique_ptr<AsyncOrigin>> origins;
    std::uint64_t tick = 0;
    std::uint64_t generation = 0;  // close() counts up: the connections opened before close as handed back

    std::atomic<std::size_t> opened{0};
    mutable std::mutex info_mutex;
    std::optional<TlsInfo> info;

    detail::Deadline deadline(std::optional<std::chrono::nanoseconds> total_override) const;
    ssl::context& tls_context();
    void set_info(std::optional<TlsInfo> value);

    // The pool (async_client.cpp). checkout(): an idle connection to u's origin, or a closed one for a new
    // connection (a free slot), or none: the exchange then waits in the origin's queue until release() hands it
    // one (Exchange::resume, posted).
    std::unique_ptr<AsyncConn> checkout(const Url& u, const std::shared_ptr<detail::Exchange>& x, AsyncOrigin*& origin);
    void release(std::unique_ptr<AsyncConn> c);
    void forget_waiter(AsyncOrigin& o, detail::Exchange& x);
    void close_all();
};

}  // namespace beast_client
