// beast_client: a small synchronous HTTP/1.1 client on Boost.Beast.
//
// One Client owns one keep-alive connection (re-used while the host:port stays the same; re-opened after
// `Connection: close`, an HTTP/1.0 or EOF-delimited response, or an error) and its own io_context.
// A request on a re-used connection that the server had closed in the meantime (EOF / reset before any
// byte of the response) is retried once, transparently, on a new connection; nothing else is retried.
//
// Every request (resolve + connect + write + read, including that retry) is bounded by the client's
// timeout: the operations are asynchronous and the client runs its io_context in slices of at most
// `poll_interval` up to a deadline, so the deadline also covers name resolution. Between slices (only
// for requests that last that long) the optional CancelCheck is called; returning true closes the
// connection and throws Cancelled. This is what lets the Python binding deliver Ctrl-C while the GIL is
// released. 1xx interim responses are skipped. Only plain `http://host[:port][/path]` URLs are supported.
//
// The public header deliberately includes no Boost header, so code that only uses the client (the
// driver, the Python extension) compiles quickly.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace beast_client {

using Headers = std::vector<std::pair<std::string, std::string>>;

/// Polled while a request waits for the network (every poll interval, only when a request takes that
/// long). Returning true aborts the request: the connection is closed and `Cancelled` is thrown.
/// An exception thrown by the callback also aborts the request and is propagated unchanged.
using CancelCheck = std::function<bool()>;

struct Response {
    int status = 0;
    Headers headers;  // in the order received, names as sent by the server
    std::string body;
};

/// A parsed `http://` URL.
struct Url {
    std::string host;    // without brackets for IPv6 literals
    std::uint16_t port;  // 80 when not given
    std::string target;  // origin-form request target, "/" when the URL has no path
};

// ---- errors ---------------------------------------------------------------------------------------

/// Base class of every network / protocol error of this library.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
    /// Short class name ("ConnectionError", ...), used by the driver in failure reasons.
    virtual const char* type_name() const noexcept { return "Error"; }
};

/// Empty or malformed URL, non-http scheme (https is not supported), bad port, missing host.
class InvalidUrl : public Error {
public:
    using Error::Error;
    const char* type_name() const noexcept override { return "InvalidUrl"; }
};

/// The request did not complete within the client's timeout.
class TimeoutError : public Error {
public:
    using Error::Error;
    const char* type_name() const noexcept override { return "TimeoutError"; }
};

/// Connection refused / reset, unresolvable host, or the connection closed before the response was
/// complete (also when it closes in the middle of the body).
class ConnectionError : public Error {
public:
    enum class Kind { other, refused, reset };
    ConnectionError(const std::string& what, Kind kind = Kind::other) : Error(what), kind_(kind) {}
    Kind kind() const noexcept { return kind_; }
    const char* type_name() const noexcept override { return "ConnectionError"; }

private:
    Kind kind_;
};

/// The server sent something that is not a valid HTTP/1.x response (or exceeded a size limit).
class ProtocolError : public Error {
public:
    using Error::Error;
    const char* type_name() const noexcept override { return "ProtocolError"; }
};

/// The CancelCheck returned true; the connection was closed.
class Cancelled : public Error {
public:
    using Error::Error;
    const char* type_name() const noexcept override { return "Cancelled"; }
};

/// A second thread called into a Client that another thread is using (Client is not thread-safe).
class ConcurrentUse : public std::logic_error {
public:
    ConcurrentUse() : std::logic_error("Client is already in use by another thread") {}
};

// ---- API ------------------------------------------------------------------------------------------

/// Parses `http://host[:port][/path][?query]` (the fragment is dropped). Throws InvalidUrl.
Url parse_url(std::string_view url);

/// The Boost version the library was built with, e.g. "1.81.0".
std::string library_version();

/// This library's own version.
constexpr const char* version = "0.1.0";

/// Response headers may be this large in total (Beast's default is 8 KiB).
constexpr std::uint32_t header_limit = 8u * 1024u * 1024u;
/// `request()` keeps the body in memory and refuses larger ones (ProtocolError); `get()` has no limit.
constexpr std::uint64_t request_body_limit = 1024ull * 1024ull * 1024ull;

class Client {
public:
    /// `timeout` bounds each whole request (resolve + connect + write + read), must be > 0 (values
    /// above ten years are clamped). `poll_interval` is how often the CancelCheck is polled while a
    /// request waits (must be > 0). Throws std::invalid_argument.
    explicit Client(std::chrono::nanoseconds timeout = std::chrono::seconds(30),
                    std::chrono::nanoseconds poll_interval = std::chrono::milliseconds(50));
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    /// GET `url`, read the whole body (counted in last_body_bytes(), not kept) and return the status.
    /// Non-2xx statuses are returned, not thrown.
    int get(std::string_view url, const CancelCheck& cancel = {});

    /// Any method; the body is sent with Content-Length, the response body is kept in memory.
    /// Throws std::invalid_argument for a method or header that is not valid HTTP.
    Response request(std::string_view method, std::string_view url, const Headers& headers = {},
                     std::string_view body = {}, const CancelCheck& cancel = {});

    /// Closes the connection; the next request opens a new one (the client stays usable).
    void close();

    /// Body bytes of the last request (also of a failed one: what was received before it failed).
    std::size_t last_body_bytes() const noexcept;
    /// How many connections this client has opened so far (for tests and diagnostics).
    std::size_t connections_opened() const noexcept;
    /// Whether a keep-alive connection is currently open.
    bool connected() const noexcept;

    std::chrono::nanoseconds timeout() const noexcept { return timeout_; }
    std::chrono::nanoseconds poll_interval() const noexcept { return poll_interval_; }

private:
    struct Impl;
    class Guard;
    std::chrono::nanoseconds timeout_;
    std::chrono::nanoseconds poll_interval_;
    std::atomic<bool> busy_{false};
    // read without the guard by last_body_bytes() etc., hence atomic
    std::atomic<std::size_t> last_body_bytes_{0};
    std::atomic<std::size_t> connections_{0};
    std::atomic<bool> connected_{false};
    std::unique_ptr<Impl> impl_;
};

}  // namespace beast_client
