// beast_client: a small synchronous HTTP/1.1 client on Boost.Beast, with HTTPS (Boost.Asio SSL, OpenSSL).
//
// A Client may be shared by threads: it keeps a pool of keep-alive connections per origin (scheme + host +
// port), each connection carrying one request at a time. A request takes an idle connection of its origin (the
// most recently used), or opens one while fewer than `max_connections` (unbounded by default) are open or in use
// for that origin, or else waits until one is handed back, at most its connect timeout and what is left of its
// total timeout (then TimeoutError). Idle connections are kept for at most `pool_size` origins (the least
// recently used origin's closed first), so that requests alternating between hosts do not reconnect every time.
// The pool is locked only to take a connection out and to hand it back: requests on different connections run
// in parallel. A connection is re-opened after `Connection: close`, an HTTP/1.0 or EOF-delimited response, or an
// error. Each connection has its own io_context, run by the thread that uses it. (AsyncClient, in
// beast_client/async_client.hpp, is the same client on an io_context of a thread of its own.)
// Before a kept-alive connection that sat idle for 10 ms or more is re-used, and before any request that could
// not be sent again (not idempotent, or a streamed body), a non-blocking peek checks that the server has not
// closed it meanwhile (its keep-alive timeout); if it has, a new connection is opened transparently, for every
// method, before anything is sent. (An idempotent request on a connection idle for less takes it as it is:
// servers close idle connections after seconds, and requests in a busy loop pay no extra syscall.) Over TLS
// the peek looks at the TCP socket under the TLS layer: an idle connection must be silent, so any byte there
// (a close_notify or another alert, or the FIN) means it is going away and it is replaced too. If the server
// closes a re-used connection after that check (a race with its timeout: EOF / reset before any byte of the
// response), the request is sent again, once, on a new connection, when that is harmless and its body is not
// streamed (RequestOptions::upload): no byte of it could be written (the connection was found closed as it went
// out: it cannot have reached the server), or its method is idempotent (GET, HEAD, PUT, DELETE, OPTIONS, TRACE;
// RFC 9110 9.2.2). A POST, PATCH or other request of which some bytes went out is never re-sent: it fails with
// ConnectionError. Nothing else is retried.
//
// Timeouts (Timeouts): `total` bounds each whole request (resolve + connect + TLS handshake + write + read,
// including that retry; for a ResponseStream, until its body is read), `connect` the resolve + TCP connect +
// TLS handshake, `read` the longest wait for the next bytes of the response (it restarts whenever body bytes
// arrive). Name resolution, connecting and everything over TLS are asynchronous: the client runs its
// io_context in slices of at most `poll_interval` up to the nearest deadline, so the deadlines also cover name
// resolution. Over http:// the calling thread sends and receives on the connected socket itself, whose
// timeouts (SO_SNDTIMEO / SO_RCVTIMEO) are the same slices: a keep-alive request is one send() and one recv().
// Between slices (only for requests that last that long) the optional CancelCheck is called; returning true
// closes the connection and throws Cancelled. This is what lets the Python binding deliver Ctrl-C while the
// GIL is released. 1xx interim responses are skipped. URLs: `http://` and `https://host[:port][/path]`.
//
// get() and request() send exactly what they are given (no redirects, no Accept-Encoding, no URL
// re-encoding): get() is the benchmark's hot path (it parses a URL and builds its request once, for as long as
// it is called with the same URL). send() and stream() add what an application expects:
// redirects (RequestOptions), decoding of gzip / deflate (Boost.Beast's header-only zlib port; the gzip and zlib
// wrappers and their checksums are checked here), br (libbrotlidec) and zstd (libzstd), percent-encoding of
// spaces and non-ASCII bytes in the URL (encode_url(); a control character is an InvalidUrl), a cookie jar
// (CookieJar, beast_client/cookies.hpp), a limit on the body kept, and a body streamed as it is sent
// (RequestOptions::upload, chunked).
//
// Proxies (ProxyConfig, beast_client/proxy.hpp): http:// URLs in absolute form to the proxy, https:// ones
// through a CONNECT tunnel (part of connecting: the connect timeout covers it); the pool still keeps the
// connections per origin.
//
// HTTPS: TLS 1.2 and 1.3 (OpenSSL's defaults otherwise), SNI for host names (not for IP addresses, RFC 6066),
// the certificate chain verified against the system's trust store (or a CA bundle, TlsConfig), the host name
// or IP address checked against the certificate. A failed handshake (untrusted, expired or wrong-host
// certificate, no common protocol, a server that does not speak TLS) is a TLSError. Connections are closed
// without waiting for the TLS close_notify exchange (a request never blocks on it). Each client keeps the TLS
// sessions of its connections per origin and resumes one on its next connection there (TLS 1.2 sessions,
// TLS 1.3 tickets; never shared between clients).
//
// The public header deliberately includes no Boost or OpenSSL header, so code that only uses the client
// (the driver, the Python extension) compiles quickly.
#pragma once

