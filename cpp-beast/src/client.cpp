// The only translation unit that includes Boost.Beast / Boost.Asio / OpenSSL (slow to compile: keep it that way).
#include "beast_client/client.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/verify_context.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/beast/version.hpp>
#include <boost/beast/zlib/inflate_stream.hpp>
#include <boost/crc.hpp>
#include <boost/optional/optional.hpp>
#include <boost/version.hpp>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <mutex>
#include <optional>
#include <system_error>

namespace beast_client {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

namespace {

// ---- small helpers --------------------------------------------------------------------------------

char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// RFC 9110 token characters (methods, header names)
bool is_tchar(char c) {
    if (is_alpha(c) || is_digit(c)) return true;
    // clang-format off
    switch (c) {
        case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-':
        case '.': case '^': case '_': case '`': case '|': case '~':
            return true;
        default:
            return false;
    }
    // clang-format on
}

bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar); }

// For error messages: the input with control / non-ASCII bytes escaped, cut at 200 characters.
std::string printable(std::string_view s) {
    std::string out;
    const std::size_t limit = 200;
    for (std::size_t i = 0; i < s.size() && i < limit; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c >= 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (s.size() > limit) out += "...";
    return out;
}

beast::string_view bsv(std::string_view s) { return {s.data(), s.size()}; }
std::string str(beast::string_view s) { return std::string(s.data(), s.size()); }

std::string host_port(const std::string& host, std::uint16_t port) {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string seconds_text(std::chrono::nanoseconds d) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g s", std::chrono::duration<double>(d).count());
    return buf;
}

// ---- gzip / deflate decoding --------------------------------------------------------------------------
// Boost.Beast's zlib port (header-only) inflates raw deflate data; the gzip (RFC 1952) and zlib (RFC 1950)
// wrappers around it, and their checksums (CRC-32 with Boost.CRC, Adler-32), are handled here. Content-Encoding
// "deflate" is the zlib format (RFC 9110 8.4.1.2); raw deflate, which some servers send instead, is accepted
// too (as browsers and curl do). Bytes after the end of the compressed stream are ignored.

class Decoder {
public:
    enum class Format { gzip, deflate };
    explicit Decoder(Format format) : format_(format) {}

    // Appends the decoded bytes of data to out. False (with error()) when the data is not valid. With
    // `out_limit`, stops early (having used at least one byte) once out holds that much: `used` is set to the
    // bytes of data consumed.
    bool feed(const char* data, std::size_t n, std::string& out, std::size_t out_limit, std::size_t& used) {
        const std::size_t total = n;
        const bool ok = feed_some(data, n, out, out_limit);
        used = total - n;
        return ok;
    }

    bool feed(const char* data, std::size_t n, std::string& out) {
        return feed_some(data, n, out, std::numeric_limits<std::size_t>::max());
    }

private:
    bool feed_some(const char*& data, std::size_t& n, std::string& out, std::size_t out_limit) {
        const std::size_t start = n;
        while (n > 0) {
            if (out.size() >= out_limit && state_ == State::body && n < start) return true;
            switch (state_) {
                case State::header: {
                    const std::size_t had = head_.size();
                    const std::size_t take = std::min<std::size_t>(n, 64 * 1024);
                    head_.append(data, take);
                    bool complete = false;
                    std::size_t length = 0;
                    if (!header_length(complete, length)) return false;
                    if (!complete) {
                        data += take;
                        n -= take;
                        if (head_.size() > 64 * 1024) return bad("header too long");
                        break;
                    }
                    state_ = State::body;
                    if (length >= had) {  // the header ends in this data: the rest of it is compressed data
                        data += length - had;
                        n -= length - had;
                        head_.clear();
                    } else {  // raw deflate: the bytes kept from an earlier call are compressed data
                        const std::string early = head_.substr(length, had - length);
                        head_.clear();
                        if (!feed(early.data(), early.size(), out)) return false;
                    }
                    break;
                }
                case State::body: {
                    std::size_t used = 0;
                    if (!inflate(data, n, out, used, out_limit)) return false;
                    if (used == 0 && state_ == State::body) return bad("no progress");
                    data += used;
                    n -= used;
                    break;
                }
                case State::trailer: {
                    const std::size_t take = std::min(trailer_size() - head_.size(), n);
                    head_.append(data, take);
                    data += take;
                    n -= take;
                    if (head_.size() == trailer_size() && !check_trailer()) return false;
                    break;
                }
                case State::done: return true;  // anything after the compressed stream is ignored
            }
        }
        return true;
    }

public:
    // At the end of the body: the compressed stream must be complete (an empty body is fine).
    bool finish() {
        if (state_ == State::done || (state_ == State::header && head_.empty())) return true;
        return bad("the compressed data is truncated");
    }

    const std::string& error() const noexcept { return error_; }

private:
    enum class State { header, body, trailer, done };

    bool bad(const std::string& why) {
        error_ = std::string(format_ == Format::gzip ? "invalid gzip body: " : "invalid deflate body: ") + why;
        return false;
    }

    // Whether head_ holds the whole header, and its length then.
    bool header_length(bool& complete, std::size_t& length) {
        const auto* b = reinterpret_cast<const unsigned char*>(head_.data());
        const std::size_t size = head_.size();
        if (format_ == Format::deflate) {
            if (size < 2) return true;
            // a zlib header (CM 8, window <= 32 KiB, FCHECK); otherwise raw deflate: no header
            zlib_ = (b[0] & 0x0f) == 8 && (b[0] >> 4) <= 7 && ((b[0] << 8) | b[1]) % 31 == 0;
            if (zlib_ && (b[1] & 0x20)) return bad("a preset dictionary is not supported");
            complete = true;
            length = zlib_ ? 2 : 0;
            return true;
        }
        if (size < 10) return true;
        if (b[0] != 0x1f || b[1] != 0x8b) return bad("not in gzip format");
        if (b[2] != 8) return bad("unknown compression method");
        const unsigned flags = b[3];
        std::size_t pos = 10;
        if (flags & 0x04) {  // FEXTRA
            if (size < pos + 2) return true;
            pos += 2 + (b[pos] | (b[pos + 1] << 8));
        }
        for (const unsigned flag : {0x08u, 0x10u}) {  // FNAME, FCOMMENT: zero-terminated
            if (!(flags & flag)) continue;
            while (pos < size && b[pos] != 0) ++pos;
            if (pos >= size) return true;
            ++pos;
        }
        if (flags & 0x02) pos += 2;  // FHCRC
        if (size < pos) return true;
        complete = true;
        length = pos;
        return true;
    }

    bool inflate(const char* data, std::size_t n, std::string& out, std::size_t& used, std::size_t out_limit) {
        beast::zlib::z_params zs;
        zs.next_in = data;
        zs.avail_in = n;
        char buf[16 * 1024];
        for (;;) {
            zs.next_out = buf;
            zs.avail_out = sizeof buf;
            beast::error_code ec;
            inflate_.write(zs, beast::zlib::Flush::none, ec);
            const std::size_t produced = sizeof buf - zs.avail_out;
            if (produced) {
                out.append(buf, produced);
                checksum(buf, produced);
            }
            if (ec == beast::zlib::error::end_of_stream) {
                state_ = trailer_size() ? State::trailer : State::done;
                break;
            }
            if (ec && ec != beast::zlib::error::need_buffers) return bad(ec.message());
            if (zs.avail_in == 0 && zs.avail_out != 0) break;
            if (out.size() >= out_limit && zs.avail_in < n) break;  // enough for now (some input used)
            if (produced == 0 && (ec == beast::zlib::error::need_buffers)) break;
        }
        used = n - zs.avail_in;
        return true;
    }

    void checksum(const char* data, std::size_t n) {
        size_ += n;
        if (format_ == Format::gzip) {
            crc_.process_bytes(data, n);
        } else if (zlib_) {
            const auto* p = reinterpret_cast<const unsigned char*>(data);
            for (std::size_t i = 0; i < n; ++i) {
                adler_a_ = (adler_a_ + p[i]) % 65521u;
                adler_b_ = (adler_b_ + adler_a_) % 65521u;
            }
        }
    }

    std::size_t trailer_size() const { return format_ == Format::gzip ? 8 : (zlib_ ? 4 : 0); }

    bool check_trailer() {
        const auto* b = reinterpret_cast<const unsigned char*>(head_.data());
        state_ = State::done;
        if (format_ == Format::gzip) {
            const std::uint32_t crc = b[0] | (b[1] << 8) | (b[2] << 16) | (std::uint32_t(b[3]) << 24);
            const std::uint32_t isize = b[4] | (b[5] << 8) | (b[6] << 16) | (std::uint32_t(b[7]) << 24);
            if (crc != crc_.checksum()) return bad("CRC-32 mismatch");
            if (isize != static_cast<std::uint32_t>(size_)) return bad("length mismatch");
            return true;
        }
        const std::uint32_t adler = (std::uint32_t(b[0]) << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
        if (adler != ((adler_b_ << 16) | adler_a_)) return bad("Adler-32 mismatch");
        return true;
    }

    Format format_;
    State state_ = State::header;
    bool zlib_ = false;
    std::string head_;  // header or trailer bytes collected so far
    beast::zlib::inflate_stream inflate_;
    boost::crc_32_type crc_;
    std::uint32_t adler_a_ = 1, adler_b_ = 0;
    std::uint64_t size_ = 0;
    std::string error_;
};

// ---- the response parser ------------------------------------------------------------------------------
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
    bool decompress = false;  // decode a gzip / deflate Content-Encoding (set before reading)
    bool discard = false;     // drop the body (a redirect's), set between the header and the body
    std::uint64_t decoded_limit = std::numeric_limits<std::uint64_t>::max();
    // streaming: stop decoding once `body` holds this much (the rest of the input stays in the read buffer)
    std::size_t chunk_limit = std::numeric_limits<std::size_t>::max();
    std::string decode_error;  // why decoding failed (the read then fails too)

private:
    void touch() {
        if (progress) *progress = Clock::now();
    }

    void on_request_impl(http::verb, beast::string_view, beast::string_view, int, beast::error_code&) override {}

    void on_response_impl(int code, beast::string_view why, int, beast::error_code&) override {
        status = code;
        if (keep_headers_) reason = str(why);
    }

    void on_field_impl(http::field, beast::string_view name, beast::string_view value, beast::error_code&) override {
        if (keep_headers_) headers.emplace_back(str(name), str(value));
    }

    void on_header_impl(beast::error_code&) override {
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
        if (c == "gzip" || c == "x-gzip")
            decoder_.emplace(Decoder::Format::gzip);
        else if (c == "deflate")
            decoder_.emplace(Decoder::Format::deflate);
    }

    void on_body_init_impl(const boost::optional<std::uint64_t>& length, beast::error_code&) override {
        if (keep_body_ && !decoder_ && length)
            body.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(*length, 64u << 20)));
    }

    std::size_t on_body_impl(beast::string_view data, beast::error_code& ec) override {
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

    // Decodes (some of) data into body; returns the bytes of data used (all of them unless chunk_limit).
    std::size_t decode(beast::string_view data, beast::error_code& ec) {
        const std::size_t before = body.size();
        std::size_t used = data.size();
        if (!decoder_->feed(data.data(), data.size(), body, chunk_limit, used)) {
            decode_error = decoder_->error();
            ec = http::error::bad_transfer_encoding;
        } else if ((decoded_total_ += body.size() - before) > decoded_limit) {
            decode_error = "the decoded body exceeds the limit of " + std::to_string(decoded_limit) + " bytes";
            ec = http::error::body_limit;
        }
        return used;
    }

    void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code&) override { touch(); }

    std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view data, beast::error_code& ec) override {
        return on_body_impl(data, ec);
    }

    void on_finish_impl(beast::error_code& ec) override {
        if (!decoder_ || discard || !keep_body_) return;
        if (!decoder_->finish()) {
            decode_error = decoder_->error();
            ec = http::error::bad_transfer_encoding;
        }
    }

    bool keep_headers_;
    bool keep_body_;
    std::optional<Decoder> decoder_;
    std::uint64_t decoded_total_ = 0;
};

