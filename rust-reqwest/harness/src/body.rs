//! Request bodies and the check of their answers (docs/raw-format.md, "Request bodies" and "Streamed
//! bodies"): the pattern every upload is made of, the chunks a streamed body is sent in ([`Chunks`]), and
//! [`Answer`], which takes a response body chunk by chunk, counts it and (for an upload) compares it with
//! the `/upload` line or with the body sent, never keeping it.

use bytes::Bytes;
use sha2::{Digest, Sha256};

use crate::record::Outcome;

/// Default `--chunk-size`.
pub const DEFAULT_CHUNK_SIZE: usize = 65536;
/// Largest `--chunk-size` (16 MiB).
pub const MAX_CHUNK_SIZE: usize = 16 << 20;
/// The pattern's period: byte i is `b'a' + i % 26`.
const PERIOD: usize = 26;
/// The first bytes of an answer kept to show in a mismatch's reason (an `/upload` line is at most 75).
const HEAD: usize = 160;
/// The least span a [`Pattern`] compares in: a small `--chunk-size` must not make an echo's check crawl.
const COMPARE_SPAN: usize = 64 << 10;

/// The request body of `--body-size n`: byte i is `b'a' + (i mod 26)`.
pub fn body_pattern(n: usize) -> Bytes {
    (0..n).map(|i| b'a' + (i % PERIOD) as u8).collect::<Vec<u8>>().into()
}

/// What the server's `/upload` answers for `body`: `"<length> <sha256 hex>"`.
pub fn upload_line(body: &[u8]) -> Bytes {
    line_of(body.len() as u64, Sha256::digest(body).as_slice())
}

fn line_of(len: u64, digest: &[u8]) -> Bytes {
    use std::fmt::Write;
    let mut line = format!("{len} ");
    for b in digest {
        let _ = write!(line, "{b:02x}");
    }
    line.into()
}

/// The pattern's bytes from any offset, as views of one buffer of `span + 25` bytes: the body of an upload
/// is never made whole to stream it, hash it or compare an echo with it.
#[derive(Clone, Debug)]
pub struct Pattern {
    buf: Bytes,
    span: usize,
}

impl Pattern {
    /// Views of up to `span` bytes (at least 1).
    pub fn new(span: usize) -> Pattern {
        let span = span.max(1);
        Pattern { buf: body_pattern(span + PERIOD - 1), span }
    }

    /// The pattern for a body of `len` bytes streamed in `chunk`-byte pieces: a buffer no larger than the
    /// body, and no smaller than a chunk or (body allowing) the span an echo is compared in.
    pub fn for_body(len: u64, chunk: usize) -> Pattern {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        Pattern::new(len.min(chunk.max(COMPARE_SPAN)))
    }

    /// The longest view.
    pub fn span(&self) -> usize {
        self.span
    }

    /// Bytes `offset..offset + len` of the pattern (`len` at most the span), sharing the buffer.
    pub fn slice(&self, offset: u64, len: usize) -> Bytes {
        let start = (offset % PERIOD as u64) as usize;
        self.buf.slice(start..start + len)
    }

    /// `data` is the pattern's bytes from `offset`.
    pub fn matches(&self, mut offset: u64, mut data: &[u8]) -> bool {
        while !data.is_empty() {
            let n = data.len().min(self.span);
            let start = (offset % PERIOD as u64) as usize;
            if data[..n] != self.buf[start..start + n] {
                return false;
            }
            data = &data[n..];
            offset += n as u64;
        }
        true
    }

    /// The `/upload` line of the pattern's first `len` bytes, hashed a span at a time.
    pub fn upload_line(&self, len: u64) -> Bytes {
        let mut hash = Sha256::new();
        let mut at = 0;
        while at < len {
            let n = (len - at).min(self.span as u64) as usize;
            let start = (at % PERIOD as u64) as usize;
            hash.update(&self.buf[start..start + n]);
            at += n as u64;
        }
        line_of(len, hash.finalize().as_slice())
    }
}

