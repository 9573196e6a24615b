// Decoding of response bodies (send(), stream(), the AsyncClient's): gzip and deflate (decode.cpp) and br and zstd
// (codings.cpp). gzip / deflate: Boost.Beast's zlib port (header-only) inflates raw deflate data; the gzip (RFC
// 1952) and zlib (RFC 1950) wrappers around it, and their checksums (CRC-32 with Boost.CRC, Adler-32), are
// handled here. Content-Encoding "deflate" is the zlib format (RFC 9110 8.4.1.2); raw deflate, which some
// servers send instead, is accepted too (as browsers and curl do). br: libbrotlidec; zstd: libzstd, its window
// bounded to 8 MiB as RFC 9659 asks of a zstd Content-Encoding (a server cannot make the client allocate more).
// Bytes after the end of the compressed stream are ignored (zstd: another frame is decoded, as RFC 8878 allows).
#pragma once

#include <boost/beast/zlib/inflate_stream.hpp>
#include <boost/crc.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

namespace beast_client::detail {

class Decoder {
public:
    virtual ~Decoder() = default;

    // Appends the decoded bytes of data[0, n) to out and sets `used` to the bytes of data consumed. Stops once
    // out holds `out_limit` bytes (having used at least one byte of data, or with decoded output held back:
    // pending()), else decodes all of it. False (with error()) when the data is not valid. With n == 0 it
    // only hands out what is pending.
    virtual bool feed(const char* data, std::size_t n, std::string& out, std::size_t out_limit, std::size_t& used) = 0;
    // Decoded output held back by a feed() that stopped at its limit: to be handed out before the decoder
    // is fed more (feed(nullptr, 0, ...)) or finished.
    virtual bool pending() const { return false; }
    // At the end of the body: the compressed stream must be complete (an empty body is fine).
    virtual bool finish() = 0;

    bool feed(const char* data, std::size_t n, std::string& out) {
        std::size_t used = 0;
        return feed(data, n, out, std::numeric_limits<std::size_t>::max(), used);
    }
    const std::string& error() const noexcept { return error_; }

protected:
    bool bad(const std::string& why) {
        error_ = why;
        return false;
    }
    std::string error_;
};

// A decoder of the Content-Encoding `coding` (lower-case, no spaces: gzip, x-gzip, deflate, br, zstd), or null
// for a coding it does not decode.
std::unique_ptr<Decoder> make_decoder(std::string_view coding);

// The Accept-Encoding value of send() / stream(): the codings make_decoder() knows ("gzip, deflate, br, zstd";
// "gzip, deflate" in a build without libbrotlidec and libzstd: BEAST_CLIENT_BROTLI_ZSTD).
const char* accept_encoding();

// br and zstd (codings.cpp): null in a build without them.
std::unique_ptr<Decoder> make_brotli_decoder();
std::unique_ptr<Decoder> make_zstd_decoder();

// gzip and deflate.
class ZlibDecoder final : public Decoder {
public:
    enum class Format { gzip, deflate };
    explicit ZlibDecoder(Format format) : format_(format) {}

    using Decoder::feed;
    bool feed(const char* data, std::size_t n, std::string& out, std::size_t out_limit, std::size_t& used) override;
    bool pending() const override { return held_; }
    bool finish() override;

private:
    enum class State { header, body, trailer, done };

    bool feed_some(const char*& data, std::size_t& n, std::string& out, std::size_t out_limit);
    bool fail(const std::string& why);
    // Whether head_ holds the whole header, and its length then.
    bool header_length(bool& complete, std::size_t& length);
    bool inflate(const char* data, std::size_t n, std::string& out, std::size_t& used, std::size_t out_limit);
    void checksum(const char* data, std::size_t n);
    std::size_t trailer_size() const { return format_ == Format::gzip ? 8 : (zlib_ ? 4 : 0); }
    bool check_trailer();

    Format format_;
    State state_ = State::header;
    bool zlib_ = false;
    bool held_ = false;  // inflate stopped at the output limit with its output buffer full: more may follow
    std::string head_;   // header or trailer bytes collected so far
    boost::beast::zlib::inflate_stream inflate_;
    boost::crc_32_type crc_;
    std::uint32_t adler_a_ = 1, adler_b_ = 0;
    std::uint64_t size_ = 0;
};

}  // namespace beast_client::detail