// ---- error classification ---------------------------------------------------------------------------

enum class Phase { resolve, connect, handshake, write, read };

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

// RFC 9110 9.2.2: a request with an idempotent method may be sent again after a connection failure; any
// other (POST, PATCH, CONNECT, extension methods) must not be, once it may have reached the server.
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

// The connection failed the way a kept-alive connection does when the server had closed it (idle close /
// reset) by the time the request arrived.
// (Over TLS, a peer that closes without close_notify gives stream_truncated; the read path turns it into
// end_of_stream / partial_message as Beast does for EOF.)
bool is_stale_connection(const beast::error_code& ec) {
    return ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
           ec == net::error::broken_pipe || ec == net::error::connection_aborted || ec == ssl::error::stream_truncated;
}

bool is_tls_error(const beast::error_code& ec) {
    return ec.category() == net::error::get_ssl_category() && ec != ssl::error::stream_truncated;
}

// The reason of a failed handshake: the certificate verification result when that is what failed, a hint
// when the server does not seem to speak TLS.
std::string handshake_failure(const beast::error_code& ec, SSL* ssl) {
    if (ec == net::error::eof || ec == ssl::error::stream_truncated)
        return "the server closed the connection during the handshake";
    if (ec.category() != net::error::get_ssl_category()) return ec.message();
    const auto reason = ERR_GET_REASON(static_cast<unsigned long>(ec.value()));
    if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED) {
        const long result = SSL_get_verify_result(ssl);
        if (result != X509_V_OK)
            return std::string("certificate verify failed: ") + X509_verify_cert_error_string(result);
    }
    std::string msg = ec.message();
    if (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_PACKET_LENGTH_TOO_LONG ||
        reason == SSL_R_HTTP_REQUEST || reason == SSL_R_HTTPS_PROXY_REQUEST)
        msg += " (the server does not answer in TLS: is it a plain http:// server?)";
    return msg;
}

[[noreturn]] void fail(const beast::error_code& ec, Phase phase, const std::string& where) {
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
        throw ProtocolError("response body from " + where + " exceeds the limit of " +
                            std::to_string(request_body_limit) + " bytes");
    if (is_http_error(ec)) throw ProtocolError("malformed HTTP response from " + where + ": " + msg);
    throw ConnectionError("error reading the response from " + where + ": " + msg, kind_of(ec));
}

}  // namespace

// ---- URL ------------------------------------------------------------------------------------------

