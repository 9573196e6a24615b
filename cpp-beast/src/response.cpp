#include "response.hpp"

#include "text.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>
#include <limits>

namespace beast_client::detail {

// ---- ResponseReader -------------------------------------------------------------------------------------

void ResponseReader::on_response_impl(int code, beast::string_view why, int, beast::error_code&) {
    status = code;
    if (keep_headers_) reason = str(why);
}

void ResponseReader::on_field_impl(http::field, beast::string_view name, beast::string_view value, beast::error_code&) {
    if (keep_headers_) headers.emplace_back(str(name), str(value));
}

void ResponseReader::on_header_impl(beast::error_code&) {
    touch();
    if (!decompress || status < 200) return;
    const std::string* coding = nullptr;
    for (const auto& [name, value] : headers) {
        if (!beast::iequals(name, "content-encoding")) continue;
        if (coding) return;  // several fields: more than one coding, returned as received
        coding = &value;
    }
    if (!coding) return;
    std::string c;
    for (const char ch : *coding)
        if (ch != ' ' && ch != '\t') c += ascii_lower(ch);
    decoder_ = make_decoder(c);  // null for a coding not decoded: the body as received
}

void ResponseReader::on_body_init_impl(const boost::optional<std::uint64_t>& length, beast::error_code& ec) {
    if (kept_limit && keep_body_ && !decoder_ && !discard) {
        if (length && *length > *kept_limit) {
            ec = http::error::body_limit;
            return;
        }
        body_limit(*kept_limit);  // a chunked body or one up to the end of the connection
    }
    if (keep_body_ && !decoder_ && length)
        body.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(*length, 64u << 20)));
}

std::size_t ResponseReader::on_body_impl(beast::string_view data, beast::error_code& ec) {
    touch();
    if (decoder_ && !discard && keep_body_) {
        const std::size_t used = decode(data, ec);
        body_bytes += used;
        return used;
    }
    body_bytes += data.size();
    if (discard || !keep_body_) return data.size();
    body.append(data.data(), data.size());
    return data.size();
}

std::size_t ResponseReader::out_limit() const {
    const std::uint64_t left = decoded_total_ >= decoded_limit ? 0 : decoded_limit - decoded_total_;
    const std::uint64_t hard = left >= std::numeric_limits<std::size_t>::max() - body.size() - 1
                                   ? std::numeric_limits<std::size_t>::max()
                                   : body.size() + left + 1;
    return static_cast<std::size_t>(std::min<std::uint64_t>(hard, chunk_limit));
}

std::size_t ResponseReader::decode(beast::string_view data, beast::error_code& ec) {
    const std::size_t before = body.size();
    std::size_t used = data.size();
    if (!decoder_->feed(data.data(), data.size(), body, out_limit(), used)) {
        decode_error = decoder_->error();
        ec = http::error::bad_transfer_encoding;
    } else if ((decoded_total_ += body.size() - before) > decoded_limit) {
        ec = http::error::body_limit;
    }
    return used;
}

void ResponseReader::drain(beast::error_code& ec) {
    ec = {};
    if (!decoder_) return;
    if (decoder_->pending()) {
        static const char none = 0;
        const std::size_t before = body.size();
        decode(beast::string_view(&none, 0), ec);
        if (ec) return;
        if (body.size() == before && decoder_->pending()) {  // a decoder that holds output back must hand it out
            decode_error = "the decoder made no progress";
            ec = http::error::bad_transfer_encoding;
            return;
        }
    }
    if (finish_deferred_ && !decoder_->pending()) {
        finish_deferred_ = false;
        if (!decoder_->finish()) {
            decode_error = decoder_->error();
            ec = http::error::bad_transfer_encoding;
        }
    }
}

void ResponseReader::on_finish_impl(beast::error_code& ec) {
    if (!decoder_ || discard || !keep_body_) return;
    if (decoder_->pending()) {  // checked once what is held back has been handed out (drain())
        finish_deferred_ = true;
        return;
    }
    if (!decoder_->finish()) {
        decode_error = decoder_->error();
        ec = http::error::bad_transfer_encoding;
    }
}

// ---- error classification ---------------------------------------------------------------------------

const char* phase_text(Phase p) {
    switch (p) {
        case Phase::resolve: return "resolving the host";
        case Phase::connect: return "connecting";
        case Phase::handshake: return "performing the TLS handshake";
        case Phase::write: return "sending the request";
        case Phase::read: return "reading the response";
    }
    return "";
}

bool is_http_error(const beast::error_code& ec) {
    return ec.category() == http::make_error_code(http::error::end_of_stream).category();
}

ConnectionError::Kind kind_of(const beast::error_code& ec) {
    if (ec == net::error::connection_refused) return ConnectionError::Kind::refused;
    if (ec == net::error::connection_reset || ec == net::error::broken_pipe || ec == net::error::connection_aborted)
        return ConnectionError::Kind::reset;
    return ConnectionError::Kind::other;
}

bool is_idempotent(http::verb method) {
    switch (method) {
        case http::verb::get:
        case http::verb::head:
        case http::verb::options:
        case http::verb::trace:
        case http::verb::put:
        case http::verb::delete_: return true;
        default: return false;
    }
}

// Over TLS, a peer that closes without close_notify gives stream_truncated; the read path turns it into
// end_of_stream / partial_message as Beast does for EOF.
bool is_stale_connection(const beast::error_code& ec) {
    return ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
           ec == net::error::broken_pipe || ec == net::error::connection_aborted || ec == ssl::error::stream_truncated;
}

bool is_tls_error(const beast::error_code& ec) {
    return ec.category() == net::error::get_ssl_category() && ec != ssl::error::stream_truncated;
}

void fail(const beast::error_code& ec, Phase phase, const std::string& where) {
    const std::string msg = ec.message();
    switch (phase) {
        case Phase::resolve: throw ConnectionError("cannot resolve the host of " + where + ": " + msg);
        case Phase::connect: throw ConnectionError("cannot connect to " + where + ": " + msg, kind_of(ec));
        case Phase::handshake: throw TLSError("TLS handshake with " + where + " failed: " + msg, kind_of(ec));
        case Phase::write:
            if (is_tls_error(ec)) throw TLSError("TLS error sending the request to " + where + ": " + msg);
            throw ConnectionError("error sending the request to " + where + ": " + msg, kind_of(ec));
        case Phase::read: break;
    }
    if (is_tls_error(ec)) throw TLSError("TLS error reading the response from " + where + ": " + msg);
    if (ec == http::error::end_of_stream || ec == net::error::eof)
        throw ConnectionError("connection to " + where + " closed by the server before a response was received",
                              ConnectionError::Kind::reset);
    if (ec == http::error::partial_message)
        throw ConnectionError("connection to " + where + " closed by the server before the response was complete",
                              ConnectionError::Kind::reset);
    if (ec == http::error::header_limit)
        throw ProtocolError("response headers from " + where + " exceed the limit of " + std::to_string(header_limit) +
                            " bytes");
    if (ec == http::error::body_limit)
        throw BodyTooLarge("response body from " + where + " exceeds the limit of " +
                           std::to_string(request_body_limit) + " bytes");
    if (is_http_error(ec)) throw ProtocolError("malformed HTTP response from " + where + ": " + msg);
    throw ConnectionError("error reading the response from " + where + ": " + msg, kind_of(ec));
}

}  // namespace beast_client::detail
