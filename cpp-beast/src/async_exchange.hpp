// One AsyncClient operation (Exchange): a request from taking a connection out of the pool to its callback,
// through connecting (resolve, TCP, a proxy's tunnel, the TLS handshake), writing, reading, the one retry and
// the redirects; for a stream, its pieces afterwards. A chain of Beast / Asio completion handlers on the
// IoThread, each holding the Exchange alive; its timer enforces the deadlines (Deadline, as the Client's).
#pragma once

#include "async_impl.hpp"

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace beast_client::detail {

// Calls a callback once (and releases its captures with it); what it throws is dropped: the IoThread carries every
// other request.
template <class Callback, class... Args>
void invoke(Callback& cb, Args&&... args) {
    if (!cb) return;
    auto call = std::move(cb);
    cb = nullptr;
    try {
        call(std::forward<Args>(args)...);
    } catch (...) {
    }
}

class Exchange final : public AsyncOperation, public std::enable_shared_from_this<Exchange> {
public:
    // connect: AsyncClient::connect(), the connection handed over as a socket once it is open (on_socket)
    enum class Kind { fetch, response, stream, connect };

    Exchange(std::shared_ptr<AsyncClient::Impl> client, Kind kind);

    // Set by the API before start(). get() / request(): `u` and `wire` as they are; send() / stream(): `plan`.
    std::optional<RequestPlan> plan;
    Url u;
    Wire wire;
    std::string where;
    ReadSpec spec;
    std::optional<std::chrono::nanoseconds> total_override;
    bool prewired = false;  // `wire` is already the first hop's (made by the caller, which so checked it)
    std::shared_ptr<AsyncBodySource> upload;  // send() / stream(): the streamed body (while plan->streamed())
    FetchCallback on_fetch;
    ResponseCallback on_response;
    StreamCallback on_stream;
    SocketCallback on_socket;
    ConnectCallback on_connected_phases;  // (connect, recording phases)
    bool record_phases = false;           // the request's phases are recorded (in recorded_)

    void start();            // any thread
    void cancel() override;  // any thread
    // The pool hands over a connection this exchange waited for (IoThread).
    void resume(std::unique_ptr<AsyncConn> c);
    // The pool took it out of the queue and posted resume().
    void set_handing() {
        handing_ = true;
        waiting_ = false;
    }

    // A stream's (IoThread).
    void next(ChunkCallback done);
    void close_stream();

private:
    enum class State { running, streaming, finished };

    std::shared_ptr<Exchange> self() { return shared_from_this(); }
    bool stopped();  // a handler's first check: finished, or abandoned (then fails)
    void arm();
    void on_timer();
    void abort(std::exception_ptr why);

    void begin();
    void hop();
    void acquire();
    void connect();
    void on_resolved(const std::vector<tcp::endpoint>& endpoints);
    void on_connected();
    void tunnel();
    void handshake();
    void connected();
    void hand_over();
    void write();
    void wrote(const beast::error_code& e, std::size_t sent);
    void pull();
    void on_upload_pieces(std::vector<std::string> pieces, std::exception_ptr e);
    void end_upload();
    void read();
    void read_message();
    void on_read(beast::error_code ec);
    void headed();
    void read_rest(bool redirect);
    void on_rest(beast::error_code ec, bool redirect);
    void retry();
    void write_failed();
    void closed_under(const char* when);

    void finish_ok();
    void finish_error(std::exception_ptr e);
    void fail_ec(const beast::error_code& ec, Phase phase, const std::string& to);
    void read_failed(const beast::error_code& ec);
    void drop_conn();     // closes the connection (if any) and hands it back: its slot is freed
    void release_conn();  // hands it back as it is: an open one is kept for the next request

    template <class F>
    void with_stream(F&& f) {
        if (conn_->https)
            f(*conn_->tls);
        else
            f(conn_->stream);
    }

    // the stream's pieces
    void pump();
    void on_piece(beast::error_code ec);
    void deliver(std::optional<std::string> piece);
    void stream_fail(std::exception_ptr e);

    std::shared_ptr<AsyncClient::Impl> client_;
    Kind kind_;
    State state_ = State::running;
    net::steady_timer timer_;
    Clock::time_point armed_at_ = Deadline::never;
    unsigned timer_gen_ = 0;
    Deadline d_;
    Phase phase_ = Phase::connect;
    std::string to_;                      // what is being connected to (the proxy, for the server), for messages
    const ProxyServer* proxy_ = nullptr;  // this hop's, or null
    AsyncOrigin* origin_ = nullptr;
    std::unique_ptr<AsyncConn> conn_;
    std::optional<ResponseReader> reader_;
    std::optional<http::response_parser<http::empty_body>> tunnel_answer_;
    std::string tunnel_request_;
    int attempt_ = 0;
    bool reused_ = false;
    bool interim_ = false;           // a 1xx came: the response has started
    bool busy_ = false;              // an operation on conn_ is pending
    bool waiting_ = false;           // in the origin's queue
    bool handing_ = false;           // the pool posted a resume()
    beast::error_code write_error_;  // the server cut the request short: its answer may still be read
    bool pulled_ = false;            // a piece of the streamed body was taken: it cannot be sent again
    std::string upload_size_;        // the chunk being written: its size line, then its pieces
    std::vector<std::string> upload_pieces_;
    Phases recorded_;           // record_phases: where the request's time went (d_.phases points here)
    bool first_read_ = false;   // recording: the response's first read is still to come (it ends `wait`)
    std::exception_ptr abort_;  // why it is abandoned (cancel(), a timeout); the pending operation ends first
    // streaming
    ChunkCallback on_chunk_;
    bool stream_closed_ = false;
    std::exception_ptr stream_error_;  // an error between two next(): the next one's
};

// The state behind an AsyncResponseStream: its head, and the exchange that reads the rest.
struct StreamHead {
    int status = 0;
    std::string reason;
    Headers headers;
    std::string url;
};

}  // namespace beast_client::detail

namespace beast_client {

struct AsyncResponseStream::State {
    detail::StreamHead head;
    std::shared_ptr<detail::Exchange> exchange;
    IoThread::Impl* io = nullptr;
    std::atomic<bool> closed{false};
};

}  // namespace beast_client