Url parse_url(std::string_view url) {
    const auto bad = [&](const std::string& why) { return InvalidUrl("invalid URL '" + printable(url) + "': " + why); };
    if (url.empty()) throw InvalidUrl("invalid URL: empty string (expected http[s]://host[:port][/path])");
    for (char c : url) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f) throw bad("contains whitespace or control characters");
    }
    const auto sep = url.find("://");
    if (sep == std::string_view::npos) throw bad("missing scheme (expected http[s]://host[:port][/path])");
    std::string scheme;
    for (char c : url.substr(0, sep)) scheme += ascii_lower(c);
    if (scheme != "http" && scheme != "https") throw bad("unsupported scheme '" + scheme + "' (http:// or https://)");

    const std::string_view rest = url.substr(sep + 3);
    const auto end = rest.find_first_of("/?#");
    const std::string_view authority = rest.substr(0, end);
    std::string_view tail = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
    if (authority.find('@') != std::string_view::npos) throw bad("user info (user@host) is not supported");

    const bool https = scheme == "https";
    Url out{{}, static_cast<std::uint16_t>(https ? 443 : 80), {}, https};
    std::string_view host, port;
    bool has_port = false;
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) throw bad("unterminated '[' in the host");
        host = authority.substr(1, close - 1);
        const std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') throw bad("unexpected characters after ']'");
            has_port = true;
            port = after.substr(1);
        }
        beast::error_code ec;
        net::ip::make_address_v6(std::string(host), ec);
        if (host.empty() || ec) throw bad("invalid IPv6 address '" + std::string(host) + "'");
    } else {
        const auto colon = authority.find(':');
        host = authority.substr(0, colon);
        if (colon != std::string_view::npos) {
            has_port = true;
            port = authority.substr(colon + 1);
        }
        if (host.empty()) throw bad("missing host");
        for (char c : host)
            if (!(is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_'))
                throw bad("invalid character '" + printable(std::string_view(&c, 1)) + "' in the host");
    }
    if (has_port) {
        if (port.empty()) throw bad("empty port");
        if (port.size() > 5 || !std::all_of(port.begin(), port.end(), is_digit))
            throw bad("port must be a number from 1 to 65535");
        const unsigned long value = std::stoul(std::string(port));
        if (value < 1 || value > 65535) throw bad("port must be a number from 1 to 65535");
        out.port = static_cast<std::uint16_t>(value);
    }
    for (char c : host) out.host += ascii_lower(c);

    const auto hash = tail.find('#');
    if (hash != std::string_view::npos) tail = tail.substr(0, hash);
    if (tail.empty() || tail.front() != '/') out.target = "/";
    out.target += std::string(tail);
    return out;
}

namespace {

const char kHex[] = "0123456789ABCDEF";

void percent(std::string& out, unsigned char c) {
    out += '%';
    out += kHex[c >> 4];
    out += kHex[c & 15];
}

}  // namespace

std::string encode_url(std::string_view url) {
    // scheme://authority stays as it is (parse_url() checks it)
    const auto sep = url.find("://");
    std::size_t start = sep == std::string_view::npos ? 0 : sep + 3;
    start = std::min(url.find_first_of("/?#", start), url.size());
    std::string out(url.substr(0, start));
    out.reserve(url.size() + 16);
    bool query = false;
    for (std::size_t i = start; i < url.size(); ++i) {
        const auto c = static_cast<unsigned char>(url[i]);
        if (c == '#') break;  // the fragment is not sent
        if (c == '?') query = true;
        bool encode = c <= 0x20 || c >= 0x7f || c == '"' || c == '<' || c == '>';
        if (!query) encode = encode || c == '`' || c == '{' || c == '}';
        if (query) encode = encode || c == '\'';
        if (encode)
            percent(out, c);
        else
            out += static_cast<char>(c);
    }
    return out;
}

std::string encode_component(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (is_alpha(ch) || is_digit(ch) || c == '-' || c == '.' || c == '_' || c == '~')
            out += ch;
        else
            percent(out, c);
    }
    return out;
}

std::string add_query(std::string_view url, const std::vector<std::pair<std::string, std::string>>& params) {
    const auto hash = url.find('#');
    std::string out(url.substr(0, hash));
    if (params.empty()) return out;
    const auto q = out.find('?');
    char sep = q == std::string::npos ? '?' : (q + 1 == out.size() || out.back() == '&' ? '\0' : '&');
    for (const auto& [name, value] : params) {
        if (sep) out += sep;
        sep = '&';
        out += encode_component(name);
        out += '=';
        out += encode_component(value);
    }
    return out;
}

namespace {

// RFC 3986 5.2.4
std::string remove_dot_segments(std::string_view in) {
    std::string out;
    while (!in.empty()) {
        if (in.substr(0, 3) == "../") {
            in.remove_prefix(3);
        } else if (in.substr(0, 2) == "./") {
            in.remove_prefix(2);
        } else if (in.substr(0, 3) == "/./") {
            in.remove_prefix(2);
        } else if (in == "/.") {
            in = "/";
        } else if (in.substr(0, 4) == "/../" || in == "/..") {
            in = in.size() == 3 ? std::string_view("/") : in.substr(3);
            const auto slash = out.rfind('/');
            out.erase(slash == std::string::npos ? 0 : slash);
        } else if (in == "." || in == "..") {
            in = {};
        } else {
            const auto next = in.find('/', in.front() == '/' ? 1 : 0);
            const auto seg = in.substr(0, next);
            out.append(seg.data(), seg.size());
            in.remove_prefix(seg.size());
        }
    }
    return out;
}

bool has_scheme(std::string_view ref) {
    const auto colon = ref.find(':');
    if (colon == std::string_view::npos || colon == 0) return false;
    for (std::size_t i = 0; i < colon; ++i) {
        const char c = ref[i];
        if (!(is_alpha(c) || (i > 0 && (is_digit(c) || c == '+' || c == '-' || c == '.')))) return false;
    }
    return true;
}

}  // namespace

std::string resolve_url(std::string_view base, std::string_view reference) {
    // surrounding whitespace of a header value is not part of it
    while (!reference.empty() && (reference.front() == ' ' || reference.front() == '\t')) reference.remove_prefix(1);
    while (!reference.empty() && (reference.back() == ' ' || reference.back() == '\t')) reference.remove_suffix(1);
    if (has_scheme(reference)) {
        parse_url(encode_url(reference));  // only http(s) (throws InvalidUrl)
        return std::string(reference);
    }
    parse_url(base);
    const auto sep = base.find("://");
    const std::string_view scheme = base.substr(0, sep);  // without ':'
    const auto auth_end = std::min(base.find_first_of("/?#", sep + 3), base.size());
    const std::string_view origin = base.substr(0, auth_end);  // scheme://authority
    std::string_view path_query = base.substr(auth_end);
    path_query = path_query.substr(0, path_query.find('#'));
    const auto q = path_query.find('?');
    const std::string_view base_path = path_query.substr(0, q);
    const std::string_view base_query = q == std::string_view::npos ? std::string_view{} : path_query.substr(q);

    if (reference.substr(0, 2) == "//") return std::string(scheme) + ":" + std::string(reference);
    const std::string_view ref = reference.substr(0, reference.find('#'));
    const auto rq = ref.find('?');
    const std::string_view ref_path = ref.substr(0, rq);
    const std::string_view ref_query = rq == std::string_view::npos ? std::string_view{} : ref.substr(rq);
    std::string path;
    if (ref_path.empty()) {
        path = base_path.empty() ? "/" : std::string(base_path);
        return std::string(origin) + path + std::string(rq == std::string_view::npos ? base_query : ref_query);
    }
    if (ref_path.front() == '/') {
        path = remove_dot_segments(ref_path);
    } else {  // merge (5.2.3)
        const std::string base_dir =
            base_path.empty() ? std::string("/") : std::string(base_path.substr(0, base_path.rfind('/') + 1));
        path = remove_dot_segments(base_dir + std::string(ref_path));
    }
    if (path.empty() || path.front() != '/') path.insert(path.begin(), '/');
    return std::string(origin) + path + std::string(ref_query);
}

std::string library_version() {
    return std::to_string(BOOST_VERSION / 100000) + "." + std::to_string(BOOST_VERSION / 100 % 1000) + "." +
           std::to_string(BOOST_VERSION % 100);
}

// ---- Client ---------------------------------------------------------------------------------------

