// The br and zstd decoders (decode.hpp), on libbrotlidec and libzstd's streaming APIs. A build without them
// (BEAST_CLIENT_BROTLI_ZSTD off: cpp-beast/CMakeLists.txt) decodes gzip and deflate only and does not offer br
// and zstd in Accept-Encoding.
#include "decode.hpp"

#ifdef BEAST_CLIENT_HAS_BROTLI_ZSTD
#include <brotli/decode.h>
#include <zstd.h>
#include <zstd_errors.h>
#endif

namespace beast_client::detail {

#ifdef BEAST_CLIENT_HAS_BROTLI_ZSTD

namespace {

// RFC 9659: a zstd Content-Encoding's window is at most 8 MiB (2^23), so that decoding needs no more memory.
constexpr int kZstdWindowLog = 23;
constexpr std::size_t kBuffer = 16 * 1024;

class BrotliDecoder final : public Decoder {
public:
    BrotliDecoder() : state_(BrotliDecoderCreateInstance(nullptr, nullptr, nullptr)) {}
    ~BrotliDecoder() override {
        if (state_) BrotliDecoderDestroyInstance(state_);
    }
    BrotliDecoder(const BrotliDecoder&) = delete;
    BrotliDecoder& operator=(const BrotliDecoder&) = delete;

    using Decoder::feed;
    bool feed(const char* data, std::size_t n, std::string& out, std::size_t out_limit, std::size_t& used) override {
        used = 0;
        if (!state_) return bad("invalid br body: cannot allocate the decoder");
        if (done_) {  // anything after the compressed stream is ignored
            used = n;
            return true;
        }
        auto next_in = reinterpret_cast<const std::uint8_t*>(data);
        std::size_t avail_in = n;
        if (n > 0) started_ = true;
        std::uint8_t buf[kBuffer];
        for (;;) {
            std::uint8_t* next_out = buf;
            std::size_t avail_out = sizeof buf;
            const auto result =
                BrotliDecoderDecompressStream(state_, &avail_in, &next_in, &avail_out, &next_out, nullptr);
            out.append(reinterpret_cast<const char*>(buf), sizeof buf - avail_out);
            if (result == BROTLI_DECODER_RESULT_ERROR)
                return bad(std::string("invalid br body: ") +
                           BrotliDecoderErrorString(BrotliDecoderGetErrorCode(state_)));
            if (result == BROTLI_DECODER_RESULT_SUCCESS) {
                done_ = true;
                held_ = false;
                avail_in = 0;
                break;
            }
            held_ = result == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT;
            if (!held_ && avail_in == 0) break;  // NEEDS_MORE_INPUT: all used, all out
            if (out.size() >= out_limit) break;
        }
        used = n - avail_in;
        return true;
    }
    bool pending() const override { return held_; }
    bool finish() override {
        if (done_ || !started_) return true;  // an empty body is no br stream, and fine (as for gzip)
        return bad("invalid br body: the compressed data is truncated");
    }

private:
    BrotliDecoderState* state_;
    bool started_ = false;
    bool done_ = false;
    bool held_ = false;
};

class ZstdDecoder final : public Decoder {
public:
    ZstdDecoder() : stream_(ZSTD_createDStream()) {
        if (stream_) ZSTD_DCtx_setParameter(stream_, ZSTD_d_windowLogMax, kZstdWindowLog);
    }
    ~ZstdDecoder() override {
        if (stream_) ZSTD_freeDStream(stream_);
    }
    ZstdDecoder(const ZstdDecoder&) = delete;
    ZstdDecoder& operator=(const ZstdDecoder&) = delete;

    using Decoder::feed;
    bool feed(const char* data, std::size_t n, std::string& out, std::size_t out_limit, std::size_t& used) override {
        used = 0;
        if (!stream_) return bad("invalid zstd body: cannot allocate the decoder");
        ZSTD_inBuffer in{data, n, 0};
        char buf[kBuffer];
        for (;;) {
            ZSTD_outBuffer o{buf, sizeof buf, 0};
            const std::size_t hint = ZSTD_decompressStream(stream_, &o, &in);
            out.append(buf, o.pos);
            if (ZSTD_isError(hint)) {
                if (ZSTD_getErrorCode(hint) == ZSTD_error_frameParameter_windowTooLarge)
                    return bad("invalid zstd body: its window is larger than 8 MiB (RFC 9659)");
                return bad(std::string("invalid zstd body: ") + ZSTD_getErrorName(hint));
            }
            if (o.pos > 0 || in.pos > 0) started_ = true;
            frame_done_ = hint == 0;
            held_ = o.pos == o.size;  // a full buffer: more may be waiting
            if (!held_ && in.pos == in.size) break;
            if (out.size() >= out_limit) break;
            if (o.pos == 0 && in.pos == in.size) {  // nothing more to hand out
                held_ = false;
                break;
            }
        }
        used = in.pos;
        return true;
    }
    bool pending() const override { return held_; }
    bool finish() override {
        if (frame_done_ || !started_) return true;
        return bad("invalid zstd body: the compressed data is truncated");
    }

private:
    ZSTD_DStream* stream_;
    bool started_ = false;
    bool frame_done_ = false;
    bool held_ = false;
};

}  // namespace

std::unique_ptr<Decoder> make_brotli_decoder() { return std::make_unique<BrotliDecoder>(); }
std::unique_ptr<Decoder> make_zstd_decoder() { return std::make_unique<ZstdDecoder>(); }
const char* accept_encoding() { return "gzip, deflate, br, zstd"; }

#else

std::unique_ptr<Decoder> make_brotli_decoder() { return nullptr; }
std::unique_ptr<Decoder> make_zstd_decoder() { return nullptr; }
const char* accept_encoding() { return "gzip, deflate"; }

#endif

}  // namespace beast_client::detail
