// beast_client::AsyncClient: the Client's requests as asynchronous operations of Boost.Beast / Boost.Asio
// (async_resolve, async_connect, the TLS stream's async_handshake, async_write, async_read), on an io_context
// that a thread of its own runs (IoThread). No thread per request: one IoThread carries every request of every
// AsyncClient made on it, and an operation costs its callback, called on that thread when it is done.
//
// The same settings and behaviour as Client (beast_client/client.hpp): a pool of keep-alive connections per
// origin (max_connections bounds them; a request finding them all busy waits for one, at most its connect
// timeout and what is left of its total timeout), the idle check before re-use and the one retry of an
// idempotent request on a kept-alive connection the server closed, redirects, decoding, cookies, max_body_size,
// proxies and TLS session resumption (RequestOptions, ProxyConfig). The timeouts are timers instead of poll
// slices. What differs: a streamed request body is an AsyncBodySource (a BodySource would block the IoThread
// while it reads), and there is no CancelCheck: AsyncOperation::cancel() abandons an operation from any thread,
// closing its connection.
//
// The pool, the connections and every operation live on the IoThread; the methods below only check their
// arguments (throwing at once: InvalidUrl, std::invalid_argument) and hand the operation over, so they may be
// called from any thread, and an AsyncClient may be shared by any number of callers.
#pragma once

#include "beast_client/client.hpp"
#include "beast_client/loop_connection.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace beast_client {

/// An io_context and the thread that runs it, where AsyncClients do their work. Destroying it (or stop()) stops
/// the thread: the operations still running are abandoned, their callbacks never called. It must outlive the
/// AsyncClients made on it.
class IoThread {
public:
    IoThread();
    ~IoThread();
    IoThread(const IoThread&) = delete;
    IoThread& operator=(const IoThread&) = delete;

    /// Stops the thread and waits for it (idempotent). Operations started later fail at once (std::runtime_error).
    void stop();
    bool stopped() const noexcept;

    struct Impl;
    Impl& impl() noexcept { return *impl_; }

private:
    std::unique_ptr<Impl> impl_;
};

/// A running operation. cancel() (from any thread, at any time, idempotent) abandons it: its connection is closed
/// and, unless it has already been called, its callback is called with Cancelled.
class AsyncOperation {
public:
    virtual ~AsyncOperation() = default;
    virtual void cancel() = 0;
};
using AsyncHandle = std::shared_ptr<AsyncOperation>;

/// get()'s result: the status and the body bytes received (counted, not kept).
struct FetchResult {
    int status = 0;
    std::uint64_t body_bytes = 0;
    std::optional<Phases> phases;  // get(url, done, true): where the request's time went
};

class AsyncResponseStream;

// Each callback is called exactly once, on the IoThread, with a value or an error (the exceptions of
// Client: TimeoutError, ConnectionError, TLSError, ProtocolError, ..., Cancelled), never both. It must not
// block (it holds up every request of the IoThread); an exception it throws is dropped.
using FetchCallback = std::function<void(FetchResult, std::exception_ptr)>;
using ResponseCallback = std::function<void(Response, std::exception_ptr)>;
using StreamCallback = std::function<void(std::unique_ptr<AsyncResponseStream>, std::exception_ptr)>;
/// The next piece of a stream's body, or nullopt at its end.
using ChunkCallback = std::function<void(std::optional<std::string>, std::exception_ptr)>;

/// An AsyncBodySource's next pieces, written as one chunk of the body (empty pieces are skipped; none at all is
/// the body's end), or the error that ends the request.
using PiecesCallback = std::function<void(std::vector<std::string>, std::exception_ptr)>;

/// send()'s or stream()'s body read piece by piece while it is sent (Transfer-Encoding: chunked), as
/// RequestOptions::upload is for Client: never sent twice (a 307 / 308 answer is returned, not followed; a
/// kept-alive connection found closed once a piece was taken is a ConnectionError). The exchange calls next() on
/// the IoThread, one call at a time, once the previous pieces have been written; `done` may be called from any
/// thread, once: with the pieces that are ready (one chunk on the wire, as many pieces as there are: no copy to
/// join them), none at the end, or an error, which ends the request (its connection closed) as its error.
/// close() is called once, on the IoThread, when the request no longer reads the source (its body was sent, or it
/// failed or was cancelled first): a `done` still held is then dropped uncalled. The total timeout runs while the
/// source is waited for.
class AsyncBodySource {
public:
    virtual ~AsyncBodySource() = default;
    virtual void next(PiecesCallback done) = 0;
    virtual void close() noexcept = 0;
    /// The pieces of the last next() once they are written (IoThread): a source may keep their buffers for the
    /// pieces to come (memory already touched, no allocation); by default they are freed.
    virtual void recycle(std::vector<std::string> written) noexcept { (void)written; }
};

