// Reading a response (ResponseReader) and what a failed operation means (the client's exceptions).
#pragma once

#include "aliases.hpp"
#include "beast_client/client.hpp"
#include "decode.hpp"

#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/optional/optional.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

namespace beast_client::detail {

// A basic_parser that keeps only what the caller asks for: get() counts the body and keeps neither the
// body nor the fields; request() keeps both. (http::response_parser would store the fields in
// basic_fields, which also limits a single field value to 64 KiB.) With a `progress` time point, every piece
// of the response (the header, body bytes, a chunk header) sets it to now: the read timeout counts from there.
class ResponseReader final : public http::basic_parser<false> {
public:
    ResponseReader(bool keep_headers, bool keep_body) : keep_headers_(keep_headers), keep_body_(keep_body) {}

    int status = 0;
    Headers headers;
    std::string body;
    std::string reason;
    std::uint64_t body_bytes = 0;
    Clock::time_point* progress = nullptr;
    bool decompress = false;  // decode a gzip / deflate / br / zstd Content-Encoding (set before reading)
    bool discard = false;     // drop the body (a redirect's), set between the header and the body
    // the most of the body kept, decoded (over it: http::error::body_limit)
    std::uint64_t decoded_limit = std::numeric_limits<std::uint64_t>::max();
    // send()'s max_body_size: also the most of a body kept as received (not decoded; a Content-Length over it
    // fails before the body is read)
    std::optional<std::uint64_t> kept_limit;
    // streaming: stop decoding once `body` holds this much (the rest of the input stays in the read buffer)
    std::size_t chunk_limit = std::numeric_limits<std::size_t>::max();
    std::string decode_error;  // why decoding failed (the read then fails too)

    // Decoded output the decoder held back at chunk_limit (a stream's pieces): drain() hands it out into `body`
    // before anything more is read, and the body is complete only when none is left.
    bool pending() const { return decoder_ && decoder_->pending(); }
    // Moves (some of) what is pending into `body`; at the end of the body, checks the compressed stream's end
    // once nothing is left. Sets ec (bad_transfer_encoding with decode_error, body_limit) on failure.
    void drain(beast::error_code& ec);

private:
    void touch() {
        if (progress) *progress = Clock::now();
    }

    void on_request_impl(http::verb, beast::string_view, beast::string_view, int, beast::error_code&) override {}
    void on_response_impl(int code, beast::string_view why, int, beast::error_code&) override;
    void on_field_impl(http::field, beast::string_view name, beast::string_view value, beast::error_code&) override;
    void on_header_impl(beast::error_code&) override;
    void on_body_init_impl(const boost::optional<std::uint64_t>& length, beast::error_code&) override;
    std::size_t on_body_impl(beast::string_view data, beast::error_code& ec) override;
    // Decodes (some of) data into body; returns the bytes of data used (all of them unless chunk_limit).
    std::size_t decode(beast::string_view data, beast::error_code& ec);
    void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code&) override { touch(); }
    std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view data, beast::error_code& ec) override {
        return on_body_impl(data, ec);
    }
    void on_finish_impl(beast::error_code& ec) override;

    // The most `body` may hold after this decode step: chunk_limit, and one byte past the decoded limit (so that
    // going over it shows).
    std::size_t out_limit() const;

    bool keep_headers_;
    bool keep_body_;
    std::unique_ptr<Decoder> decoder_;  // only when decoding: its zlib state is several KiB
    std::uint64_t decoded_total_ = 0;
    bool finish_deferred_ = false;  // the body ended with output still pending: finish() once it is out
};

// ---- error classification ---------------------------------------------------------------------------

enum class Phase { resolve, connect, handshake, write, read };

const char* phase_text(Phase p);
bool is_http_error(const beast::error_code& ec);
ConnectionError::Kind kind_of(const beast::error_code& ec);
// RFC 9110 9.2.2: a request with an idempotent method may be sent again after a connection failure; any
// other (POST, PATCH, CONNECT, extension methods) must not be, once it may have reached the server.
bool is_idempotent(http::verb method);
// The connection failed the way a kept-alive connection does when the server had closed it (idle close /
// reset) by the time the request arrived.
bool is_stale_connection(const beast::error_code& ec);
bool is_tls_error(const beast::error_code& ec);
// Throws the exception that `ec` means in `phase` (where: host:port, for the message).
[[noreturn]] void fail(const beast::error_code& ec, Phase phase, const std::string& where);

}  // namespace beast_client::detail