#include "beast_client/proxy.hpp"
#include "beast_client/version.hpp"  // BEAST_CLIENT_VERSION

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace beast_client {

using Headers = std::vector<std::pair<std::string, std::string>>;

class CookieJar;  // beast_client/cookies.hpp

/// Polled while a request waits for the network (every poll interval, only when a request takes that
/// long). Returning true aborts the request: the connection is closed and `Cancelled` is thrown.
/// An exception thrown by the callback also aborts the request and is propagated unchanged.
using CancelCheck = std::function<bool()>;

/// A request body read piece by piece while it is sent (Transfer-Encoding: chunked): each call sets `piece` to the
/// next piece (empty pieces are skipped) and returns true, or returns false at the end. The piece is written as it
/// is, not copied: its bytes must stay valid until the source's next call (or the request's end). An exception it
/// throws ends the request (its connection is closed) and is propagated unchanged.
using BodySource = std::function<bool(std::string_view& piece)>;

/// Where a request's time went (docs/raw-format.md, "Phases"): durations on the monotonic clock of the steps the
/// library itself takes, recorded only when asked (a Phases* to get() / request(), RequestOptions::phases for
/// send()); otherwise not a single clock read more. A step that did not happen is 0 (connect, tls and dns on a
/// re-used connection; tls over http://). A request that made several exchanges (send()'s redirects, the one
/// re-send on a new connection after a kept-alive one was found closed) adds each exchange's steps up.
struct Phases {
    std::chrono::nanoseconds dns{0};      // resolving a host name (never for an IP address)
    std::chrono::nanoseconds connect{0};  // the TCP connect (through a proxy: to the proxy, and https's CONNECT tunnel)
    std::chrono::nanoseconds tls{0};      // the TLS handshake
    std::chrono::nanoseconds send{0};     // writing the request (head and body) until its last byte was handed over
    std::chrono::nanoseconds wait{0};     // the request written -> the first read that returned response bytes
    std::chrono::nanoseconds receive{0};  // those first bytes -> the response read whole (send(): its body too)
    bool resolved = false;                // a host name was resolved (`dns` is one of the request's phases)
};

struct Response {
    int status = 0;
    Headers headers;     // in the order received, names as sent by the server
    std::string body;    // send(): decoded when it was gzip / deflate encoded (RequestOptions::decompress)
    std::string reason;  // the status line's reason phrase (may be empty)
    std::string url;     // send(): the final URL, after redirects (encoded); request(): empty
    /// send() with RequestOptions::phases, request() with a Phases*: where the request's time went.
    std::optional<Phases> phases;
};

/// The client's time limits; an unset one is no limit. Each must be > 0 when set.
struct Timeouts {
    std::optional<std::chrono::nanoseconds> total;    // a whole request (or a whole stream)
    std::optional<std::chrono::nanoseconds> connect;  // resolve + TCP connect + TLS handshake
    std::optional<std::chrono::nanoseconds> read;     // the longest wait for the next bytes of the response
};

/// What send() / stream() do beyond the exchange itself.
struct RequestOptions {
    /// Overrides the client's total timeout for this request (unset: the client's).
    std::optional<std::chrono::nanoseconds> timeout;
    /// 301, 302, 303 -> the next request is a GET without body (HEAD stays HEAD); 307, 308 keep the method
    /// and body. Authorization, Cookie and Proxy-Authorization are dropped when the next hop is another
    /// origin (scheme + host + port). A relative Location is resolved against the current URL.
    bool follow_redirects = true;
    /// At most this many redirects are followed; one more is TooManyRedirects.
    int max_redirects = 10;
    /// Send `Accept-Encoding: gzip, deflate, br, zstd` (unless the caller set one) and decode such bodies (one
    /// coding; stacked codings are returned as received). The Content-Encoding and Content-Length headers are
    /// returned as received.
    bool decompress = true;
    /// Added as User-Agent when the headers have none; empty: "beast-client/<version>".
    std::string user_agent;
    /// send() only: the largest body kept, decoded, in bytes; a larger one (a declared Content-Length too) is
    /// BodyTooLarge and nothing of it is kept. Unset: request_body_limit.
    std::optional<std::uint64_t> max_body_size;
    /// Every hop stores its response's Set-Cookie fields here and sends the cookies for its URL (unless the
    /// request has its own Cookie header). Null: no cookies.
    std::shared_ptr<CookieJar> cookies;
    /// When set, the request's body (the `body` argument must be empty): read while it is sent, with
    /// Transfer-Encoding: chunked. It cannot be sent twice: a 307 / 308 answer is returned instead of followed
    /// (a 301 / 302 / 303 is, as a GET without body), and a kept-alive connection the server closed under it
    /// is no reason to send it again (ConnectionError).
    BodySource upload;
    /// Record the request's phases: in Response::phases (send()), ResponseStream::phases() (stream(): its
    /// `receive` ends when the body has been read to its end, the caller's time between next() calls included).
    bool phases = false;
};

/// A parsed `http://` or `https://` URL.
struct Url {
    std::string host;    // lower-case, without brackets for IPv6 literals
    std::uint16_t port;  // 80 (http) or 443 (https) when not given
    std::string target;  // origin-form request target, "/" when the URL has no path
    bool https = false;
};

/// How a Client verifies HTTPS servers (it has no effect on http:// URLs).
struct TlsConfig {
    /// false: no verification at all, neither the certificate chain nor the host name. UNSAFE: anybody on the
    /// path can impersonate the server. For measurements against a test server only.
    bool verify = true;
    /// Empty: trust the system's trust store (OpenSSL's default paths, on Debian /etc/ssl/certs), read once
    /// per process. Otherwise a PEM file of CA certificates to trust instead (or a directory of hashed
    /// certificates, c_rehash), loaded when the Client is constructed.
    std::string ca_file;
};
// The TLS settings and trust store of a TlsConfig (an SSL_CTX, which costs ~0.5 ms to create with OpenSSL 3,
// more with a CA file) are shared process-wide by the Clients with the same TlsConfig and the same CA file
// (path, inode, size and modification time: an edited file is loaded again), so a Client per request stays
// cheap. A connection (SSL) is never shared.

/// The negotiated protocol of a TLS connection, OpenSSL's names.
struct TlsInfo {
    std::string version;  // "TLSv1.3", "TLSv1.2"
    std::string cipher;   // "TLS_AES_256_GCM_SHA384", "ECDHE-RSA-AES128-GCM-SHA256"
};

// ---- errors ---------------------------------------------------------------------------------------

/// Base class of every network / protocol error of this library.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
    /// Short class name ("ConnectionError", ...), used by the driver in failure reasons.
    virtual const char* type_name() const noexcept { return "Error"; }
};

