package main

// A worker's client: its own http.Client and Transport, so its own keep-alive connection, and one request
// with the whole body read.

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
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
}

// Get does one GET and reads the whole body.
func (c *Client) Get(url string) (Result, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return Result{}, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Result{}, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return Result{resp.StatusCode, n, resp.TLS, resp.ProtoMajor}, err
}

// Upload does one POST/PUT of the contract's body and checks the answer: a 200 with another body than
// o.Expected is a *DigestMismatch.
func (c *Client) Upload(url string) (Result, error) {
	req, err := http.NewRequest(c.o.Method, url, bytes.NewReader(c.o.Body))
	if err != nil {
		return Result{}, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Result{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	res := Result{resp.StatusCode, int64(len(body)), resp.TLS, resp.ProtoMajor}
	if err == nil && resp.StatusCode == 200 && !bytes.Equal(body, c.o.Expected) {
		err = &DigestMismatch{Got: body, Expected: c.o.Expected}
	}
	return res, err
}

// Do is the request of the workload: a GET, or an upload with --method POST/PUT.
func (c *Client) Do(url string) (Result, error) {
	if c.o.Method == http.MethodGet {
		return c.Get(url)
	}
	return c.Upload(url)
}
