// Request bodies, their chunks and the check of their answers (body.hpp).
#include "body.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

constexpr std::size_t kPeriod = 26;              // byte i is 'a' + i % 26
constexpr std::size_t kCompareSpan = 64 * 1024;  // the least span an echo is compared in
std::size_t phase(std::uint64_t offset) { return static_cast<std::size_t>(offset % kPeriod); }

// The start of a response body for a failure reason: printable ASCII, at most 100 bytes.
std::string excerpt(std::string_view body, std::uint64_t length) {
    std::string out;
    for (const char c : body.substr(0, 100)) out += c >= 0x20 && c < 0x7f ? c : '?';
    if (length > out.size()) out += "... (" + std::to_string(length) + " bytes)";
    return out;
}

}  // namespace

harness::Pattern::Pattern(std::size_t span) : span_(std::max<std::size_t>(span, 1)) {
    buf_.resize(span_ + kPeriod - 1);
    for (std::size_t i = 0; i < buf_.size(); ++i) buf_[i] = static_cast<char>('a' + i % kPeriod);
}

harness::Pattern harness::Pattern::for_body(std::uint64_t length, std::size_t chunk) {
    return Pattern(static_cast<std::size_t>(std::min<std::uint64_t>(length, std::max(chunk, kCompareSpan))));
}

std::string_view harness::Pattern::slice(std::uint64_t offset, std::size_t length) const {
    return std::string_view(buf_).substr(phase(offset), std::min(length, span_));
}

bool harness::Pattern::matches(std::uint64_t offset, std::string_view data) const {
    while (!data.empty()) {
        const std::size_t n = std::min(data.size(), span_);
        if (std::memcmp(data.data(), buf_.data() + phase(offset), n) != 0) return false;
        data.remove_prefix(n);
        offset += n;
    }
    return true;
}

std::string harness::Pattern::upload_line(std::uint64_t length) const {
    const std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_length = 0;
    bool ok = ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1;
    for (std::uint64_t at = 0; ok && at < length;) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(length - at, span_));
        ok = EVP_DigestUpdate(ctx.get(), buf_.data() + phase(at), n) == 1;
        at += n;
    }
    if (!ok || EVP_DigestFinal_ex(ctx.get(), md, &md_length) != 1)
        throw std::runtime_error("OpenSSL cannot compute a SHA-256 digest");
    static const char* hex = "0123456789abcdef";
    std::string line = std::to_string(length) + ' ';
    for (unsigned int i = 0; i < md_length; ++i) {
        line += hex[md[i] >> 4];
        line += hex[md[i] & 0xf];
    }
    return line;
}

harness::Chunks harness::Chunks::of_pattern(const Pattern& pattern, std::uint64_t length, std::size_t size) {
    Chunks c;
    c.pattern_ = &pattern;
    c.size_ = std::clamp<std::size_t>(size, 1, pattern.span());
    c.length_ = length;
    return c;
}

harness::Chunks harness::Chunks::of_bytes(std::string_view body, std::size_t size) {
    Chunks c;
    c.bytes_ = body;
    c.size_ = std::max<std::size_t>(size, 1);
    c.length_ = body.size();
    return c;
}

bool harness::Chunks::next(std::string_view& piece) {
    if (offset_ >= length_) return false;
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(length_ - offset_, size_));
    piece = pattern_ ? pattern_->slice(offset_, n) : bytes_.substr(static_cast<std::size_t>(offset_), n);
    offset_ += n;
    return true;
}

void harness::Answer::feed(std::string_view data) {
    if (piece_ == 0 || data.size() <= piece_) {
        take(data);
        return;
    }
    // a client that read more than C at once: taken as views of at most C
    for (std::size_t at = 0; at < data.size(); at += piece_) take(data.substr(at, piece_));
}

void harness::Answer::take(std::string_view data) {
    if (expect_) {
        const std::size_t keep = std::min(data.size(), kHead - head_length_);
        std::memcpy(head_ + head_length_, data.data(), keep);
        head_length_ += keep;
        const std::uint64_t end = bytes_ + data.size();
        if (line_ok_)
            line_ok_ = end <= expect_->line.size() &&
                       std::string_view(expect_->line).substr(static_cast<std::size_t>(bytes_), data.size()) == data;
        if (echo_ok_) echo_ok_ = end <= expect_->body_length && expect_->pattern->matches(bytes_, data);
    }
    bytes_ += data.size();
}

bool harness::Answer::right() const {
    if (!expect_) return true;
    return (bytes_ == expect_->line.size() && line_ok_) || (bytes_ == expect_->body_length && echo_ok_);
}

std::string harness::Answer::mismatch() const {
    const std::uint64_t sent = expect_ ? expect_->body_length : 0;
    return "Error: upload digest mismatch: expected '" + (expect_ ? expect_->line : std::string()) + "' (or the " +
           std::to_string(sent) + " bytes sent, echoed), got '" +
           excerpt(std::string_view(head_, head_length_), bytes_) + "'";
}