/// Empty or malformed URL, a scheme other than http / https, bad port, missing host.
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

/// A TLS failure: the server's certificate is untrusted, expired or not valid for the host name / IP address,
/// the handshake failed (no common protocol version or cipher, an alert, the server closed or reset the
/// connection during the handshake, an https:// URL to a server that speaks plain HTTP), or a TLS error on an
/// established connection. (A handshake that does not finish within the timeout is a TimeoutError.)
class TLSError : public ConnectionError {
public:
    using ConnectionError::ConnectionError;
    const char* type_name() const noexcept override { return "TLSError"; }
};

/// The server sent something that is not a valid HTTP/1.x response (or exceeded a size limit).
class ProtocolError : public Error {
public:
    using Error::Error;
    const char* type_name() const noexcept override { return "ProtocolError"; }
};

/// A body larger than RequestOptions::max_body_size (decoded), or than request_body_limit. Its type_name() is
/// ProtocolError's (the drivers' failure classes).
class BodyTooLarge : public ProtocolError {
public:
    using ProtocolError::ProtocolError;
};

/// More redirects than RequestOptions::max_redirects (the message names the last URL).
class TooManyRedirects : public Error {
public:
    using Error::Error;
    const char* type_name() const noexcept override { return "TooManyRedirects"; }
};

/// The CancelCheck returned true; the connection was closed.
class Cancelled : public Error {
public:
    using Error::Error;
    const char* type_name() const noexcept override { return "Cancelled"; }
};

// ---- API ------------------------------------------------------------------------------------------

/// Parses `http[s]://host[:port][/path][?query]` (the fragment is dropped). Throws InvalidUrl.
Url parse_url(std::string_view url);

