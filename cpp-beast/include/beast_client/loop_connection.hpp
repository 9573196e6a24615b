// beast_client::LoopConnection: one keep-alive HTTP/1.1 connection (http://) driven by the caller's event loop on
// the caller's own thread, for AsyncClient::get() / request()'s exchange without a hand-off to the IoThread. The
// caller owns the readiness notifications (e.g. asyncio's loop.add_reader / add_writer on fd()) and a timer; the
// connection makes the system calls (send, recv on its non-blocking socket) and Boost.Beast's parser reads what
// arrives, and after each step says what it waits for next (Step). Resolving and connecting are asynchronous on
// the IoThread: AsyncClient::connect() hands over the connected socket.
//
// The rules are the AsyncClient's (async_client.hpp): a request is written whole (the caller's body with
// Content-Length), the response read to its end (1xx interim responses skipped; the body counted, or kept with
// request_body_limit); Connection: close, HTTP/1.0, a body delimited by the connection's end or a request
// that could not be written whole end the connection after the response. A write cut short by the server may
// still be answered (the answer is the response). The idle check before re-use (usable()) and the one retry
// (Step::retry) are the Client's: a kept-alive connection found closed before any byte of the response came is
// given up, and the request sent again on a new connection when that is harmless (no byte of it could be
// written, or its method is idempotent); a POST of which bytes went out fails with ConnectionError. The errors
// are the AsyncClient's exceptions and messages (TimeoutError, ConnectionError, ProtocolError, ...).
//
// Not thread-safe: one thread (the loop's) uses a connection at a time. The destructor closes the socket: the
// caller stops watching fd() first.
#pragma once

#include "beast_client/client.hpp"

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace beast_client {

/// A request of AsyncClient::get() or request() as a LoopConnection sends it (AsyncClient::loop_request()): made
/// once per URL (and method and body length), then sent any number of times.
struct LoopRequest {
    Url url;             // the origin: url.host, url.port (url.https is false)
    std::string where;   // host:port, for messages
    std::string head;    // the request's head, Content-Length included when it has a body
    std::string method;  // for messages
    std::uint64_t body_length = 0;
    bool idempotent = false;   // may be sent again after a stale connection (RFC 9110 9.2.2)
    bool head_method = false;  // HEAD: the response has no body
};

class LoopConnection {
public:
    using Clock = std::chrono::steady_clock;

    /// What a request waits for after a step: the socket readable (readable()), writable (writable()), or it is
    /// over: done (status(), body_bytes(), body()), failed (error()), or to be sent again on another connection
    /// (retry: this one is closed).
    enum class Step { read, write, done, failed, retry };

    /// Takes a connected socket (AsyncClient::connect()'s) to `origin`'s host and port.
    LoopConnection(int fd, const LoopRequest& origin);
    ~LoopConnection();  // closes the socket
    LoopConnection(const LoopConnection&) = delete;
    LoopConnection& operator=(const LoopConnection&) = delete;

    int fd() const noexcept;
    bool matches(const Url& u) const noexcept;  // the same host and port
    bool busy() const noexcept;                 // a request is in progress
    /// False once the connection cannot carry another request (closed by either side, an error, not keep-alive).
    bool open() const noexcept;
    /// The time it was last handed back, idle (its creation before the first request).
    Clock::time_point idle_since() const noexcept;

    /// Whether this idle, open connection can carry a request started now: nothing unread is buffered, and (after
    /// 10 ms idle or more, or for a request that must not be sent twice) a non-blocking peek finds the server has
    /// neither closed nor reset it. False: it is closed (open() false).
    bool usable(bool idempotent);
    /// The socket became readable while idle: the server closed or reset it, or sent something unasked. The
    /// connection is then closed; false when it did (or was already), true for a false alarm.
    bool idle_readable();

    /// Starts `r` with `body` (r.body_length bytes, sent after the head), the response's body kept (`keep_body`:
    /// body()) or counted. `start`: when the request began (its total timeout counts from then); `may_retry`: the
    /// connection was re-used and this is the request's first attempt (Step::retry is then possible).
    /// `record_phases`: where the request's time goes on this connection is recorded (phases()).
    Step start(const LoopRequest& r, std::string_view body, bool keep_body, const Timeouts& timeouts,
               Clock::time_point start, bool may_retry, bool record_phases = false);
    /// One recv() and what Beast's parser makes of it. While the request is still being written, the server
    /// answers early: the rest is not sent, and the connection closes after that answer.
    Step readable();
    Step writable();  // the rest of the request
    /// A timer went off: past the request's deadline it fails with TimeoutError (closed), else it waits on.
    Step expire(Clock::time_point now);
    /// When the request in progress times out (total, or read timeout since the last bytes); max() when never.
    Clock::time_point deadline() const noexcept;

    int status() const noexcept;
    std::uint64_t body_bytes() const noexcept;
    std::string& body() noexcept;
    std::exception_ptr error() const noexcept;
    /// A request started with record_phases: its send, wait (the request written -> the recv() that brought the
    /// response's first bytes, the event loop's time to get round to the socket included) and receive (-> the
    /// response read whole); connect, tls and dns are 0 (AsyncClient::connect_recording's). nullopt otherwise.
    std::optional<Phases> phases() const;

    /// Closes the socket's use: the connection is not open any more (the socket itself closes with the object).
    /// A request in progress is abandoned.
    void close() noexcept;

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace beast_client