class Client::Guard {
public:
    explicit Guard(std::atomic<bool>& busy) : busy_(busy) {
        if (busy_.exchange(true, std::memory_order_acquire)) throw ConcurrentUse();
    }
    ~Guard() { busy_.store(false, std::memory_order_release); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

private:
    std::atomic<bool>& busy_;
};

namespace {

// ---- TLS set-up -----------------------------------------------------------------------------------

// Loads the CA certificates of `path` (a PEM file, or a directory of hashed certificates) into ctx.
void load_ca(ssl::context& ctx, const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw std::system_error(errno, std::generic_category(), "cannot open the CA file '" + path + "'");
    beast::error_code ec;
    if (S_ISDIR(st.st_mode)) {
        if (::access(path.c_str(), R_OK | X_OK) != 0)
            throw std::system_error(errno, std::generic_category(), "cannot read the CA directory '" + path + "'");
        ctx.add_verify_path(path, ec);
        if (ec) throw std::invalid_argument("cannot use the CA directory '" + path + "': " + ec.message());
        return;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot open the CA file '" + path + "'");
    ::close(fd);
    ctx.load_verify_file(path, ec);
    ERR_clear_error();
    if (ec)
        throw std::invalid_argument("the CA file '" + path + "' holds no usable PEM certificate (" + ec.message() +
                                    ")");
}

// The system's trust store (OpenSSL's default paths), loaded once per process and shared by every Client that
// trusts it: parsing Debian's ~140 root certificates takes 50-100 ms with OpenSSL 3, too much for every new
// Client. An X509_STORE is reference-counted and safe to use from several threads (its lookups lock). It is
// never freed (nor re-read: a change to the system's store is seen by the next process).
X509_STORE* system_trust_store() {
    static X509_STORE* const store = [] {
        X509_STORE* s = X509_STORE_new();
        if (s && X509_STORE_set_default_paths(s) != 1) {
            X509_STORE_free(s);
            s = nullptr;
        }
        ERR_clear_error();
        return s;
    }();
    return store;
}

std::shared_ptr<ssl::context> make_tls_context(const TlsConfig& cfg) {
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
    SSL_CTX* handle = ctx->native_handle();
    SSL_CTX_set_min_proto_version(handle, TLS1_2_VERSION);
    SSL_CTX_set_max_proto_version(handle, 0);  // the highest OpenSSL has: TLS 1.3
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_compression);
    if (!cfg.verify) {
        ctx->set_verify_mode(ssl::verify_none);
        return ctx;
    }
    ctx->set_verify_mode(ssl::verify_peer);
    if (cfg.ca_file.empty()) {  // set_default_verify_paths(), loaded once
        X509_STORE* store = system_trust_store();
        if (!store) throw TLSError("cannot load the system's trust store (OpenSSL's default verify paths)");
        SSL_CTX_set1_cert_store(handle, store);
    } else {
        load_ca(*ctx, cfg.ca_file);
    }
    return ctx;
}

// The TLS context of a TlsConfig, shared by every Client with the same configuration: SSL_CTX_new alone costs
// ~0.5 ms with OpenSSL 3 and loading a CA file more, which a program that creates a Client per request (the
// driver's --connection new) would pay every time. A context is never changed after it is set up, and
// OpenSSL allows SSL_new() on one SSL_CTX from several threads. A CA file is identified by its path and its
// device, inode, size and modification time, so a replaced or edited file is loaded again. At most
// kContextCache entries are kept (the oldest goes first; Clients keep theirs alive).
constexpr std::size_t kContextCache = 8;

std::shared_ptr<ssl::context> tls_context(const TlsConfig& cfg) {
    std::string key = cfg.verify ? "verify\n" : "none\n";
    if (cfg.verify && !cfg.ca_file.empty()) {
        struct stat st {};
        if (::stat(cfg.ca_file.c_str(), &st) != 0)
            throw std::system_error(errno, std::generic_category(), "cannot open the CA file '" + cfg.ca_file + "'");
        key += cfg.ca_file + "\n" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
               std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
               std::to_string(st.st_mtim.tv_nsec);
    }
    static std::mutex mutex;
    // oldest first. Never destroyed: OpenSSL's own atexit clean-up may run before static destructors would.
    static auto* const cache = new std::vector<std::pair<std::string, std::shared_ptr<ssl::context>>>();
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [k, ctx] : *cache)
        if (k == key) return ctx;
    auto ctx = make_tls_context(cfg);  // under the lock: concurrent first uses load the file once
    if (cache->size() >= kContextCache) cache->erase(cache->begin());
    cache->emplace_back(std::move(key), ctx);
    return ctx;
}

// Asio's host_name_verification (DNS names with X509_check_host, IP addresses with X509_check_ip_asc), which
// also records why it failed, so that the handshake error can say "hostname mismatch".
class VerifyHost {
public:
    VerifyHost(const std::string& host, bool ip) : check_(host), ip_(ip) {}
    bool operator()(bool preverified, ssl::verify_context& ctx) const {
        if (check_(preverified, ctx)) return true;
        if (preverified)  // the chain is fine: the leaf certificate is not for this host
            X509_STORE_CTX_set_error(ctx.native_handle(),
                                     ip_ ? X509_V_ERR_IP_ADDRESS_MISMATCH : X509_V_ERR_HOSTNAME_MISMATCH);
        return false;
    }

private:
    ssl::host_name_verification check_;
    bool ip_;
};

}  // namespace

namespace {

http::request<http::string_body> make_request(std::string_view method, const Url& u, const Headers& headers,
                                              std::string_view body) {
    if (!is_token(method)) throw std::invalid_argument("invalid HTTP method '" + printable(method) + "'");
    http::request<http::string_body> req;
    const auto verb = http::string_to_verb(bsv(method));
    if (verb == http::verb::unknown)
        req.method_string(bsv(method));
    else
        req.method(verb);
    req.target(u.target);
    req.version(11);
    for (const auto& [name, value] : headers) {
        if (!is_token(name)) throw std::invalid_argument("invalid header name '" + printable(name) + "'");
        // RFC 9110 5.5: field values are visible characters, SP, HTAB and obs-text; no other controls
        for (const char ch : value) {
            const auto c = static_cast<unsigned char>(ch);
            if ((c < 0x20 && c != '\t') || c == 0x7f)
                throw std::invalid_argument("invalid value for header '" + name + "' (contains a control character)");
        }
        // the message framing is derived from the body: a caller's framing header would desync it
        if (beast::iequals(name, "content-length") || beast::iequals(name, "transfer-encoding"))
            throw std::invalid_argument("header '" + name + "' is set by the client from the body; do not pass it");
        req.insert(name, value);
    }
    if (req.find(http::field::host) == req.end())
        req.set(http::field::host, u.port == (u.https ? 443 : 80)
                                       ? (u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host)
                                       : host_port(u.host, u.port));
    if (req.find(http::field::user_agent) == req.end())
        req.set(http::field::user_agent, std::string("beast-client/") + version + " " + BOOST_BEAST_VERSION_STRING);
    req.body().assign(body.data(), body.size());
    req.prepare_payload();
    return req;
}

// One connection of a Client's pool.
struct Connection {
    // Beast reads at most the buffer's free capacity (and at most 64 KiB) per read_some: without the
    // reserve, a flat_buffer would read bodies 512 bytes at a time.
    explicit Connection(net::io_context& ioc) : stream(ioc) { buffer.reserve(64 * 1024); }

    beast::tcp_stream stream;        // the http:// connection
    std::unique_ptr<TlsStream> tls;  // the https:// connection (a new one for every connection)
    beast::flat_buffer buffer;
    std::string host;  // what the open (or last) connection is connected to
    std::uint16_t port = 0;
    bool https = false;  // the open (or last) connection is tls, not stream
    bool open = false;