/// Throws InvalidUrl when `url` holds a control character (U+0000-U+001F, U+007F) anywhere, the fragment
/// included: send() and stream() refuse one rather than encode or drop it (a WHATWG parser drops a tab, CR
/// or LF, and the request would go elsewhere).
void reject_control_characters(std::string_view url);

/// Percent-encodes (UTF-8 bytes as %XX) what may not appear raw in a URL: in the path, controls, space, '"',
/// '<', '>', '`', '{', '}' and non-ASCII bytes; in the query, controls, space, '"', '\'', '<', '>' and non-ASCII
/// bytes (the WHATWG URL standard's sets, as the Rust url crate applies them). Existing %XX escapes and
/// everything else are kept; the fragment is dropped. The scheme and authority are left to parse_url().
std::string encode_url(std::string_view url);

/// Percent-encodes everything but the RFC 3986 unreserved characters (A-Z a-z 0-9 - . _ ~); a space is %20.
std::string encode_component(std::string_view text);

/// `url` with `name=value` pairs (each encode_component()ed) appended to its query ('?' or '&').
std::string add_query(std::string_view url, const std::vector<std::pair<std::string, std::string>>& params);

/// RFC 3986 5.2 reference resolution: `reference` (a Location header: absolute, scheme-relative, absolute-
/// or relative-path, query-only) against the absolute http(s) URL `base`. Throws InvalidUrl.
std::string resolve_url(std::string_view base, std::string_view reference);

/// Throws std::invalid_argument for a header that request() / send() would refuse: a name that is not an
/// RFC 9110 token, a value with a control character other than HTAB, a Content-Length or Transfer-Encoding.
void validate_headers(const Headers& headers);

/// The Boost version the library was built with, e.g. "1.81.0".
std::string library_version();

/// This library's own version (beast_client/version.hpp, which CMakeLists.txt's project() reads too).
constexpr const char* version = BEAST_CLIENT_VERSION;

/// Response headers may be this large in total (Beast's default is 8 KiB).
constexpr std::uint32_t header_limit = 8u * 1024u * 1024u;
/// `request()` and `send()` keep the body in memory and refuse larger ones (BodyTooLarge); `get()` has no limit.
constexpr std::uint64_t request_body_limit = 1024ull * 1024ull * 1024ull;

class Client;

/// The response of Client::stream(): the status line and headers, and the body read piece by piece.
/// Belongs to its Client: it must not outlive it. It holds its connection (counted against max_connections)
/// until the body has been read to the end, when the connection goes back to the Client's pool; close() (or
/// the destructor) before that closes it. One stream is used by one thread at a time (the Client by many).
class ResponseStream {
public:
    ~ResponseStream();
    ResponseStream(const ResponseStream&) = delete;
    ResponseStream& operator=(const ResponseStream&) = delete;

    int status() const noexcept;
    const std::string& reason() const noexcept;
    const Headers& headers() const noexcept;
    const std::string& url() const noexcept;  // the final URL, after redirects

