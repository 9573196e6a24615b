// The Client's internals, shared by connection.cpp (the pool, connecting, waiting with deadlines),
// exchange.cpp (a request and its response, redirects) and client.cpp (the public API).
#pragma once

#include "aliases.hpp"
#include "beast_client/client.hpp"
#include "plan.hpp"
#include "proxy.hpp"
#include "response.hpp"
#include "session.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace beast_client {

namespace detail {

struct Origin;

// One connection of a Client's pool. It has its own io_context (resolve, connect, TLS), run only by the
// thread that has the connection out of the pool, so threads sharing the Client never run each other's
// handlers.
struct Connection {
    // Beast reads at most the buffer's free capacity (and at most 64 KiB) per read_some: without the
    // reserve, a flat_buffer would read bodies 512 bytes at a time.
    Connection() : stream(ioc) { buffer.reserve(64 * 1024); }

    net::io_context ioc{1};  // declared first: destroyed last
    tcp::resolver resolver{ioc};
    beast::tcp_stream stream;        // the http:// connection
    std::unique_ptr<TlsStream> tls;  // the https:// connection (a new one for every connection)
    beast::flat_buffer buffer;
    std::string host;  // what the open (or last) connection is connected to
    std::uint16_t port = 0;
    bool https = false;  // the open (or last) connection is tls, not stream
    bool open = false;
    bool broken = false;             // the request could not be sent whole (its answer came anyway): closed after it
    Clock::time_point idle_since{};  // back in the pool (open) since then
    // the socket's SO_SNDTIMEO / SO_RCVTIMEO as last set (plain http; zero: not set, i.e. none)
    std::chrono::microseconds send_slice{0};
    std::chrono::microseconds receive_slice{0};
    Origin* origin = nullptr;  // the pool's record of the origin it was taken out for (counted there)

    tcp::socket& socket() { return https && tls ? beast::get_lowest_layer(*tls).socket() : stream.socket(); }
    bool matches(const Url& u) const { return u.https == https && u.port == port && u.host == host; }
    bool matches(const Connection& c) const { return c.https == https && c.port == port && c.host == host; }
};

// The time limits of one request: the total deadline, the connect deadline while connecting, and the read
// timeout counted from the last progress while reading.
struct Deadline {
    static constexpr Clock::time_point never = Clock::time_point::max();
    Clock::time_point start{};  // the request started then
    Clock::time_point total = never;
    std::chrono::nanoseconds total_limit{0};
    Clock::time_point connect = never;
    std::chrono::nanoseconds connect_limit{0};  // 0: none
    std::chrono::nanoseconds read_limit{0};     // 0: none
    Clock::time_point progress{};               // the last bytes of the response arrived then
    bool reading = false;
    // Where the request's phases are recorded (null: nowhere, and no clock is read for them); `mark` is the
    // start of the phase in progress (the first response bytes arrived then, while the response is read).
    Phases* phases = nullptr;
    Clock::time_point mark{};