    tcp::socket& socket() { return https && tls ? beast::get_lowest_layer(*tls).socket() : stream.socket(); }
    bool matches(const Url& u) const { return u.https == https && u.port == port && u.host == host; }
    bool matches(const Connection& c) const { return c.https == https && c.port == port && c.host == host; }
};

// The time limits of one request: the total deadline, the connect deadline while connecting, and the read
// timeout counted from the last progress while reading.
struct Deadline {
    static constexpr Clock::time_point never = Clock::time_point::max();
    Clock::time_point total = never;
    std::chrono::nanoseconds total_limit{0};
    Clock::time_point connect = never;
    std::chrono::nanoseconds connect_limit{0};  // 0: none
    std::chrono::nanoseconds read_limit{0};     // 0: none
    Clock::time_point progress{};               // the last bytes of the response arrived then
    bool reading = false;

    Clock::time_point at() const {
        auto d = std::min(total, connect);
        if (reading && read_limit.count() > 0) d = std::min(d, progress + read_limit);
        return d;
    }
    void start_read() {
        reading = read_limit.count() > 0;
        if (reading) progress = Clock::now();
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
};

// A request in progress (send(), stream()): its connection (taken out of the pool), parser and limits.
struct Active {
    std::unique_ptr<Connection> conn;
    std::optional<ResponseReader> reader;
    std::string url;    // the current (finally: final) URL
    std::string where;  // host:port, for messages
    Deadline deadline;
};

template <class F>
decltype(auto) with_stream(Connection& c, F&& f) {
    return c.https ? f(*c.tls) : f(c.stream);
}

bool is_redirect(int status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

const std::string* find_header(const Headers& headers, std::string_view name) {
    for (const auto& [n, v] : headers)
        if (beast::iequals(n, bsv(name))) return &v;
    return nullptr;
}

void erase_header(Headers& headers, std::string_view name) {
    headers.erase(std::remove_if(headers.begin(), headers.end(),
                                 [&](const auto& h) { return beast::iequals(h.first, bsv(name)); }),
                  headers.end());
}

}  // namespace

struct Client::Impl {
    explicit Impl(Client& client) : owner(client) {
        // a CA bundle is loaded now, so that a bad path fails at construction; the system store on first use
        if (!owner.tls_.ca_file.empty() && owner.tls_.verify) tls_ctx = tls_context(owner.tls_);
    }

    Client& owner;
    net::io_context ioc{1};  // declared first: destroyed last
    tcp::resolver resolver{ioc};
    std::shared_ptr<ssl::context> tls_ctx;  // for the first https:// connection (or with a CA file); shared
    // The pool: a connection per scheme + host + port (open, or closed and kept for re-use), least recently
    // used first. A connection in use is taken out of it (Active, ResponseStream) and put back afterwards.
    std::vector<std::unique_ptr<Connection>> pool;
    std::atomic<std::size_t> open_connections{0};
    mutable std::mutex info_mutex;  // tls_info() may be called from another thread
    std::optional<TlsInfo> info;

    struct ResolveState {
        bool done = false;
        beast::error_code ec;
        tcp::resolver::results_type results;
    };

    Deadline deadline(std::optional<std::chrono::nanoseconds> total_override) const {
        Deadline d;
        const auto& t = owner.timeouts_;
        const auto total = total_override ? total_override : t.total;
        if (total) {
            d.total_limit = *total;
            d.total = Clock::now() + *total;
        }
        if (t.connect) d.connect_limit = *t.connect;
        if (t.read) d.read_limit = *t.read;
        return d;
    }

    // Closes the TCP socket (also under TLS: no close_notify exchange, nothing waits for the server). The TLS
    // stream object itself is replaced only by the next connect(), when no operation can be pending on it.
    void drop(Connection& c) {
        beast::error_code ignored;
        c.socket().close(ignored);
        c.buffer.clear();
        if (c.open) {
            c.open = false;
            const auto left = open_connections.fetch_sub(1, std::memory_order_relaxed) - 1;
            owner.connected_.store(left > 0, std::memory_order_relaxed);
        }
    }

    // A connection goes back to the pool (open or not), replacing the pool's entry for the same host.
    void release(std::unique_ptr<Connection> c) {
        if (!c) return;
        for (auto it = pool.begin(); it != pool.end(); ++it) {
            if ((*it)->matches(*c) || (!(*it)->open && !c->open)) {
                drop(**it);
                pool.erase(it);
                break;
            }
        }
        pool.push_back(std::move(c));
        while (pool.size() > Client::pool_size) {
            drop(*pool.front());
            pool.erase(pool.begin());
        }
    }

    void close_all() {
        for (auto& c : pool) drop(*c);
        pool.clear();
    }

    // Closes the socket (and cancels a resolve) so that the pending operation completes. Socket
    // operations complete at once with operation_aborted and are drained here, because their handlers
    // refer to the caller's stack. A resolve cannot be interrupted (getaddrinfo runs on Asio's private
    // thread): it is abandoned instead; its handler only holds a shared_ptr.
    void abort(const bool& done, bool drain, Connection& c) {
        resolver.cancel();
        drop(c);
        if (!drain) return;
        ioc.restart();
        while (!done) {
            if (ioc.run_one() == 0) break;
        }
    }

    static std::string timeout_text(const Deadline& d, Clock::time_point now, Phase phase, const std::string& where) {
        const std::string during = std::string(" (while ") + phase_text(phase) + ")";
        if (now >= d.total) return "request to " + where + " timed out after " + seconds_text(d.total_limit) + during;
        if (now >= d.connect)
            return "connecting to " + where + " timed out after " + seconds_text(d.connect_limit) +
                   " (connect timeout" + (phase == Phase::handshake ? ", during the TLS handshake)" : ")");
        return "no data from " + where + " for " + seconds_text(d.read_limit) + " (read timeout" +
               (phase == Phase::read ? ")" : ", while " + std::string(phase_text(phase)) + ")");
    }

    // Runs the io_context until `done`, checking the deadlines and the cancel callback between slices.
    void wait(const bool& done, const Deadline& d, const CancelCheck& cancel, Phase phase, bool drain,
              const std::string& where, Connection& c) {
        while (!done) {
            const auto now = Clock::now();
            const auto deadline = d.at();
            if (now >= deadline) {
                abort(done, drain, c);
                throw TimeoutError(timeout_text(d, now, phase, where));
            }
            const auto until = deadline - now > owner.poll_interval_ ? now + owner.poll_interval_ : deadline;
            if (ioc.stopped()) ioc.restart();
            try {
                while (!done && ioc.run_one_until(until) != 0) {
                }
            } catch (...) {  // thrown by a handler (e.g. bad_alloc while storing the body)
                abort(done, drain, c);
                throw;
            }
            if (done) return;
            if (ioc.stopped()) {  // out of work although the operation has not completed: a bug
                abort(done, drain, c);
                throw Error("internal error: no pending operation while " + std::string(phase_text(phase)) + " for " +
                            where);
            }
            if (cancel) {
                bool stop = false;
                try {
                    stop = cancel();
                } catch (...) {
                    abort(done, drain, c);
                    throw;
                }
                if (stop) {
                    abort(done, drain, c);
                    throw Cancelled("request to " + where + " cancelled (while " + phase_text(phase) + ")");
                }
            }
        }
    }

    // Whether the idle kept-alive connection can carry a new request: nothing unread is buffered and the
    // server has neither closed nor reset it. One non-blocking MSG_PEEK: EAGAIN = open and quiet; 0 = the
    // server's FIN (e.g. its keep-alive timeout); an error = reset; data = bytes the server sent unasked
    // (e.g. a 408 before closing), which cannot be the response to the next request. Over TLS the peek is on
    // the TCP socket under the TLS layer, where data is a TLS record the server sent unasked: on an idle
    // connection that is its close_notify (or another alert) ahead of its FIN. TLS records already read
    // from the socket but not yet processed (OpenSSL's buffers) count as data too.
    static bool reusable(Connection& c) {
        if (c.buffer.size() != 0) return false;
        if (c.https) {
            SSL* ssl = c.tls->native_handle();
            if (SSL_has_pending(ssl) || BIO_ctrl_pending(SSL_get_rbio(ssl)) != 0) return false;
        }
        char ch;
        for (;;) {
            const auto n = ::recv(c.socket().native_handle(), &ch, 1, MSG_PEEK | MSG_DONTWAIT);
            if (n < 0 && errno == EINTR) continue;
            return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
        }
    }