/// Where a streamed body's chunks are cut from.
#[derive(Clone, Debug)]
enum Source {
    Pattern(Pattern),
    Bytes(Bytes),
}

/// A streamed request body: chunks of `size` bytes (the last shorter), each cut when the client asks for
/// the next, as a view of the pattern's buffer or of a target's body read at start (no copy: what the
/// client is given is what an application streaming from memory gives it, and nothing grows with the
/// body).
#[derive(Clone, Debug)]
pub struct Chunks {
    source: Source,
    size: usize,
    offset: u64,
    len: u64,
}

impl Chunks {
    /// The pattern's first `len` bytes in `size`-byte chunks (`size` at most the pattern's span).
    pub fn pattern(pattern: &Pattern, len: u64, size: usize) -> Chunks {
        let size = size.clamp(1, pattern.span());
        Chunks { source: Source::Pattern(pattern.clone()), size, offset: 0, len }
    }

    /// `body` in `size`-byte chunks.
    pub fn bytes(body: &Bytes, size: usize) -> Chunks {
        Chunks { source: Source::Bytes(body.clone()), size: size.max(1), offset: 0, len: body.len() as u64 }
    }

    /// The whole body's length.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Iterator for Chunks {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        let left = self.len - self.offset;
        if left == 0 {
            return None;
        }
        let n = left.min(self.size as u64) as usize;
        let chunk = match &self.source {
            Source::Pattern(p) => p.slice(self.offset, n),
            Source::Bytes(b) => b.slice(self.offset as usize..self.offset as usize + n),
        };
        self.offset += n as u64;
        Some(chunk)
    }
}

/// A request's body as the client is given it.
#[derive(Debug)]
pub enum Outgoing {
    /// No body (a GET).
    None,
    /// `--upload whole`: one buffer (shared by every request: a clone is a reference count).
    Whole(Bytes),
    /// `--upload stream`: chunks made as the client takes them.
    Stream(Chunks),
}

/// What an upload's 200 answer must be: the `/upload` line of the body, or the body itself (an echo).
#[derive(Clone, Debug)]
pub struct Expected {
    pub line: Bytes,
    /// The body's length (an echo has it).
    pub body_len: u64,
    /// The body's bytes, to compare an echo with at any offset.
    pub pattern: Pattern,
}

impl Expected {
    /// The expected answers of the pattern's first `len` bytes (`pattern` spans them, or a chunk).
    pub fn of_pattern(pattern: &Pattern, len: u64) -> Expected {
        Expected { line: pattern.upload_line(len), body_len: len, pattern: pattern.clone() }
    }
}

/// A response body, taken chunk by chunk as the client offers it: counted, and for an upload compared with
/// both of its right answers at once (which one applies is known only from the answer's length, at the end),
/// then dropped. Its first bytes are kept in place, for a mismatch's reason: taking a chunk allocates nothing.
pub struct Answer<'a> {
    expect: Option<&'a Expected>,
    /// `--download stream`: the chunks are taken at most C bytes at a time.
    piece: Option<usize>,
    bytes: u64,
    /// The bytes so far are the start of the `/upload` line.
    line_ok: bool,
    /// The bytes so far are the start of the body sent.
    echo_ok: bool,
    head: [u8; HEAD],
    head_len: usize,
}

