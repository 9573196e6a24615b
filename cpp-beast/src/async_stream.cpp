// A stream's pieces (Exchange::next, after the head was handed out) and AsyncResponseStream, which posts them
// to the IoThread.
#include "async_exchange.hpp"

#include <boost/asio/ssl/error.hpp>
#include <boost/beast/http/read.hpp>

namespace beast_client {

namespace detail {

// ---- the stream's pieces ---------------------------------------------------------------------------------

void Exchange::next(ChunkCallback done) {
    if (on_chunk_) {
        invoke(done, std::optional<std::string>(),
               std::make_exception_ptr(std::logic_error("this stream is already being read (one next() at a time)")));
        return;
    }
    if (stream_error_) {  // what failed between two pieces, once
        auto e = std::move(stream_error_);
        stream_error_ = nullptr;
        return invoke(done, std::optional<std::string>(), e);
    }
    if (stream_closed_) return invoke(done, std::optional<std::string>(), std::exception_ptr());
    on_chunk_ = std::move(done);
    pump();
}

void Exchange::pump() {
    ResponseReader& r = *reader_;
    for (;;) {
        if (!r.body.empty()) {
            std::string piece;
            piece.swap(r.body);
            return deliver(std::move(piece));
        }
        if (!r.pending()) break;
        beast::error_code ec;  // what the decoder held back comes before anything more is read
        r.drain(ec);
        if (ec) return read_failed(ec);
    }
    if (r.is_done()) {
        release_conn();
        stream_closed_ = true;
        ++timer_gen_;
        timer_.cancel();
        return deliver(std::nullopt);
    }
    d_.start_read();
    arm();
    busy_ = true;
    with_stream([&](auto& s) {
        http::async_read_some(s, conn_->buffer, r, [x = self()](beast::error_code ec, std::size_t) {
            x->busy_ = false;
            x->d_.reading = false;
            x->on_piece(ec);
        });
    });
}

void Exchange::on_piece(beast::error_code ec) {
    if (stream_closed_) {  // close() came while a piece was awaited
        drop_conn();
        return deliver(std::nullopt);
    }
    if (abort_) return stream_fail(abort_);
    ResponseReader& r = *reader_;
    if (ec == ssl::error::stream_truncated) {
        r.put_eof(ec);
        if (!ec) drop_conn();
    }
    if (ec) return read_failed(ec);
    if (r.is_done() && conn_ && (!r.keep_alive() || r.status == 101 || conn_->broken)) drop_conn();
    pump();
}

void Exchange::deliver(std::optional<std::string> piece) { invoke(on_chunk_, std::move(piece), std::exception_ptr()); }

void Exchange::stream_fail(std::exception_ptr e) {
    drop_conn();
    stream_closed_ = true;
    ++timer_gen_;
    timer_.cancel();
    if (on_chunk_)
        invoke(on_chunk_, std::optional<std::string>(), e);
    else
        stream_error_ = e;
}

void Exchange::close_stream() {
    if (stream_closed_) return;
    stream_closed_ = true;
    ++timer_gen_;
    timer_.cancel();
    if (busy_) {  // a piece is being read: the connection goes, and that next() ends with nullopt
        conn_->close();
        return;
    }
    // the body was read to its end (or there is none): the connection can carry the next request
    if (reader_ && reader_->is_done() && !reader_->pending())
        release_conn();
    else
        drop_conn();
}

}  // namespace detail

// ---- AsyncResponseStream ----------------------------------------------------------------------------------

AsyncResponseStream::AsyncResponseStream(std::shared_ptr<State> state) : state_(std::move(state)) {}

AsyncResponseStream::~AsyncResponseStream() { close(); }

int AsyncResponseStream::status() const noexcept { return state_->head.status; }
const std::string& AsyncResponseStream::reason() const noexcept { return state_->head.reason; }
const Headers& AsyncResponseStream::headers() const noexcept { return state_->head.headers; }
const std::string& AsyncResponseStream::url() const noexcept { return state_->head.url; }

AsyncHandle AsyncResponseStream::next(ChunkCallback done) {
    auto x = state_->exchange;
    state_->io->post([x, done = std::move(done)]() mutable { x->next(std::move(done)); });
    return x;
}

void AsyncResponseStream::close() {
    if (state_->closed.exchange(true)) return;
    try {
        state_->io->post([x = state_->exchange] { x->close_stream(); });
    } catch (const std::runtime_error&) {
    }
}

}  // namespace beast_client