    void set_info(std::optional<TlsInfo> value) {
        std::lock_guard<std::mutex> lock(info_mutex);
        info = std::move(value);
    }

    // The pool's connection to u's scheme + host + port, taken out of the pool, opened when it is not open
    // (TCP, and for https the TLS handshake). `reused`: an open kept-alive connection is re-used. A
    // connection that the server closed while it was idle is replaced here, before anything is sent on it.
    std::unique_ptr<Connection> acquire(const Url& u, Deadline& d, const CancelCheck& cancel, const std::string& where,
                                        bool& reused) {
        std::unique_ptr<Connection> c;
        for (auto it = pool.begin(); it != pool.end(); ++it) {
            if ((*it)->matches(u)) {
                c = std::move(*it);
                pool.erase(it);
                break;
            }
        }
        if (c && c->open && reusable(*c)) {
            reused = true;
            return c;
        }
        reused = false;
        if (!c) {  // a closed connection object is re-used (its buffer), otherwise a new one
            for (auto it = pool.begin(); it != pool.end(); ++it) {
                if (!(*it)->open) {
                    c = std::move(*it);
                    pool.erase(it);
                    break;
                }
            }
        }
        if (!c) c = std::make_unique<Connection>(ioc);
        try {
            connect(*c, u, d, cancel, where);
        } catch (...) {
            drop(*c);
            release(std::move(c));
            throw;
        }
        return c;
    }

    void connect(Connection& c, const Url& u, Deadline& d, const CancelCheck& cancel, const std::string& where) {
        drop(c);
        if (d.connect_limit.count() > 0) d.connect = Clock::now() + d.connect_limit;
        struct ConnectPhase {  // the connect deadline ends with the phase, however it ends
            Deadline& d;
            ~ConnectPhase() { d.connect = Deadline::never; }
        } phase{d};
        std::vector<tcp::endpoint> endpoints;
        beast::error_code ec;
        const auto address = net::ip::make_address(u.host, ec);
        const bool is_ip = !ec;
        if (is_ip) {
            endpoints.emplace_back(address, u.port);
        } else {
            auto state = std::make_shared<ResolveState>();
            resolver.async_resolve(u.host, std::to_string(u.port), tcp::resolver::numeric_service,
                                   [state](const beast::error_code& e, tcp::resolver::results_type r) {
                                       state->ec = e;
                                       state->results = std::move(r);
                                       state->done = true;
                                   });
            wait(state->done, d, cancel, Phase::resolve, false, where, c);
            if (state->ec) fail(state->ec, Phase::resolve, where);
            for (const auto& entry : state->results) endpoints.push_back(entry.endpoint());
            if (endpoints.empty()) throw ConnectionError("cannot resolve the host of " + where + ": no addresses");
        }
        if (u.https) {
            if (!tls_ctx) tls_ctx = tls_context(owner.tls_);
            auto fresh = std::make_unique<TlsStream>(ioc, *tls_ctx);
            SSL* ssl = fresh->native_handle();
            // SNI carries host names only (RFC 6066 3)
            if (!is_ip && SSL_set_tlsext_host_name(ssl, u.host.c_str()) != 1) {
                ERR_clear_error();
                throw TLSError("cannot use '" + u.host + "' as the TLS server name (SNI)");
            }
            if (owner.tls_.verify) fresh->set_verify_callback(VerifyHost(u.host, is_ip));
            c.tls = std::move(fresh);  // the previous connection's: nothing is pending on it (every wait drains)
        } else {
            c.tls.reset();
        }
        c.https = u.https;
        c.host = u.host;
        c.port = u.port;
        beast::tcp_stream& tcp_layer = c.https ? beast::get_lowest_layer(*c.tls) : c.stream;
        bool done = false;
        tcp_layer.async_connect(endpoints, [&](const beast::error_code& e, const tcp::endpoint&) {
            ec = e;
            done = true;
        });
        wait(done, d, cancel, Phase::connect, true, where, c);
        if (ec) {
            drop(c);
            fail(ec, Phase::connect, where);
        }
        beast::error_code ignored;
        tcp_layer.socket().set_option(tcp::no_delay(true), ignored);
        if (c.https) {
            done = false;
            c.tls->async_handshake(ssl::stream_base::client, [&](const beast::error_code& e) {
                ec = e;
                done = true;
            });
            wait(done, d, cancel, Phase::handshake, true, where, c);
            if (ec) {
                const std::string why = handshake_failure(ec, c.tls->native_handle());
                ERR_clear_error();
                drop(c);
                throw TLSError("TLS handshake with " + where + " failed: " + why, kind_of(ec));
            }
            SSL* ssl = c.tls->native_handle();
            set_info(TlsInfo{SSL_get_version(ssl), SSL_get_cipher_name(ssl)});
        } else if (info) {  // (only this thread writes info)
            set_info(std::nullopt);
        }
        c.buffer.clear();
        c.open = true;
        open_connections.fetch_add(1, std::memory_order_relaxed);
        owner.connected_.store(true, std::memory_order_relaxed);
        owner.connections_.fetch_add(1, std::memory_order_relaxed);
    }

    // One request/response exchange on the pool's connection to u, returned (out of the pool) afterwards.
    // acquire() has already replaced a kept-alive connection found closed. If the server closes a re-used
    // connection after that check (a race with its idle timeout), the request is sent again once, on a new
    // connection, only when that is harmless: no byte of the response had arrived, and either no byte of the
    // request had been sent or the method is idempotent (a repeat has the effect of one request, RFC 9110
    // 9.2.2). `reader` is (re)created for each attempt; after a failure it holds what was received.
    std::unique_ptr<Connection> roundtrip(const Url& u, http::request<http::string_body>& req,
                                          std::optional<ResponseReader>& reader, const ReadSpec& spec, Deadline& d,
                                          const CancelCheck& cancel, const std::string& where) {
        for (int attempt = 0;; ++attempt) {
            reader.reset();
            bool reused = false;
            auto c = acquire(u, d, cancel, where, reused);
            const bool may_retry = reused && attempt == 0;
            bool retry = false;
            try {
                retry = with_stream(
                    *c, [&](auto& s) { return exchange(*c, s, req, reader, spec, d, cancel, where, may_retry); });
            } catch (...) {
                drop(*c);
                release(std::move(c));
                throw;
            }
            if (!retry) return c;
            release(std::move(c));
        }
    }

    // A failed read of the response: closes the connection and throws what the error means.
    [[noreturn]] void read_failed(Connection& c, const ResponseReader& parser, const beast::error_code& ec,
                                  const std::string& where) {
        const bool tls_alert_reply = !c.https && is_http_error(ec) && c.buffer.size() >= 3 &&
                                     static_cast<const unsigned char*>(c.buffer.data().data())[0] == 0x15 &&
                                     static_cast<const unsigned char*>(c.buffer.data().data())[1] == 0x03;
        drop(c);
        if (!parser.decode_error.empty())
            throw ProtocolError("cannot decode the response body from " + where + ": " + parser.decode_error);
        if (tls_alert_reply)  // an http:// URL to a TLS server, which answered with a TLS alert
            throw ProtocolError("malformed HTTP response from " + where + ": " + ec.message() +
                                " (the server answered with a TLS alert: is it an https:// server?)");
        fail(ec, Phase::read, where);
    }

