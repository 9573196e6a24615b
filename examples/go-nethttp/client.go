package main

// A worker's client: its own http.Client and Transport, so its own keep-alive connection, and one request
// with its body sent (whole or streamed) and the whole answer read (into one buffer or in chunks).

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"time"
)

// Client is one worker's net/http client.
type Client struct {
	http *http.Client
	o    *Options
}

// NewClient makes a worker's client, which keeps at most one connection, or with `shared` the one client of
// every worker, whose pool keeps up to W. No proxy from the environment, no transparent gzip (the bytes
// counted are the server's body).
func NewClient(o *Options, shared bool) *Client {
	timeout := time.Duration(o.Timeout * float64(time.Second))
	conns, perHostLimit := 1, 1
	if shared {
		conns, perHostLimit = o.Workers, o.Workers // the pool opens up to one per worker
	}
	transport := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     o.TLS.Clone(),
		TLSHandshakeTimeout: timeout,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     perHostLimit,
		DisableCompression:  true,
		Protocols:           protocols(o),
	}
	// Timeout bounds the whole request: connect, send, headers and reading the body
	return &Client{http: &http.Client{Transport: transport, Timeout: timeout}, o: o}
}

// protocols: HTTP/1.1; with --http 2, HTTP/2 offered by ALPN next to HTTP/1.1 over https (the server picks),
// and HTTP/2 with prior knowledge over http.
func protocols(o *Options) *http.Protocols {
	p := new(http.Protocols)
	switch {
	case o.HTTP != "2":
		p.SetHTTP1(true)
	case strings.HasPrefix(strings.ToLower(o.URL), "http://"):
		p.SetUnencryptedHTTP2(true)
	default:
		p.SetHTTP1(true)
		p.SetHTTP2(true)
	}
	return p
}

// Close closes the client's idle connection.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Result is what one request did.
type Result struct {
	Status     int
	Bytes      int64
	TLS        *tls.ConnectionState
	ProtoMajor int
	Phases     *Traced // with --phases, the request's trace (nil otherwise)
}

// Do does one request of the workload, t, and reads the whole answer: into one buffer, or with buf (--download
// stream) a chunk of at most len(buf) bytes at a time. The workload's upload has its 200 answer checked (a
// *DigestMismatch when it is neither the /upload line nor the body echoed); a target's answer is not compared.
func (c *Client) Do(t *Target, buf []byte) (Result, error) {
	var body io.Reader
	streamed := t.Method != http.MethodGet && c.o.Upload == "stream"
	switch {
	case streamed:
		body = c.streamedBody(t)
	case t.Method != http.MethodGet:
		body = bytes.NewReader(t.Body)
	}
	req, err := http.NewRequest(t.Method, t.URL, body)
	if err != nil {
		return Result{}, err
	}
	var trace *requestTrace
	if c.o.Phases {
		trace = new(requestTrace)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace.clientTrace()))
	}
	if streamed {
		req.ContentLength = -1 // unknown: net/http sends it chunked over HTTP/1.1
		// as for a whole body, net/http may resend a request that never reached the server on a reused
		// connection found closed: it needs the body from its start again
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(c.streamedBody(t)), nil }
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Result{}, err
	}
	defer resp.Body.Close()
	var check *answerCheck
	if t.Check && resp.StatusCode == 200 { // another status is the failure, its body not compared
		check = newAnswerCheck(c.o.Expected, c.o.Pattern, t.Size)
	}
	n, err := readBody(resp.Body, buf, check)
	res := Result{Status: resp.StatusCode, Bytes: n, TLS: resp.TLS, ProtoMajor: resp.ProtoMajor}
	if trace != nil && err == nil {
		res.Phases = &Traced{trace, now()}
	}
	if err == nil && check != nil {
		err = check.Err()
	}
	return res, err
}

// streamedBody is t's body in chunks of --chunk-size: a target's from its buffer, the workload's made from the
// pattern.
func (c *Client) streamedBody(t *Target) io.Reader {
	var src source = c.o.Pattern
	if t.Body != nil {
		src = inMemory(t.Body)
	}
	return newStreamedBody(src, t.Size, c.o.ChunkSize)
}
