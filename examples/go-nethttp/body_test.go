package main

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
)

func TestThePatternAtAnyOffsetIsTheBodys(t *testing.T) {
	body := UploadBody(1000)
	for _, chunk := range []int{1, 7, 26, 27, 100} {
		p := NewPattern(chunk)
		for off := int64(0); off+int64(chunk) <= 1000; off += 13 {
			for _, n := range []int{0, 1, chunk} {
				if got := p.At(off, n); !bytes.Equal(got, body[off:off+int64(n)]) {
					t.Fatalf("chunk %d: At(%d, %d) = %q", chunk, off, n, got)
				}
			}
		}
		if !p.Matches(3, body[3:1000]) || p.Matches(3, body[4:1000]) || p.Matches(0, []byte("abd")) {
			t.Errorf("chunk %d: Matches compares a chunk at a time from the offset", chunk)
		}
		for _, size := range []int{0, 1, 3, 26, 99, 1000} {
			if got, want := p.Answer(int64(size)), UploadAnswer(body[:size]); !bytes.Equal(got, want) {
				t.Errorf("chunk %d: Answer(%d) = %s, want %s", chunk, size, got, want)
			}
		}
	}
	if got := string(NewPattern(3).Answer(3)); got != "3 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("the contract's example: %s", got)
	}
}

// records each Write: what net/http's chunked writer gets from a streamed body
type writes struct{ sizes []int }

func (w *writes) Write(p []byte) (int, error) { w.sizes = append(w.sizes, len(p)); return len(p), nil }

func TestAStreamedBodyIsChunksOfCMadeAsTaken(t *testing.T) {
	// io.Copy (net/http's) takes it by WriteTo: one write per chunk of C, the last one shorter
	var w writes
	n, err := io.Copy(&w, io.NopCloser(newStreamedBody(NewPattern(1000), 2500, 1000)))
	if err != nil || n != 2500 || len(w.sizes) != 3 || w.sizes[0] != 1000 || w.sizes[1] != 1000 || w.sizes[2] != 500 {
		t.Errorf("%d bytes in writes of %v, %v", n, w.sizes, err)
	}
	// read (HTTP/2's way): at most a chunk per Read, and the body is the pattern, or a target's buffer
	got, err := io.ReadAll(newStreamedBody(NewPattern(7), 1000, 7))
	if err != nil || !bytes.Equal(got, UploadBody(1000)) {
		t.Errorf("read: %v", err)
	}
	if err := iotest.TestReader(newStreamedBody(inMemory("hello body"), 10, 3), []byte("hello body")); err != nil {
		t.Error(err)
	}
	small := make([]byte, 100)
	if n, _ := newStreamedBody(NewPattern(7), 1000, 7).Read(small); n != 7 {
		t.Errorf("a Read gave %d bytes, more than a chunk", n)
	}
	if n, err := newStreamedBody(NewPattern(7), 0, 7).Read(small); n != 0 || err != io.EOF {
		t.Errorf("an empty body: %d, %v", n, err)
	}
}

func TestEveryWorkerCyclesThroughTheTargetsFromItsOwnIndex(t *testing.T) {
	targets := []*Target{{URL: "0"}, {URL: "1"}, {URL: "2"}}
	for _, c := range []struct {
		w    int
		want string
	}{{0, "01201"}, {1, "12012"}, {2, "20120"}, {4, "12012"}} {
		var got strings.Builder
		for k := range 5 {
			got.WriteString(Pick(targets, c.w, k).URL)
		}
		if got.String() != c.want {
			t.Errorf("worker %d: %s, want %s", c.w, got.String(), c.want)
		}
	}
}

// feeds an answer to a check in random pieces, as reads return it
func checkPieces(answer []byte, line []byte, size int64, seed uint64) error {
	c := newAnswerCheck(line, NewPattern(10), size)
	rng := rand.New(rand.NewPCG(seed, 1))
	for len(answer) > 0 {
		n := min(len(answer), rng.IntN(10)+1) // readBody feeds at most its buffer, a chunk
		c.Feed(answer[:n])
		answer = answer[n:]
	}
	return c.Err()
}

func TestAnUploadsAnswerIsTheUploadLineOrTheEcho(t *testing.T) {
	body := UploadBody(1000)
	line := UploadAnswer(body)
	wrongEcho := bytes.Clone(body)
	wrongEcho[999] = 'z'
	for seed := range uint64(5) {
		for _, c := range []struct {
			name   string
			answer []byte
			ok     bool
		}{
			{"the line", line, true},
			{"the echo", body, true},
			{"a line's prefix", line[:10], false},
			{"the line and more", append(bytes.Clone(line), 'x'), false},
			{"a short echo", body[:999], false},
			{"an echo with a wrong last byte", wrongEcho, false},
			{"another line", UploadAnswer(body[:999]), false},
			{"nothing", nil, false},
		} {
			err := checkPieces(c.answer, line, 1000, seed)
			var mismatch *DigestMismatch
			if c.ok != (err == nil) || (!c.ok && !errors.As(err, &mismatch)) {
				t.Errorf("%s: %v", c.name, err)
			}
		}
	}
	// 67 bytes and their line are both 67 bytes long: the answer may be either
	b67 := UploadBody(67)
	l67 := UploadAnswer(b67)
	if len(l67) != 67 || checkPieces(l67, l67, 67, 1) != nil || checkPieces(b67, l67, 67, 1) != nil {
		t.Errorf("a 67-byte body: its line %q or itself", l67)
	}
	// the reason shows the answer's first 100 bytes, never more
	err := checkPieces(body, line, 999, 1)
	if want := "upload digest mismatch: got '" + string(body[:100]) + "...', expected '" + string(line) +
		"' or the 999 bytes sent"; err == nil || err.Error() != want {
		t.Errorf("reason %v", err)
	}
}

func TestABodyIsReadWholeOrInChunksOfAtMostC(t *testing.T) {
	body := UploadBody(1000)
	line := UploadAnswer(body)
	for _, buf := range [][]byte{nil, make([]byte, 64)} {
		c := newAnswerCheck(line, NewPattern(64), 1000)
		n, err := readBody(bytes.NewReader(body), buf, c)
		if n != 1000 || err != nil || c.Err() != nil {
			t.Errorf("buffer %d: %d bytes, %v, %v", len(buf), n, err, c.Err())
		}
	}
	// a body that breaks off: the bytes read so far are counted, and the error kept
	n, err := readBody(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(io.ErrUnexpectedEOF)), make([]byte, 2), nil)
	if n != 3 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%d bytes, %v", n, err)
	}
}
