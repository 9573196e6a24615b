#include "decode.hpp"

#include <boost/beast/core/error.hpp>

#include <algorithm>

namespace beast_client::detail {

namespace beast = boost::beast;

std::unique_ptr<Decoder> make_decoder(std::string_view coding) {
    if (coding == "gzip" || coding == "x-gzip") return std::make_unique<ZlibDecoder>(ZlibDecoder::Format::gzip);
    if (coding == "deflate") return std::make_unique<ZlibDecoder>(ZlibDecoder::Format::deflate);
    if (coding == "br") return make_brotli_decoder();
    if (coding == "zstd") return make_zstd_decoder();
    return nullptr;
}

bool ZlibDecoder::feed(const char* data, std::size_t n, std::string& out, std::size_t out_limit, std::size_t& used) {
    used = 0;
    if (held_ && state_ == State::body) {  // what an earlier call held back comes first
        static const char none = 0;
        std::size_t ignored = 0;
        if (!inflate(&none, 0, out, ignored, out_limit)) return false;
        if (held_) return true;  // still at the limit
    }
    const std::size_t total = n;
    const bool ok = feed_some(data, n, out, out_limit);
    used = total - n;
    return ok;
}

bool ZlibDecoder::feed_some(const char*& data, std::size_t& n, std::string& out, std::size_t out_limit) {
    const std::size_t start = n;
    while (n > 0) {
        if (out.size() >= out_limit && state_ == State::body && (n < start || held_)) return true;
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
                    if (head_.size() > 64 * 1024) return fail("header too long");
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
                    if (!Decoder::feed(early.data(), early.size(), out)) return false;
                }
                break;
            }
            case State::body: {
                std::size_t used = 0;
                if (!inflate(data, n, out, used, out_limit)) return false;
                if (used == 0 && state_ == State::body && !(held_ && out.size() >= out_limit))
                    return fail("no progress");
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

bool ZlibDecoder::finish() {
    if (state_ == State::done || (state_ == State::header && head_.empty())) return true;
    return fail("the compressed data is truncated");
}

bool ZlibDecoder::fail(const std::string& why) {
    return bad(std::string(format_ == Format::gzip ? "invalid gzip body: " : "invalid deflate body: ") + why);
}

bool ZlibDecoder::header_length(bool& complete, std::size_t& length) {
    const auto* b = reinterpret_cast<const unsigned char*>(head_.data());
    const std::size_t size = head_.size();
    if (format_ == Format::deflate) {
        if (size < 2) return true;
        // a zlib header (CM 8, window <= 32 KiB, FCHECK); otherwise raw deflate: no header
        zlib_ = (b[0] & 0x0f) == 8 && (b[0] >> 4) <= 7 && ((b[0] << 8) | b[1]) % 31 == 0;
        if (zlib_ && (b[1] & 0x20)) return fail("a preset dictionary is not supported");
        complete = true;
        length = zlib_ ? 2 : 0;
        return true;
    }
    if (size < 10) return true;
    if (b[0] != 0x1f || b[1] != 0x8b) return fail("not in gzip format");
    if (b[2] != 8) return fail("unknown compression method");
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

// Inflates until the input is used and the output handed out, or until out holds out_limit bytes (then input may
// be left, or output held back: held_).
bool ZlibDecoder::inflate(const char* data, std::size_t n, std::string& out, std::size_t& used, std::size_t out_limit) {
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
            held_ = false;
            break;
        }
        if (ec && ec != beast::zlib::error::need_buffers) return fail(ec.message());
        held_ = zs.avail_out == 0;  // a full buffer: inflate may have more for us
        if (produced == 0 && ec == beast::zlib::error::need_buffers) {
            held_ = false;
            break;
        }
        if (!held_ && zs.avail_in == 0) break;  // all of the input used, all of its output out
        if (out.size() >= out_limit) break;     // enough for now: input left, or output held
    }
    used = n - zs.avail_in;
    return true;
}

void ZlibDecoder::checksum(const char* data, std::size_t n) {
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

bool ZlibDecoder::check_trailer() {
    const auto* b = reinterpret_cast<const unsigned char*>(head_.data());
    state_ = State::done;
    if (format_ == Format::gzip) {
        const std::uint32_t crc = b[0] | (b[1] << 8) | (b[2] << 16) | (std::uint32_t(b[3]) << 24);
        const std::uint32_t isize = b[4] | (b[5] << 8) | (b[6] << 16) | (std::uint32_t(b[7]) << 24);
        if (crc != crc_.checksum()) return fail("CRC-32 mismatch");
        if (isize != static_cast<std::uint32_t>(size_)) return fail("length mismatch");
        return true;
    }
    const std::uint32_t adler = (std::uint32_t(b[0]) << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
    if (adler != ((adler_b_ << 16) | adler_a_)) return fail("Adler-32 mismatch");
    return true;
}

}  // namespace beast_client::detail