impl<'a> Answer<'a> {
    /// An answer checked against `expect` (`None`: only counted), taken in pieces of at most `piece` bytes
    /// (`--download stream`) or as the client's chunks come.
    pub fn new(expect: Option<&'a Expected>, piece: Option<usize>) -> Answer<'a> {
        Answer { expect, piece, bytes: 0, line_ok: true, echo_ok: true, head: [0; HEAD], head_len: 0 }
    }

    /// The body bytes taken so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The next chunk of the body.
    pub fn feed(&mut self, chunk: &[u8]) {
        match self.piece {
            // reqwest's chunks are what hyper read; a longer one is taken as views of at most C
            Some(c) if chunk.len() > c => chunk.chunks(c).for_each(|piece| self.take(piece)),
            _ => self.take(chunk),
        }
    }

    fn take(&mut self, data: &[u8]) {
        if let Some(e) = self.expect {
            let at = self.bytes;
            let keep = data.len().min(HEAD - self.head_len);
            self.head[self.head_len..self.head_len + keep].copy_from_slice(&data[..keep]);
            self.head_len += keep;
            let end = at + data.len() as u64;
            if self.line_ok {
                self.line_ok = end <= e.line.len() as u64 && e.line[at as usize..end as usize] == *data;
            }
            if self.echo_ok {
                self.echo_ok = end <= e.body_len && e.pattern.matches(at, data);
            }
        }
        self.bytes += data.len() as u64;
    }

    /// The outcome of the answer, once its body has been read: `status` 200 and (for an upload) the
    /// `/upload` line or the body sent back, whichever has its length.
    pub fn outcome(&self, status: u16) -> Outcome {
        let bytes = self.bytes;
        if status != 200 {
            return Outcome::Status { status, bytes };
        }
        let Some(e) = self.expect else { return Outcome::Ok { bytes } };
        let line = bytes == e.line.len() as u64 && self.line_ok;
        let echo = bytes == e.body_len && self.echo_ok;
        if line || echo {
            return Outcome::Ok { bytes };
        }
        let got = Bytes::copy_from_slice(&self.head[..self.head_len]);
        Outcome::Mismatch { expected: e.line.clone(), body_len: e.body_len, got, bytes }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_at_any_offset() {
        let whole = body_pattern(200);
        assert_eq!(&whole[..30], b"abcdefghijklmnopqrstuvwxyzabcd");
        let p = Pattern::new(40);
        for offset in [0u64, 1, 25, 26, 27, 51, 130, 160] {
            for len in [0, 1, 7, 26, 40] {
                let o = offset as usize;
                assert_eq!(p.slice(offset, len), whole.slice(o..o + len), "{offset} {len}");
                assert!(p.matches(offset, &whole[o..o + len]));
            }
        }
        // longer than the span: compared span by span
        assert!(p.matches(3, &whole[3..200]) && !p.matches(4, &whole[3..200]));
        let mut wrong = whole[..100].to_vec();
        wrong[77] = b'!';
        assert!(!p.matches(0, &wrong));
        // offsets far past 4 GiB
        let far = (1u64 << 40) + 5;
        let want: Vec<u8> = (far..far + 3).map(|i| b'a' + (i % 26) as u8).collect();
        assert_eq!(&p.slice(far, 3)[..], &want[..]);
        assert!(p.matches(far, &want) && !p.matches(far + 1, &want));
    }

    #[test]
    fn the_upload_line_is_hashed_a_span_at_a_time() {
        assert_eq!(&upload_line(b"abc")[..], b"3 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        for (span, len) in [(1, 0), (1, 3), (7, 100), (26, 26), (64, 1000), (1000, 999)] {
            assert_eq!(Pattern::new(span).upload_line(len), upload_line(&body_pattern(len as usize)), "{span} {len}");
        }
        // a span no larger than the body, no smaller than a chunk or (body allowing) 64 KiB
        assert_eq!(Pattern::for_body(3, 65536).span(), 3);
        assert_eq!(Pattern::for_body(1 << 30, 16).span(), COMPARE_SPAN);
        assert_eq!(Pattern::for_body(1 << 30, 1 << 20).span(), 1 << 20);
        assert_eq!(Pattern::for_body(0, 16).span(), 1);
    }

    #[test]
    fn chunks_are_cut_as_they_are_taken() {
        let whole = body_pattern(100);
        let p = Pattern::for_body(100, 30);
        let chunks: Vec<Bytes> = Chunks::pattern(&p, 100, 30).collect();
        assert_eq!(chunks.iter().map(Bytes::len).collect::<Vec<_>>(), [30, 30, 30, 10]);
        assert_eq!(chunks.concat(), whole.to_vec());
        assert_eq!(Chunks::pattern(&p, 0, 30).count(), 0);
        // a chunk size larger than the pattern's span is cut to it (the runner's C is always at most it)
        assert!(Chunks::pattern(&Pattern::new(8), 20, 30).all(|c| c.len() <= 8));
        let body = Bytes::from_static(b"seven b");
        let chunks: Vec<Bytes> = Chunks::bytes(&body, 3).collect();
        assert_eq!(chunks, [&b"sev"[..], b"en ", b"b"]);
        assert_eq!(Chunks::bytes(&body, 100).collect::<Vec<_>>(), [body]);
        assert!(Chunks::bytes(&Bytes::new(), 3).is_empty());
    }

    fn fed(expect: Option<&Expected>, piece: Option<usize>, chunks: &[&[u8]], status: u16) -> Outcome {
        let mut a = Answer::new(expect, piece);
        chunks.iter().for_each(|c| a.feed(c));
        a.outcome(status)
    }

    #[test]
    fn an_upload_answer_is_the_line_or_the_body_echoed() {
        let body = body_pattern(100);
        let e = Expected::of_pattern(&Pattern::for_body(100, 7), 100);
        let line = upload_line(&body);
        assert_eq!(e.line, line);
        // the line, in any chunks, and the echo, in any chunks
        for piece in [None, Some(1), Some(7)] {
            let (a, b) = line.split_at(10);
            assert!(matches!(fed(Some(&e), piece, &[a, b], 200), Outcome::Ok { bytes: 68 }), "{piece:?}");
            let (a, b) = body.split_at(33);
            assert!(matches!(fed(Some(&e), piece, &[a, b], 200), Outcome::Ok { bytes: 100 }), "{piece:?}");
        }
        // one byte wrong, short, long, empty: mismatches, with the first bytes to show
        let mut wrong = body.to_vec();
        wrong[99] = b'?';
        for answer in [&wrong[..], &body[..99], &[&body[..], b"a"].concat(), b"", &line[..67]] {
            match fed(Some(&e), None, &[answer], 200) {
                Outcome::Mismatch { got, bytes, body_len: 100, .. } => {
                    assert_eq!((&got[..], bytes), (&answer[..answer.len().min(HEAD)], answer.len() as u64))
                }
                other => panic!("{other:?}"),
            }
        }
        // another status is that status, its body not compared
        assert!(matches!(fed(Some(&e), None, &[b"nope"], 404), Outcome::Status { status: 404, bytes: 4 }));
        // a target's answer is only counted
        assert!(matches!(fed(None, Some(3), &[b"anything", b"at all"], 200), Outcome::Ok { bytes: 14 }));
        assert!(matches!(fed(None, None, &[b"x"], 500), Outcome::Status { status: 500, bytes: 1 }));
    }

    #[test]
    fn a_body_as_long_as_its_line_may_be_either() {
        // 67 bytes: "67 " and 64 hex digits, the body's own length
        let e = Expected::of_pattern(&Pattern::new(67), 67);
        assert_eq!(e.line.len(), 67);
        assert!(matches!(fed(Some(&e), None, &[&e.line], 200), Outcome::Ok { .. }));
        assert!(matches!(fed(Some(&e), None, &[&body_pattern(67)], 200), Outcome::Ok { .. }));
        let mut wrong = body_pattern(67).to_vec();
        wrong[0] = b'6';
        assert!(matches!(fed(Some(&e), None, &[&wrong], 200), Outcome::Mismatch { .. }));
    }

    #[test]
    fn a_streamed_download_takes_pieces_of_at_most_c() {
        let e = Expected::of_pattern(&Pattern::new(26), 1000);
        let body = body_pattern(1000);
        let mut a = Answer::new(Some(&e), Some(64));
        a.feed(&body[..900]);
        a.feed(&body[900..]);
        assert_eq!(a.bytes(), 1000);
        assert!(matches!(a.outcome(200), Outcome::Ok { bytes: 1000 }));
    }
}