    Clock::time_point at() const {
        auto d = std::min(total, connect);
        if (reading && read_limit.count() > 0) d = std::min(d, progress + read_limit);
        return d;
    }
    void start_read() {
        reading = read_limit.count() > 0;
        if (reading) progress = Clock::now();
    }
    // Recording phases: adds the time since `mark` to `phase`, and the next phase starts now.
    void add_phase(std::chrono::nanoseconds Phases::*phase) {
        const auto now = Clock::now();
        phases->*phase += now - mark;
        mark = now;
    }
};

// What a request keeps of the response.
struct ReadSpec {
    bool keep = false;  // headers and body
    std::uint64_t body_limit = std::numeric_limits<std::uint64_t>::max();
    bool decompress = false;
    bool header_only = false;  // stop after the (final) header; the body is read later
    // decode at most about this much per read (a ResponseStream's pieces); the rest waits in the read buffer
    std::size_t chunk_limit = std::numeric_limits<std::size_t>::max();
    // send()'s max_body_size: the most of the body kept, as received and decoded (ResponseReader::kept_limit)
    std::optional<std::uint64_t> kept_limit;
};

// A request in progress (send(), stream()): its connection (taken out of the pool), parser and limits.
struct Active {
    std::unique_ptr<Connection> conn;
    std::optional<ResponseReader> reader;
    std::string url;    // the current (finally: final) URL
    std::string where;  // host:port, for messages
    Deadline deadline;
    Phases recorded;  // RequestOptions::phases: the phases of send() (deadline.phases points here)
};

// get()'s request to one URL, parsed and serialized once per Client and URL.
struct Target {
    std::string url;
    Url u;
    std::string where;  // host:port, for messages
    Wire wire;
};

// The pool's record of one origin (scheme + host + port).
struct Origin {
    std::string host;
    std::uint16_t port = 0;
    bool https = false;
    std::size_t counted = 0;  // its connections out of the pool or idle and open (max_connections bounds it)
    std::size_t waiting = 0;  // requests waiting for one of them
    std::vector<std::unique_ptr<Connection>> idle;  // open, the most recently handed back last
    std::uint64_t used = 0;                         // the pool's tick when a connection was last handed back

    bool matches(const Url& u) const { return u.https == https && u.port == port && u.host == host; }
};

// The timeouts as the clients keep them: each > 0 when set (else std::invalid_argument), at most ten years.
Timeouts checked_timeouts(const Timeouts& t);

// The message of a TimeoutError: which limit expired, and while doing what.
std::string timeout_text(const Deadline& d, Clock::time_point now, Phase phase, const std::string& where);

// Whether an idle kept-alive connection can carry a new request: nothing unread is buffered (`ssl`: nor in the TLS
// layer) and, when `peek`, the server has neither closed nor reset it (Client::Impl::reusable).
bool idle_usable(tcp::socket& socket, SSL* ssl, const beast::flat_buffer& buffer, bool peek);

// A TLS stream on `ioc` for a connection to u: SNI for a host name, the certificate checked for u's host (or IP
// address) when verifying, a session of `sessions` for `where` (host:port) offered.
std::unique_ptr<TlsStream> tls_stream_for(net::io_context& ioc, ssl::context& ctx, const Url& u, bool verify,
                                          const std::shared_ptr<SessionCache>& sessions, const std::string& where);

// Whether a failed read of plain HTTP met a TLS alert record (an http:// URL to a TLS server that answered so).
bool tls_alert_reply(const beast::error_code& ec, const beast::flat_buffer& buffer);
// Throws what a failed read of the response means (BodyTooLarge, ProtocolError, ConnectionError, ...).
[[noreturn]] void throw_read_error(const ResponseReader& parser, const beast::error_code& ec, const std::string& where,
                                   bool tls_alert);

// Checks the answer of a proxy to a tunnel's CONNECT (a 2xx, nothing after its head); throws ConnectionError.
void check_tunnel(int status, const std::string& reason, std::size_t extra, const ProxyServer& proxy,
                  const std::string& where);

// A kept-alive connection idle for less than this is re-used without looking at its socket first (a syscall per
// request saved in a busy loop): a server seldom closes a connection it has just answered on without saying so
// (Connection: close), and if it does, the retry rules of roundtrip() apply. Past it, and always for a request
// that cannot be sent again (not idempotent: tinyproxy, for one, closes every connection after its answer), the
// connection is checked (reusable()) before use.
constexpr std::chrono::milliseconds idle_check_after{10};

// Whether a kept-alive connection idle since `idle_since` is to be checked before a request started at `start`.
inline bool check_idle(Clock::time_point start, Clock::time_point idle_since, bool idempotent) {
    return !idempotent || start - idle_since >= idle_check_after;
}

}  // namespace detail

