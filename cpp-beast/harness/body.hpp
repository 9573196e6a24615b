// Request bodies and the check of their answers (docs/raw-format.md, "Request bodies" and "Streamed bodies"):
// the pattern every upload is made of (Pattern), the chunks a streamed body is sent in (Chunks), and Answer,
// which takes a response body piece by piece, counts it and (for an upload) compares it with the /upload line
// or with the body sent, never keeping it. The counterpart of rust-reqwest/harness/src/body.rs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace harness {

/// Default --chunk-size, and its largest value (16 MiB).
constexpr std::size_t kDefaultChunkSize = 65536;
constexpr std::size_t kMaxChunkSize = std::size_t{16} << 20;

/// The pattern's bytes from any offset, as views of one buffer of `span + 25` bytes: an upload's body is never
/// made whole to stream it, hash it or compare an echo with it.
class Pattern {
public:
    /// Views of up to `span` bytes (at least 1).
    explicit Pattern(std::size_t span = 1);
    /// The pattern of a body of `length` bytes streamed in `chunk`-byte pieces: no larger than the body, no
    /// smaller than a chunk or (body allowing) the 64 KiB an echo is compared in.
    static Pattern for_body(std::uint64_t length, std::size_t chunk);

    std::size_t span() const { return span_; }
    /// Bytes [offset, offset + length) of the pattern; `length` at most the span.
    std::string_view slice(std::uint64_t offset, std::size_t length) const;
    /// Whether `data` is the pattern's bytes from `offset`.
    bool matches(std::uint64_t offset, std::string_view data) const;
    /// The /upload line of the pattern's first `length` bytes, hashed a span at a time.
    std::string upload_line(std::uint64_t length) const;

private:
    std::string buf_;
    std::size_t span_;
};

/// A streamed request body: pieces of `size` bytes (the last shorter), each a view cut when the client asks
/// for the next, of a Pattern or of a target's body read at start (no copy, nothing grows with the body). A
/// value: copying it (before the first piece) gives the body again from its start.
class Chunks {
public:
    Chunks() = default;
    /// The pattern's first `length` bytes (`pattern` must outlive the Chunks); `size` is cut to its span.
    static Chunks of_pattern(const Pattern& pattern, std::uint64_t length, std::size_t size);
    /// `body` (which must outlive the Chunks).
    static Chunks of_bytes(std::string_view body, std::size_t size);

    /// The next piece (never empty), or false at the end.
    bool next(std::string_view& piece);
    /// The whole body's length.
    std::uint64_t length() const { return length_; }

private:
    const Pattern* pattern_ = nullptr;
    std::string_view bytes_;
    std::size_t size_ = 1;
    std::uint64_t offset_ = 0;
    std::uint64_t length_ = 0;
};

/// A request's body as the client is given it: none (a GET), one buffer (--upload whole) or Chunks (--upload
/// stream, which the client takes as it sends them).
struct Outgoing {
    enum class Kind { none, whole, stream };
    Kind kind = Kind::none;
    std::string_view whole;  // Kind::whole
    Chunks chunks;           // Kind::stream
};

/// What an upload's 200 answer must be: the /upload line of the body, or the body itself (an echo).
struct Expected {
    std::string line;
    std::uint64_t body_length = 0;
    const Pattern* pattern = nullptr;  // the body's bytes, to compare an echo with at any offset
};

/// A response body, taken piece by piece as the client offers it: counted, and for an upload compared with
/// both of its right answers at once (which one applies is known only from the answer's length, at the end),
/// then dropped. Its first bytes are kept in place for a mismatch's reason: taking a piece allocates nothing.
class Answer {
public:
    /// Checked against `expect` (null: only counted, a target's answer); with --download stream taken in pieces
    /// of at most `piece` bytes (0: as the client reads them, --download whole).
    explicit Answer(const Expected* expect = nullptr, std::size_t piece = 0) : expect_(expect), piece_(piece) {}

    /// --download stream: the client reads the body at most this many bytes at a time; 0 with --download whole.
    std::size_t piece() const { return piece_; }
    /// The next bytes of the body (cut into pieces of at most piece() when streamed).
    void feed(std::string_view data);
    std::uint64_t bytes() const { return bytes_; }
    /// Whether a 200 answer is right: anything for a target, else the /upload line or the body echoed.
    bool right() const;
    /// The reason of an answer that is not right: `Error: upload digest mismatch: ...`.
    std::string mismatch() const;

private:
    void take(std::string_view data);
    static constexpr std::size_t kHead = 160;  // an /upload line is at most 75 bytes

    const Expected* expect_;
    std::size_t piece_;
    std::uint64_t bytes_ = 0;
    bool line_ok_ = true;  // the bytes so far are the start of the /upload line
    bool echo_ok_ = true;  // the bytes so far are the start of the body sent
    char head_[kHead] = {};
    std::size_t head_length_ = 0;
};

}  // namespace harness