    // After the whole response: Connection: close, HTTP/1.0, a body delimited by EOF, or a protocol switch
    // we did not ask for end the connection.
    void finished(Connection& c, const ResponseReader& parser) {
        if (!parser.keep_alive() || parser.status == 101) drop(c);
    }

    // Sends the request and reads the response (or, spec.header_only, its header) on the open connection.
    // Returns true when the request is to be sent again on a new connection (see roundtrip()).
    template <class Stream>
    bool exchange(Connection& c, Stream& s, http::request<http::string_body>& req,
                  std::optional<ResponseReader>& reader, const ReadSpec& spec, Deadline& d, const CancelCheck& cancel,
                  const std::string& where, bool may_retry) {
        const bool head = req.method() == http::verb::head;
        const bool idempotent = is_idempotent(req.method());
        beast::error_code ec;
        bool done = false;
        std::size_t sent = 0;  // bytes of the request handed to the kernel (to the TLS layer)
        http::async_write(s, req, [&](const beast::error_code& e, std::size_t n) {
            ec = e;
            sent = n;
            done = true;
        });
        wait(done, d, cancel, Phase::write, true, where, c);
        if (ec) {
            drop(c);
            if (may_retry && is_stale_connection(ec) && (idempotent || sent == 0)) return true;
            fail(ec, Phase::write, where);
        }

        bool interim = false;  // a 1xx interim response was received: the response has started
        for (;;) {
            ResponseReader& parser = reader.emplace(spec.keep, spec.keep);
            parser.header_limit(header_limit);
            parser.body_limit(spec.body_limit);
            if (spec.keep) parser.decoded_limit = spec.body_limit;
            parser.chunk_limit = spec.chunk_limit;
            parser.decompress = spec.decompress;
            if (head) parser.skip(true);
            if (d.read_limit.count() > 0) parser.progress = &d.progress;
            done = false;
            d.start_read();
            if (spec.header_only) {
                http::async_read_header(s, c.buffer, parser, [&](const beast::error_code& e, std::size_t) {
                    ec = e;
                    done = true;
                });
            } else {
                http::async_read(s, c.buffer, parser, [&](const beast::error_code& e, std::size_t) {
                    ec = e;
                    done = true;
                });
            }
            wait(done, d, cancel, Phase::read, true, where, c);
            d.reading = false;
            if (ec == ssl::error::stream_truncated) {
                // the TLS peer closed without close_notify: what Beast does for a TCP EOF (a body delimited
                // by the end of the connection is complete; anything else was cut short)
                if (parser.got_some()) {
                    parser.put_eof(ec);
                    if (!ec) {
                        drop(c);
                        return false;
                    }
                } else {
                    ec = http::error::end_of_stream;
                }
            }
            if (ec) {
                const bool started = interim || parser.got_some();
                if (may_retry && !started && is_stale_connection(ec)) {
                    drop(c);
                    if (idempotent) return true;
                    throw ConnectionError("connection to " + where +
                                              " closed by the server before a response was received (" +
                                              str(req.method_string()) +
                                              " is not idempotent: not re-sent, the server may have received it)",
                                          ConnectionError::Kind::reset);
                }
                read_failed(c, parser, ec, where);
            }
            // 1xx interim responses (100 Continue, 103 Early Hints) have no body: the final one follows
            if (parser.status >= 100 && parser.status < 200 && parser.status != 101) {
                interim = true;
                continue;
            }
            break;
        }
        if (reader->is_done()) finished(c, *reader);
        return false;
    }

    // Reads (more of) the body of a response whose header was read with spec.header_only: all of it, or
    // (`some`) the next piece.
    void read_body(Active& a, const CancelCheck& cancel, bool some) {
        Connection& c = *a.conn;
        ResponseReader& parser = *a.reader;
        if (parser.is_done()) return;
        beast::error_code ec;
        bool done = false;
        with_stream(c, [&](auto& s) {
            a.deadline.start_read();
            const auto handler = [&](const beast::error_code& e, std::size_t) {
                ec = e;
                done = true;
            };
            if (some)
                http::async_read_some(s, c.buffer, parser, handler);
            else
                http::async_read(s, c.buffer, parser, handler);
            return 0;
        });
        wait(done, a.deadline, cancel, Phase::read, true, a.where, c);
        a.deadline.reading = false;
        if (ec == ssl::error::stream_truncated) {  // as in exchange(); the header has been read
            parser.put_eof(ec);
            if (!ec) {
                drop(c);
                return;
            }
        }
        if (ec) read_failed(c, parser, ec, a.where);
        if (parser.is_done()) finished(c, parser);
    }

