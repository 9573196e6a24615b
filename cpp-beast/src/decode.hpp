// gzip / deflate decoding of response bodies (send(), stream()).
// Boost.Beast's zlib port (header-only) inflates raw deflate data; the gzip (RFC 1952) and zlib (RFC 1950)
// wrappers around it, and their checksums (CRC-32 with Boost.CRC, Adler-32), are handled here. Content-Encoding
// "deflate" is the zlib format (RFC 9110 8.4.1.2); raw deflate, which some servers send instead, is accepted
// too (as browsers and curl do). Bytes after the end of the compressed stream are ignored.
#pragma once

#include <boost/beast/zlib/inflate_stream.hpp>
#include <boost/crc.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace beast_client::detail {

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

    // At the end of the body: the compressed stream must be complete (an empty body is fine).
    bool finish();

    const std::string& error() const noexcept { return error_; }

private:
    enum class State { header, body, trailer, done };

    bool feed_some(const char*& data, std::size_t& n, std::string& out, std::size_t out_limit);
    bool bad(const std::string& why);
    // Whether head_ holds the whole header, and its length then.
    bool header_length(bool& complete, std::size_t& length);
    bool inflate(const char* data, std::size_t n, std::string& out, std::size_t& used, std::size_t out_limit);
    void checksum(const char* data, std::size_t n);
    std::size_t trailer_size() const { return format_ == Format::gzip ? 8 : (zlib_ ? 4 : 0); }
    bool check_trailer();

    Format format_;
    State state_ = State::header;
    bool zlib_ = false;
    std::string head_;  // header or trailer bytes collected so far
    boost::beast::zlib::inflate_stream inflate_;
    boost::crc_32_type crc_;
    std::uint32_t adler_a_ = 1, adler_b_ = 0;
    std::uint64_t size_ = 0;
    std::string error_;
};

}  // namespace beast_client::detail