struct Client::Impl {
    using Connection = detail::Connection;
    using Deadline = detail::Deadline;
    using Phase = detail::Phase;
    using ReadSpec = detail::ReadSpec;
    using Active = detail::Active;
    using ResponseReader = detail::ResponseReader;
    using Wire = detail::Wire;
    using Target = detail::Target;
    using Origin = detail::Origin;

    explicit Impl(Client& client);
    class BlockingIo;  // io.hpp
    class AsyncIo;

    Client& owner;
    const detail::Proxies proxies;
    const std::shared_ptr<detail::SessionCache> sessions = std::make_shared<detail::SessionCache>();
    std::mutex tls_mutex;
    std::shared_ptr<ssl::context> tls_ctx;  // for the first https:// connection (or with a CA file); shared
    // The pool, under pool_mutex (held only to take a connection out or hand it back): the origins' records
    // with their idle connections, and closed connection objects kept for re-use (their io_context and
    // buffer). A connection in use is out of it (Active, ResponseStream) and handed back afterwards.
    std::mutex pool_mutex;
    std::condition_variable pool_cv;  // a connection was handed back, or a slot freed, for a waiting origin
    std::vector<std::unique_ptr<Origin>> origins;
    std::vector<std::unique_ptr<Connection>> spares;
    std::uint64_t tick = 0;
    std::atomic<std::size_t> open_connections{0};
    mutable std::mutex info_mutex;  // tls_info() may be called from another thread
    std::optional<TlsInfo> info;
    std::mutex target_mutex;
    std::shared_ptr<const Target> get_target;  // the URL of the last get()

    struct ResolveState {
        bool done = false;
        beast::error_code ec;
        tcp::resolver::results_type results;
    };

    // connection.cpp
    Deadline deadline(std::optional<std::chrono::nanoseconds> total_override) const;
    void drop(Connection& c);
    void release(std::unique_ptr<Connection> c);
    void close_all();
    Origin& origin_of(const Url& u);
    std::unique_ptr<Connection> checkout(const Url& u, const Deadline& d, const CancelCheck& cancel,
                                         const std::string& where, Origin*& origin);
    void abort(const bool& done, bool drain, Connection& c);
    void wait(const bool& done, const Deadline& d, const CancelCheck& cancel, Phase phase, bool drain,
              const std::string& where, Connection& c);
    static bool reusable(Connection& c, bool peek);
    void set_info(std::optional<TlsInfo> value);
    std::unique_ptr<Connection> acquire(const Url& u, Deadline& d, const CancelCheck& cancel, const std::string& where,
                                        bool idempotent, bool& reused);
    void connect(Connection& c, const Url& u, Deadline& d, const CancelCheck& cancel, const std::string& where);
    void tunnel(Connection& c, const Url& u, const detail::ProxyServer& proxy, Deadline& d, const CancelCheck& cancel,
                const std::string& where);

    // exchange.cpp
    std::shared_ptr<const Target> target(std::string_view url);
    std::unique_ptr<Connection> roundtrip(const Url& u, const Wire& req, std::optional<ResponseReader>& reader,
                                          const ReadSpec& spec, Deadline& d, const CancelCheck& cancel,
                                          const std::string& where, const BodySource* upload = nullptr);
    [[noreturn]] void read_failed(Connection& c, const ResponseReader& parser, const beast::error_code& ec,
                                  const std::string& where);
    void finished(Connection& c, const ResponseReader& parser);
    template <class Io>
    bool exchange(Connection& c, Io& io, const Wire& req, std::optional<ResponseReader>& reader, const ReadSpec& spec,
                  Deadline& d, const std::string& where, bool may_retry, const BodySource* upload);
    void read_body(Active& a, const CancelCheck& cancel, bool some);
    // Hands out what the decoder held back (a stream's pieces); throws as a failed read does.
    void drain(Active& a);
    void open(Active& a, std::string method, std::string_view url, Headers headers, std::string_view body_view,
              const RequestOptions& o, const CancelCheck& cancel, bool streaming);
};

}  // namespace beast_client
