package main

// Failure reasons (docs/raw-format.md, "Failure reasons"): "status <code>" for a response other than 200,
// otherwise "<Class>: <message>" with the classes every harness shares and net/http's own error text.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
)

// DigestMismatch is an upload answered with 200 but neither with the length and digest of the body sent nor
// with the body itself (an echo). Got is the answer's start (101 bytes are enough to show it).
type DigestMismatch struct {
	Got, Expected []byte
	Size          int64 // the body sent, which an echo answers back
}

func (e *DigestMismatch) Error() string {
	got := e.Got
	suffix := ""
	if len(got) > 100 {
		got, suffix = got[:100], "..."
	}
	return "upload digest mismatch: got " + quote(string(got)+suffix) + ", expected " + quote(string(e.Expected)) +
		" or the " + strconv.FormatInt(e.Size, 10) + " bytes sent"
}

// Overtime is a request that ended after --timeout, which bounds the whole request: a TimeoutError, whatever it
// returned (net/http's Client.Timeout stops a request at T; the harness's own time may read a little later).
type Overtime struct {
	TookNs  int64
	Timeout float64 // seconds
}

func (e *Overtime) Error() string {
	return fmt.Sprintf("the request took %.3f s, past --timeout %g s", float64(e.TookNs)/1e9, e.Timeout)
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

// FailureClass maps an error of net/http (or of reading a body) onto the contract's classes.
func FailureClass(err error) string {
	var (
		mismatch  *DigestMismatch
		netErr    net.Error
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
		record    tls.RecordHeaderError
		alert     tls.AlertError
		urlErr    *url.Error
		dnsErr    *net.DNSError
		opErr     *net.OpError
	)
	var overtime *Overtime
	text := err.Error()
	switch {
	case errors.As(err, &mismatch):
		return "Error"
	case errors.As(err, &overtime):
		return "TimeoutError"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "TimeoutError"
	case errors.Is(err, context.Canceled):
		return "Cancelled"
	case errors.As(err, &verify), errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid),
		errors.As(err, &record), errors.As(err, &alert), strings.Contains(text, "tls: "):
		return "TLSError"
	case errors.As(err, &urlErr) && urlErr.Op == "parse",
		strings.Contains(text, "unsupported protocol scheme"), strings.Contains(text, "no Host in request URL"):
		return "InvalidUrl"
	case strings.Contains(text, "invalid method"):
		return "InvalidRequest"
	// net/http's parse errors are plain errors: malformed status lines, headers and chunk framing
	case strings.Contains(text, "malformed"), strings.Contains(text, "chunk"),
		strings.Contains(text, "invalid header"), strings.Contains(text, "invalid Content-Length"),
		strings.Contains(text, "server gave HTTP response"), strings.Contains(text, "too many transfer encodings"):
		return "ProtocolError"
	// refused, reset, closed by the peer (io.EOF before the response, io.ErrUnexpectedEOF: a short body)
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.As(err, &dnsErr), errors.As(err, &opErr), strings.Contains(text, "connection"):
		return "ConnectionError"
	}
	return "Error"
}

// Describe is a failure's reason: "<Class>: <message>" (the message on one line).
func Describe(err error) string {
	text := strings.Join(strings.Fields(err.Error()), " ")
	return FailureClass(err) + ": " + text
}
