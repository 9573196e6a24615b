// An AsyncClient request's streamed body (AsyncBodySource): after the head, the pieces the source gives are written
// as one chunk of Transfer-Encoding: chunked (one gathering write), then the next are asked for; the empty last chunk
// ends the body and the exchange goes on as after a whole request's write (async_exchange.cpp: wrote()). The source
// answers from any thread: the piece is posted to the IoThread, where the exchange may meanwhile have been abandoned
// (stopped()).
#include "async_exchange.hpp"

#include <boost/asio/write.hpp>

#include <utility>
#include <vector>

namespace beast_client::detail {

// The streamed body's next pieces, from the source (any thread) back to the IoThread.
void Exchange::pull() {
    pulled_ = true;
    upload->next([x = self()](std::vector<std::string> pieces, std::exception_ptr e) mutable {
        try {
            auto& io = x->client_->io;
            io.post([x = std::move(x), pieces = std::move(pieces), e]() mutable {
                x->on_upload_pieces(std::move(pieces), e);
            });
        } catch (const std::runtime_error&) {  // the IoThread is stopped: nothing of it runs any more
        }
    });
}

void Exchange::on_upload_pieces(std::vector<std::string> pieces, std::exception_ptr e) {
    if (stopped() || !upload) return;
    if (e) return finish_error(e);  // the source failed: the request too (its connection closed)
    const bool last = pieces.empty();
    std::size_t size = 0;
    for (const auto& p : pieces) size += p.size();
    if (!last && size == 0) return pull();
    upload_pieces_ = std::move(pieces);
    upload_size_ = chunk_size_line(size);  // the last chunk: "0\r\n" and the final CRLF
    std::vector<net::const_buffer> frame;
    frame.reserve(upload_pieces_.size() + 2);
    frame.push_back(net::buffer(upload_size_));
    for (const auto& p : upload_pieces_)
        if (!p.empty()) frame.push_back(net::buffer(p));
    frame.push_back(net::buffer("\r\n", 2));
    busy_ = true;
    with_stream([&](auto& s) {
        // the whole frame in as few writes as the socket takes (async_write's own condition stops at 64 KiB each)
        const std::size_t total = net::buffer_size(frame);
        const auto all = [total](const beast::error_code& ec, std::size_t n) -> std::size_t {
            return ec || n >= total ? 0 : total - n;
        };
        net::async_write(s, frame, all, [x = self(), last](const beast::error_code& ec, std::size_t) {
            x->busy_ = false;
            if (x->stopped()) return;
            if (ec || last) return x->wrote(ec, 1);  // a write cut short: the server's answer may explain it
            x->upload->recycle(std::exchange(x->upload_pieces_, {}));
            x->pull();
        });
    });
}

void Exchange::end_upload() {
    if (auto source = std::move(upload)) source->close();
}

}  // namespace beast_client::detail
