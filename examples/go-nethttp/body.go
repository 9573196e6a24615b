package main

// Request and response bodies (docs/raw-format.md, "Request bodies" and "Streamed bodies"): the contract's
// pattern, a streamed upload made chunk by chunk as net/http takes it, a response read whole or in chunks, and
// the check of an upload's answer (the /upload line, or the body itself echoed back), made as it is read.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strconv"
)

const alphabet = 26 // the pattern's period: byte i is 'a' + (i mod 26)

// Pattern holds one chunk's worth of the contract's body pattern, and 25 bytes more: the bytes at any offset
// of the body, up to a chunk of them, are a slice of it. One is shared, read-only, by every worker, so a
// streamed body of any length costs one chunk of memory.
type Pattern struct {
	window []byte
	chunk  int
}

// NewPattern is the pattern for chunks of at most `chunk` bytes.
func NewPattern(chunk int) *Pattern {
	return &Pattern{window: UploadBody(chunk + alphabet - 1), chunk: chunk}
}

// At is the body's bytes [off, off+n), n at most a chunk: a slice of the shared window, not to be written to.
func (p *Pattern) At(off int64, n int) []byte {
	start := int(off % alphabet)
	return p.window[start : start+n]
}

// Matches says whether b is the body's bytes from offset off on, compared a chunk at a time.
func (p *Pattern) Matches(off int64, b []byte) bool {
	for len(b) > 0 {
		n := min(len(b), p.chunk)
		if !bytes.Equal(b[:n], p.At(off, n)) {
			return false
		}
		b, off = b[n:], off+int64(n)
	}
	return true
}

// Answer is what the server's /upload answers to a body of `size` pattern bytes, hashed a chunk at a time.
func (p *Pattern) Answer(size int64) []byte {
	h := sha256.New()
	for off := int64(0); off < size; {
		n := int(min(size-off, int64(p.chunk)))
		h.Write(p.At(off, n))
		off += int64(n)
	}
	return []byte(strconv.FormatInt(size, 10) + " " + hex.EncodeToString(h.Sum(nil)))
}

// UploadAnswer is what the server's /upload answers to body: "<length> <sha256 hex>".
func UploadAnswer(body []byte) []byte {
	sum := sha256.Sum256(body)
	return []byte(strconv.Itoa(len(body)) + " " + hex.EncodeToString(sum[:]))
}

// source gives a body's bytes [off, off+n), n at most a chunk: the pattern's, or a target's body in memory.
type source interface {
	At(off int64, n int) []byte
}

type inMemory []byte

func (b inMemory) At(off int64, n int) []byte { return b[off : off+int64(n)] }

// streamedBody is a --upload stream body: chunks of at most `chunk` bytes taken from src as the client asks for
// them. net/http copies a body of unknown length with io.Copy, which calls WriteTo: each chunk is then one
// write (one HTTP/1.1 chunk); a client that reads instead (HTTP/2) gets at most a chunk per Read.
type streamedBody struct {
	src       source
	off, size int64
	chunk     int
}

func newStreamedBody(src source, size int64, chunk int) *streamedBody {
	return &streamedBody{src: src, size: size, chunk: chunk}
}

func (b *streamedBody) Read(p []byte) (int, error) {
	if b.off >= b.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), int64(b.chunk), b.size-b.off))
	copy(p, b.src.At(b.off, n))
	b.off += int64(n)
	return n, nil
}

func (b *streamedBody) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for b.off < b.size {
		n := int(min(int64(b.chunk), b.size-b.off))
		m, err := w.Write(b.src.At(b.off, n))
		b.off += int64(m)
		total += int64(m)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// answerCheck checks an upload's answer as it is read, without keeping it: it is correct when it is the
// /upload line of the body sent, or the body itself (POST /echo answers it back). Both are followed along the
// way; the answer's length at its end picks which one it had to be.
type answerCheck struct {
	line           []byte   // what /upload answers to the body
	pattern        *Pattern // the body sent, for an echo
	size           int64    // the body's length
	n              int64    // the answer's bytes so far
	lineOK, echoOK bool     // the answer so far is a prefix of the line, of the body
	head           []byte   // the answer's first bytes, for the failure's reason
}

const shownBytes = 101 // DigestMismatch shows 100 bytes of the answer and "..." when there are more

func newAnswerCheck(line []byte, pattern *Pattern, size int64) *answerCheck {
	return &answerCheck{line: line, pattern: pattern, size: size, lineOK: true, echoOK: true}
}

// Feed takes the answer's next bytes.
func (c *answerCheck) Feed(b []byte) {
	end := c.n + int64(len(b))
	c.lineOK = c.lineOK && end <= int64(len(c.line)) && bytes.Equal(b, c.line[c.n:end])
	c.echoOK = c.echoOK && end <= c.size && c.pattern.Matches(c.n, b)
	if len(c.head) < shownBytes {
		c.head = append(c.head, b[:min(len(b), shownBytes-len(c.head))]...)
	}
	c.n = end
}

// Err is nil when the whole answer was the line or the echo, a *DigestMismatch otherwise.
func (c *answerCheck) Err() error {
	if (c.lineOK && c.n == int64(len(c.line))) || (c.echoOK && c.n == c.size) {
		return nil
	}
	return &DigestMismatch{Got: c.head, Expected: c.line, Size: c.size}
}

// readBody reads a response body to its end: whole (io.ReadAll: one buffer) or, with a buffer (--download
// stream), a chunk of at most len(buf) bytes at a time, each counted, checked when check is given, and dropped.
// It returns the bytes read, also when reading failed.
func readBody(body io.Reader, buf []byte, check *answerCheck) (int64, error) {
	if buf == nil {
		all, err := io.ReadAll(body)
		if check != nil && err == nil {
			check.Feed(all)
		}
		return int64(len(all)), err
	}
	var total int64
	for {
		n, err := body.Read(buf)
		if n > 0 {
			total += int64(n)
			if check != nil {
				check.Feed(buf[:n])
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}