    // send() and stream(): the request, and the redirects it leads to, up to the final response's header.
    void open(Active& a, std::string method, std::string_view url, Headers headers, std::string_view body_view,
              const RequestOptions& o, const CancelCheck& cancel, bool streaming) {
        a.deadline = deadline(o.timeout);
        std::string body(body_view);
        std::string current = encode_url(url);
        if (o.decompress && !find_header(headers, "accept-encoding"))
            headers.emplace_back("Accept-Encoding", "gzip, deflate");
        if (!find_header(headers, "user-agent"))
            headers.emplace_back("User-Agent",
                                 o.user_agent.empty() ? std::string("beast-client/") + version : o.user_agent);
        ReadSpec spec;
        spec.keep = true;
        spec.body_limit = streaming ? std::numeric_limits<std::uint64_t>::max() : request_body_limit;
        spec.decompress = o.decompress;
        spec.header_only = true;
        if (streaming) spec.chunk_limit = 64 * 1024;
        for (int hops = 0;; ++hops) {
            const Url u = parse_url(current);
            auto req = make_request(method, u, headers, body);
            a.where = host_port(u.host, u.port);
            a.url = current;
            a.conn = roundtrip(u, req, a.reader, spec, a.deadline, cancel, a.where);
            const int status = a.reader->status;
            if (!o.follow_redirects || !is_redirect(status)) return;
            const std::string* location = find_header(a.reader->headers, "location");
            if (!location) return;  // a 3xx without Location is the final response
            if (hops >= o.max_redirects) {
                drop(*a.conn);
                release(std::move(a.conn));
                throw TooManyRedirects("more than " + std::to_string(o.max_redirects) +
                                       " redirects; the last URL was " + current + " (redirecting to " +
                                       printable(*location) + ")");
            }
            std::string next;
            Url nu;
            try {
                next = encode_url(resolve_url(current, *location));
                nu = parse_url(next);
            } catch (const InvalidUrl& e) {
                drop(*a.conn);
                release(std::move(a.conn));
                throw ProtocolError("redirect from " + current + " to an unsupported or invalid URL: " + e.what());
            }
            // the redirect's own body is read (so that the connection can be re-used) and dropped
            a.reader->discard = true;
            read_body(a, cancel, false);
            release(std::move(a.conn));
            if ((status == 301 || status == 302 || status == 303) && method != "HEAD") {
                method = "GET";
                body.clear();
                erase_header(headers, "content-type");
            }
            if (nu.https != u.https || nu.host != u.host || nu.port != u.port) {
                erase_header(headers, "authorization");
                erase_header(headers, "cookie");
                erase_header(headers, "proxy-authorization");
            }
            erase_header(headers, "host");
            current = std::move(next);
        }
    }
};

namespace {

const auto kTenYears = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::hours(24 * 3653));

std::optional<std::chrono::nanoseconds> checked(std::optional<std::chrono::nanoseconds> t, const char* what) {
    if (!t) return t;
    if (t->count() <= 0) throw std::invalid_argument(std::string(what) + " must be > 0");
    return std::min(*t, kTenYears);
}

}  // namespace

Client::Client(std::chrono::nanoseconds timeout, std::chrono::nanoseconds poll_interval)
    : Client(timeout, TlsConfig{}, poll_interval) {}

Client::Client(std::chrono::nanoseconds timeout, TlsConfig tls, std::chrono::nanoseconds poll_interval)
    : Client(Timeouts{timeout, std::nullopt, std::nullopt}, std::move(tls), poll_interval) {}

Client::Client(const Timeouts& timeouts, TlsConfig tls, std::chrono::nanoseconds poll_interval)
    : poll_interval_(poll_interval), tls_(std::move(tls)) {
    timeouts_.total = checked(timeouts.total, "timeout");
    timeouts_.connect = checked(timeouts.connect, "connect timeout");
    timeouts_.read = checked(timeouts.read, "read timeout");
    if (poll_interval_.count() <= 0) throw std::invalid_argument("poll interval must be > 0");
    poll_interval_ = std::min(poll_interval_, kTenYears);
    impl_ = std::make_unique<Impl>(*this);
}

Client::~Client() = default;

int Client::get(std::string_view url, const CancelCheck& cancel) {
    Guard guard(busy_);
    last_body_bytes_.store(0, std::memory_order_relaxed);
    const Url u = parse_url(url);
    auto req = make_request("GET", u, {}, {});
    std::optional<ResponseReader> reader;
    Deadline d = impl_->deadline(std::nullopt);
    const ReadSpec spec;  // nothing kept, no limit
    try {
        impl_->release(impl_->roundtrip(u, req, reader, spec, d, cancel, host_port(u.host, u.port)));
    } catch (...) {
        if (reader) last_body_bytes_.store(static_cast<std::size_t>(reader->body_bytes), std::memory_order_relaxed);
        throw;
    }
    last_body_bytes_.store(static_cast<std::size_t>(reader->body_bytes), std::memory_order_relaxed);
    return reader->status;
}

Response Client::request(std::string_view method, std::string_view url, const Headers& headers, std::string_view body,
                         const CancelCheck& cancel) {
    Guard guard(busy_);
    last_body_bytes_.store(0, std::memory_order_relaxed);
    const Url u = parse_url(url);
    auto req = make_request(method, u, headers, body);
    std::optional<ResponseReader> reader;
    Deadline d = impl_->deadline(std::nullopt);
    ReadSpec spec;
    spec.keep = true;
    spec.body_limit = request_body_limit;
    try {
        impl_->release(impl_->roundtrip(u, req, reader, spec, d, cancel, host_port(u.host, u.port)));
    } catch (...) {
        if (reader) last_body_bytes_.store(static_cast<std::size_t>(reader->body_bytes), std::memory_order_relaxed);
        throw;
    }
    last_body_bytes_.store(static_cast<std::size_t>(reader->body_bytes), std::memory_order_relaxed);
    Response out;
    out.status = reader->status;
    out.headers = std::move(reader->headers);
    out.body = std::move(reader->body);
    out.reason = std::move(reader->reason);
    return out;
}

Response Client::send(std::string_view method, std::string_view url, const Headers& headers, std::string_view body,
                      const RequestOptions& options, const CancelCheck& cancel) {
    Guard guard(busy_);
    last_body_bytes_.store(0, std::memory_order_relaxed);
    Active a;
    try {
        impl_->open(a, std::string(method), url, headers, body, options, cancel, false);
        impl_->read_body(a, cancel, false);
    } catch (...) {
        if (a.reader) last_body_bytes_.store(static_cast<std::size_t>(a.reader->body_bytes), std::memory_order_relaxed);
        if (a.conn) {
            impl_->drop(*a.conn);
            impl_->release(std::move(a.conn));
        }
        throw;
    }
    impl_->release(std::move(a.conn));
    ResponseReader& r = *a.reader;
    last_body_bytes_.store(static_cast<std::size_t>(r.body_bytes), std::memory_order_relaxed);
    Response out;
    out.status = r.status;
    out.headers = std::move(r.headers);
    out.body = std::move(r.body);
    out.reason = std::move(r.reason);
    out.url = std::move(a.url);
    return out;
}

struct ResponseStream::State {
    Client& owner;
    Active a;
    bool finished = false;
};

std::unique_ptr<ResponseStream> Client::stream(std::string_view method, std::string_view url, const Headers& headers,
                                               std::string_view body, const RequestOptions& options,
                                               const CancelCheck& cancel) {
    Guard guard(busy_);
    last_body_bytes_.store(0, std::memory_order_relaxed);
    auto state = std::make_unique<ResponseStream::State>(ResponseStream::State{*this, {}, false});
    Active& a = state->a;
    try {
        impl_->open(a, std::string(method), url, headers, body, options, cancel, true);
    } catch (...) {
        if (a.conn) {
            impl_->drop(*a.conn);
            impl_->release(std::move(a.conn));
        }
        throw;
    }
    return std::unique_ptr<ResponseStream>(new ResponseStream(std::move(state)));
}

ResponseStream::ResponseStream(std::unique_ptr<State> state) : state_(std::move(state)) {}

ResponseStream::~ResponseStream() {
    try {
        close();
    } catch (...) {  // the Client is busy in another thread: close the socket only
        if (state_->a.conn) {
            beast::error_code ignored;
            state_->a.conn->socket().close(ignored);
        }
    }
}

int ResponseStream::status() const noexcept { return state_->a.reader->status; }
const std::string& ResponseStream::reason() const noexcept { return state_->a.reader->reason; }
const Headers& ResponseStream::headers() const noexcept { return state_->a.reader->headers; }
const std::string& ResponseStream::url() const noexcept { return state_->a.url; }
bool ResponseStream::done() const noexcept { return state_->finished; }

bool ResponseStream::next(std::string& chunk, const CancelCheck& cancel) {
    State& st = *state_;
    Client::Guard guard(st.owner.busy_);  // first: the state below is the Client's thread's
    if (st.finished) return false;
    Client::Impl& impl = *st.owner.impl_;
    ResponseReader& r = *st.a.reader;
    for (;;) {
        if (!r.body.empty()) {
            chunk.clear();
            chunk.swap(r.body);
            st.owner.last_body_bytes_.store(static_cast<std::size_t>(r.body_bytes), std::memory_order_relaxed);
            return true;
        }
        if (r.is_done()) {
            st.finished = true;
            impl.release(std::move(st.a.conn));
            return false;
        }
        try {
            impl.read_body(st.a, cancel, true);
        } catch (...) {
            st.finished = true;
            st.owner.last_body_bytes_.store(static_cast<std::size_t>(r.body_bytes), std::memory_order_relaxed);
            impl.drop(*st.a.conn);
            impl.release(std::move(st.a.conn));
            throw;
        }
    }
}

void ResponseStream::close() {
    State& st = *state_;
    Client::Guard guard(st.owner.busy_);
    if (!st.a.conn) {
        st.finished = true;
        return;
    }
    Client::Impl& impl = *st.owner.impl_;
    // the body was read to its end (or there is none): the connection can carry the next request
    if (!(st.a.reader && st.a.reader->is_done())) impl.drop(*st.a.conn);
    st.finished = true;
    impl.release(std::move(st.a.conn));
}

void Client::close() {
    Guard guard(busy_);
    impl_->close_all();
}

std::size_t Client::last_body_bytes() const noexcept { return last_body_bytes_.load(std::memory_order_relaxed); }
std::size_t Client::connections_opened() const noexcept { return connections_.load(std::memory_order_relaxed); }
bool Client::connected() const noexcept { return connected_.load(std::memory_order_relaxed); }

std::optional<TlsInfo> Client::tls_info() const {
    std::lock_guard<std::mutex> lock(impl_->info_mutex);
    return impl_->info;
}

}  // namespace beast_client