/// A connected socket (which the callee owns), or -1 and the error.
using SocketCallback = std::function<void(int, std::exception_ptr)>;
/// The same, with the time its connecting took (Phases: dns and connect; the rest 0).
using ConnectCallback = std::function<void(int, Phases, std::exception_ptr)>;

class AsyncClient {
public:
    /// Client's settings (there is no poll interval: nothing polls). Throws as Client's constructor does (a CA
    /// file is loaded now).
    AsyncClient(IoThread& io, const Timeouts& timeouts, TlsConfig tls, std::size_t max_connections = 0,
                const ProxyConfig& proxy = {});
    /// Closes the idle connections; operations in flight finish.
    ~AsyncClient();
    AsyncClient(const AsyncClient&) = delete;
    AsyncClient& operator=(const AsyncClient&) = delete;

    /// Client::get(): GET `url` exactly as given, the whole body read and counted; with `phases`, where its time
    /// went in FetchResult::phases (as Client::get's Phases; `wait` and `receive` include the IoThread's time to
    /// get round to the socket when it carries other requests).
    AsyncHandle get(std::string_view url, FetchCallback done, bool phases = false);
    /// Client::request(): `method` `url` as given with `body` (Content-Length); the response kept.
    AsyncHandle request(std::string_view method, std::string_view url, const Headers& headers, std::string body,
                        ResponseCallback done);
    /// Client::send(): the application's request (redirects, decoding, ... as `options` say, Response::phases
    /// with options.phases; options.upload must be empty: std::invalid_argument). With `upload`, the body is
    /// streamed from it (`body` must be empty: std::invalid_argument).
    AsyncHandle send(std::string_view method, std::string_view url, Headers headers, std::string body,
                     const RequestOptions& options, ResponseCallback done,
                     std::shared_ptr<AsyncBodySource> upload = nullptr);
    /// Client::stream(): as send(), done once the final response's head is read (it records no phases).
    AsyncHandle stream(std::string_view method, std::string_view url, Headers headers, std::string body,
                       const RequestOptions& options, StreamCallback done,
                       std::shared_ptr<AsyncBodySource> upload = nullptr);

    /// get()'s request to `url` (`method` GET, no body), or request()'s without headers (`method`, a body of
    /// `body_length` bytes), as a LoopConnection sends it (beast_client/loop_connection.hpp: on the caller's own
    /// event loop); nullopt for an https:// URL or one that goes through a proxy, which only the AsyncClient's own
    /// operations take (and always with a Boost older than 1.75, whose sockets cannot be released from their
    /// io_context). Throws InvalidUrl, std::invalid_argument (a method that is not valid HTTP).
    std::optional<LoopRequest> loop_request(std::string_view method, std::string_view url,
                                            std::uint64_t body_length) const;
    /// A new connection for a LoopConnection, outside this client's pool (max_connections is the caller's to
    /// keep): resolved and connected on the IoThread within the client's connect and total timeouts, then handed
    /// over: `done` is called on the IoThread with the connected socket (non-blocking, close-on-exec,
    /// TCP_NODELAY), or with -1 and the error (ConnectionError, TimeoutError, Cancelled).
    AsyncHandle connect(const LoopRequest& r, SocketCallback done);
    /// connect(), with the phases of connecting (dns when a name was resolved, connect) given with the socket.
    AsyncHandle connect_recording(const LoopRequest& r, ConnectCallback done);

    /// Closes the idle connections, and the others as they are handed back (the client stays usable).
    void close();

    /// The TLS version and cipher of the most recently opened connection (see Client::tls_info()).
    std::optional<TlsInfo> tls_info() const;
    std::size_t connections_opened() const noexcept;
    const Timeouts& timeouts() const noexcept;
    std::size_t max_connections() const noexcept;

    struct Impl;

private:
    std::shared_ptr<Impl> impl_;
};

/// AsyncClient::stream()'s response: the head, and the body piece by piece. It holds its connection until the
/// body has been read to its end (then the connection goes back to the pool) or it is closed. One next() at a
/// time (another meanwhile: std::logic_error). It may outlive its AsyncClient, not the IoThread.
class AsyncResponseStream {
public:
    struct State;
    explicit AsyncResponseStream(std::shared_ptr<State> state);
    ~AsyncResponseStream();  // close()
    AsyncResponseStream(const AsyncResponseStream&) = delete;
    AsyncResponseStream& operator=(const AsyncResponseStream&) = delete;

    int status() const noexcept;
    const std::string& reason() const noexcept;
    const Headers& headers() const noexcept;
    const std::string& url() const noexcept;  // the final URL, after redirects

    /// The next piece of the body (decoded when decompressing; never empty), nullopt at its end and after
    /// close() or an error. The total timeout, if any, bounds the whole stream.
    AsyncHandle next(ChunkCallback done);
    /// Closes the connection unless the body was read to its end. Idempotent, from any thread.
    void close();

private:
    std::shared_ptr<State> state_;
};

}  // namespace beast_client