    /// Replaces `chunk` with the next piece of the body (decoded when decompressing; never empty) and returns
    /// true, or returns false at the end of the body. Errors as for send(); after an error or close() it
    /// returns false.
    bool next(std::string& chunk, const CancelCheck& cancel = {});
    /// Whether the whole body has been read (or the stream closed / failed).
    bool done() const noexcept;
    /// With RequestOptions::phases: where the request's time went (complete once the body has been read to its
    /// end); nullopt otherwise.
    std::optional<Phases> phases() const;
    /// Closes the connection unless the body was read to its end. Idempotent.
    void close();

private:
    friend class Client;
    struct State;
    explicit ResponseStream(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

class Client {
public:
    /// `timeout` bounds each whole request (resolve + connect + TLS handshake + write + read), must be > 0
    /// (values above ten years are clamped). `poll_interval` is how often the CancelCheck is polled while a
    /// request waits (must be > 0). Throws std::invalid_argument.
    explicit Client(std::chrono::nanoseconds timeout = std::chrono::seconds(30),
                    std::chrono::nanoseconds poll_interval = std::chrono::milliseconds(50));
    /// The same, with how HTTPS servers are verified. A tls.ca_file that cannot be opened throws
    /// std::system_error (its errno: ENOENT, EACCES, ...); one without any PEM certificate throws
    /// std::invalid_argument. The system trust store (tls.verify and no ca_file) is loaded by the process's
    /// first https connection.
    Client(std::chrono::nanoseconds timeout, TlsConfig tls,
           std::chrono::nanoseconds poll_interval = std::chrono::milliseconds(50));
    /// Separate total / connect / read timeouts (each unset = none; values above ten years are clamped).
    /// `max_connections`: the most connections open or in use per origin at once (0: no bound). `proxy`: the
    /// proxies to go through (none by default: the environment is not read here); InvalidUrl for a proxy URL
    /// it cannot use.
    Client(const Timeouts& timeouts, TlsConfig tls,
           std::chrono::nanoseconds poll_interval = std::chrono::milliseconds(50), std::size_t max_connections = 0,
           const ProxyConfig& proxy = {});
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    /// GET `url`, read the whole body (counted in last_body_bytes(), not kept) and return the status.
    /// Non-2xx statuses are returned, not thrown.
    int get(std::string_view url, const CancelCheck& cancel = {});
    /// The same, with this request's body bytes in `body_bytes` (also when it throws: what was received), for
    /// threads sharing the client, whose last_body_bytes() is whichever request finished last. With `phases`,
    /// where the request's time went is written there (set to zero first; after an exception, what was recorded
    /// until then).
    int get(std::string_view url, std::size_t& body_bytes, const CancelCheck& cancel = {}, Phases* phases = nullptr);

    /// Any method; the body is sent with Content-Length, the response body is kept in memory.
    /// Throws std::invalid_argument for a method or header that is not valid HTTP.
    /// With `phases`, its phases are written there (as get()) and kept in Response::phases too.
    Response request(std::string_view method, std::string_view url, const Headers& headers = {},
                     std::string_view body = {}, const CancelCheck& cancel = {}, Phases* phases = nullptr);

    /// An application's request: `url` is encode_url()ed, redirects are followed and gzip / deflate bodies
    /// decoded as `options` say (see RequestOptions); Response::url is the final URL. Throws as request(),
    /// and TooManyRedirects; InvalidUrl for a control character anywhere in `url`; ProtocolError for a
    /// Location that cannot be followed (not http(s), unparsable, a control character); BodyTooLarge.
    Response send(std::string_view method, std::string_view url, const Headers& headers, std::string_view body,
                  const RequestOptions& options, const CancelCheck& cancel = {});

    /// As send(), but returns once the final response's headers are read: the body is read with
    /// ResponseStream::next() (no size limit). The stream must not outlive this Client.
    std::unique_ptr<ResponseStream> stream(std::string_view method, std::string_view url, const Headers& headers,
                                           std::string_view body, const RequestOptions& options,
                                           const CancelCheck& cancel = {});

    /// Closes every idle pooled connection; the next request opens a new one (the client stays usable).
    /// Connections in use by other threads (or a ResponseStream) are not interrupted.
    void close();

    /// Body bytes of the last request that finished (also of a failed one: what was received before it
    /// failed). With threads sharing the client, of whichever finished last: see get(url, body_bytes).
    std::size_t last_body_bytes() const noexcept;
    /// How many connections this client has opened so far (for tests and diagnostics).
    std::size_t connections_opened() const noexcept;
    /// Whether a connection is currently open (idle in the pool, or in use).
    bool connected() const noexcept;
    /// The most connections per origin (0: no bound).
    std::size_t max_connections() const noexcept { return max_connections_; }
    /// The TLS version and cipher of the most recently opened connection (kept after it closed); nullopt
    /// before the first connection and when that connection was plain http. May be called from any thread.
    std::optional<TlsInfo> tls_info() const;
    const TlsConfig& tls_config() const noexcept { return tls_; }
    const ProxyConfig& proxy_config() const noexcept { return proxy_; }

    /// The total timeout (zero when there is none).
    std::chrono::nanoseconds timeout() const noexcept { return timeouts_.total.value_or(std::chrono::nanoseconds(0)); }
    const Timeouts& timeouts() const noexcept { return timeouts_; }
    std::chrono::nanoseconds poll_interval() const noexcept { return poll_interval_; }

    /// How many origins (scheme + host + port) keep idle connections at most.
    static constexpr std::size_t pool_size = 8;

private:
    friend class ResponseStream;
    struct Impl;
    Timeouts timeouts_;
    std::chrono::nanoseconds poll_interval_;
    TlsConfig tls_;
    std::size_t max_connections_ = 0;
    ProxyConfig proxy_;
    // written by whichever thread finishes a request, hence atomic
    std::atomic<std::size_t> last_body_bytes_{0};
    std::atomic<std::size_t> connections_{0};
    std::unique_ptr<Impl> impl_;
};

}  // namespace beast_client
