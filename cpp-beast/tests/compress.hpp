// Compressed test bodies: gzip (Beast's zlib port, with its CRC-32 trailer), br (libbrotlienc) and zstd (libzstd),
// and a compressible text. For test_codings.cpp and test_async.cpp.
#pragma once

#include <brotli/encode.h>
#include <zstd.h>
#include <boost/beast/zlib/deflate_stream.hpp>
#include <boost/crc.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace test_support {

inline std::string text(std::size_t n) {
    std::string s;
    for (std::size_t i = 0; s.size() < n; ++i) s += "line " + std::to_string(i) + " of a compressible body\n";
    s.resize(n);
    return s;
}

inline std::string gzip(const std::string& data) {
    namespace zlib = boost::beast::zlib;
    zlib::deflate_stream ds;
    ds.reset(6, 15, 8, zlib::Strategy::normal);
    std::string deflated(data.size() + 1024, '\0');
    zlib::z_params zs;
    zs.next_in = data.data();
    zs.avail_in = data.size();
    zs.next_out = &deflated[0];
    zs.avail_out = deflated.size();
    boost::system::error_code ec;
    ds.write(zs, zlib::Flush::finish, ec);
    EXPECT_TRUE(!ec || ec == zlib::error::end_of_stream) << ec.message();
    deflated.resize(zs.total_out);
    std::string out("\x1f\x8b\x08\0\0\0\0\0\0\x03", 10);
    out += deflated;
    boost::crc_32_type crc;
    crc.process_bytes(data.data(), data.size());
    for (std::uint32_t v : {static_cast<std::uint32_t>(crc.checksum()), static_cast<std::uint32_t>(data.size())})
        for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
    return out;
}

inline std::string brotli(const std::string& data, int quality = 5) {
    std::size_t size = BrotliEncoderMaxCompressedSize(data.size());
    std::string out(size ? size : 64, '\0');
    size = out.size();
    const bool ok = BrotliEncoderCompress(quality, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, data.size(),
                                          reinterpret_cast<const std::uint8_t*>(data.data()), &size,
                                          reinterpret_cast<std::uint8_t*>(&out[0]));
    EXPECT_TRUE(ok);
    out.resize(size);
    return out;
}

// With `window_log`: a frame whose header declares that window (the content size left unknown, so that the
// encoder does not shrink it), as a server with a large window would send.
inline std::string zstd(const std::string& data, int window_log = 0) {
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    if (window_log) ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, window_log);
    std::string out(ZSTD_compressBound(data.size()) + 64, '\0');
    ZSTD_inBuffer in{data.data(), data.size(), 0};
    ZSTD_outBuffer o{&out[0], out.size(), 0};
    ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_continue);  // not single-pass: the content size stays unknown
    ZSTD_inBuffer none{nullptr, 0, 0};
    while (ZSTD_compressStream2(cctx, &o, &none, ZSTD_e_end) != 0) {
    }
    ZSTD_freeCCtx(cctx);
    out.resize(o.pos);
    return out;
}

}  // namespace test_support
