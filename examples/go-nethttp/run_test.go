package main

import (
	"bytes"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// a server with the endpoints the contract's faults need, counting its connections
func testServer(t *testing.T, tlsOn bool) (*httptest.Server, *atomic.Int64) {
	return testServerWith(t, tlsOn, false)
}

// testServerWith: h2 also offers HTTP/2 (ALPN over TLS, prior knowledge over plain TCP)
func testServerWith(t *testing.T, tlsOn, h2 bool) (*httptest.Server, *atomic.Int64) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "hello") })
	mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, _ = w.Write(UploadAnswer(body))
	})
	mux.HandleFunc("/wrong", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "3 nope") })
	// the body back (POST /echo); the body back with its last byte changed; /upload for a chunked body only
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, _ = w.Write(body)
	})
	mux.HandleFunc("/bad-echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if len(body) > 0 {
			body[len(body)-1]++
		}
		_, _ = w.Write(body)
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.ContentLength != -1 || len(r.TransferEncoding) != 1 || r.TransferEncoding[0] != "chunked" {
			w.WriteHeader(http.StatusLengthRequired)
			return
		}
		_, _ = w.Write(UploadAnswer(body))
	})
	// N bytes (GET /n/N), and 200 only for the body "hello body" (a target's)
	mux.HandleFunc("/n/", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/n/"))
		_, _ = w.Write(bytes.Repeat([]byte("x"), n))
	})
	mux.HandleFunc("/hello-body", func(w http.ResponseWriter, r *http.Request) {
		if body, _ := io.ReadAll(r.Body); string(body) != "hello body" {
			w.WriteHeader(http.StatusBadRequest)
		}
	})
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) { time.Sleep(500 * time.Millisecond) })
	// the headers at once, then a byte every 100 ms: no read waits long, the whole body takes 0.6 s
	mux.HandleFunc("/drip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "6")
		for range 6 {
			_, _ = io.WriteString(w, "*")
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
	})
	raw := func(path, answer string, reset bool) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			_, _ = io.WriteString(conn, answer)
			if reset {
				_ = conn.(*net.TCPConn).SetLinger(0)
			}
			_ = conn.Close()
		})
	}
	raw("/short", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc", false)
	raw("/reset", "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nabc", true)
	raw("/garbage", "garbage\r\n\r\n", false)
	s := httptest.NewUnstartedServer(mux)
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusted-CA test's handshake errors
	var conns atomic.Int64
	s.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			conns.Add(1)
		}
	}
	if h2 {
		s.EnableHTTP2 = true
		s.Config.Protocols = new(http.Protocols)
		s.Config.Protocols.SetHTTP1(true)
		s.Config.Protocols.SetHTTP2(true)
		s.Config.Protocols.SetUnencryptedHTTP2(true)
	}
	if tlsOn {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s, &conns
}

func options(t *testing.T, args ...string) *Options {
	t.Helper()
	o, err := ParseOptions(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func reasons(g *Group) []string {
	var out []string
	for _, w := range g.Workers {
		for _, f := range w.failures {
			out = append(out, f.Reason)
		}
	}
	return out
}

func TestKeepAliveIsOneConnectionPerWorkerAndNewIsOnePerRequest(t *testing.T) {
	s, conns := testServer(t, false)
	g := Run(options(t, "--url", s.URL+"/", "--workers", "3", "--requests", "20", "--warmup", "2"))
	for _, w := range g.Workers {
		if len(w.latencies) != 20 || w.failureCount != 0 || w.bytes != 100 {
			t.Errorf("worker: %d requests, %d failures, %d bytes", len(w.latencies), w.failureCount, w.bytes)
		}
	}
	if got := conns.Load(); got != 3 {
		t.Errorf("keep-alive: %d connections, want 3", got)
	}
	conns.Store(0)
	Run(options(t, "--url", s.URL+"/", "--workers", "2", "--requests", "5", "--connection", "new"))
	if got := conns.Load(); got != 10 { // the clients made before the gate connect only to warm up
		t.Errorf("new: %d connections, want 10", got)
	}
}

func TestUploadsAreCheckedAndFailuresClassified(t *testing.T) {
	s, _ := testServer(t, false)
	g := Run(options(t, "--url", s.URL+"/upload", "--workers", "1", "--requests", "3", "--method", "POST",
		"--body-size", "100000"))
	if r := reasons(g); len(r) != 0 {
		t.Errorf("uploads failed: %v", r)
	}
	for path, want := range map[string]string{
		"/wrong":   "Error: upload digest mismatch: got '3 nope', expected '3 ",
		"/status":  "status 500",
		"/short":   "ConnectionError: ",
		"/reset":   "ConnectionError: ",
		"/garbage": "ProtocolError: ",
		"/stall":   "TimeoutError: ",
		"/drip":    "TimeoutError: ", // --timeout bounds the whole request, not each read
	} {
		method := "GET"
		if path == "/wrong" {
			method = "PUT"
		}
		args := []string{"--url", s.URL + path, "--workers", "1", "--requests", "2", "--timeout", "0.25"}
		if method == "PUT" {
			args = append(args, "--method", "PUT", "--body-size", "3")
		}
		r := reasons(Run(options(t, args...)))
		if len(r) != 2 || !strings.HasPrefix(r[0], want) {
			t.Errorf("%s: %v, want 2 failures starting %q", path, r, want)
		}
	}
}

func TestAnUntrustedCertificateIsATLSError(t *testing.T) {
	s, _ := testServer(t, true)
	r := reasons(Run(options(t, "--url", s.URL+"/", "--workers", "1", "--requests", "1")))
	if len(r) != 1 || !strings.HasPrefix(r[0], "TLSError: ") {
		t.Errorf("%v", r)
	}
	g := Run(options(t, "--url", s.URL+"/", "--workers", "1", "--requests", "1", "--insecure"))
	if r := reasons(g); len(r) != 0 || g.Workers[0].tls == nil || g.Workers[0].tls.Version == "" {
		t.Errorf("--insecure: %v, tls %v", r, g.Workers[0].tls)
	}
}

func TestTheOpenLoopKeepsToItsScheduleAndStopsAtD(t *testing.T) {
	s, _ := testServer(t, false)
	g := Run(options(t, "--url", s.URL+"/", "--workers", "2", "--rate", "200", "--duration", "0.25"))
	for i, w := range g.Workers {
		// 0.25 s at 100/s each: I = 0 (or 5 ms), 10 ms, ..., below 250 ms: 25 requests, sent or missed
		if len(w.latencies)+w.missed != 25 || len(w.intended) != len(w.latencies) {
			t.Errorf("worker %d: %d sent, %d missed", i, len(w.latencies), w.missed)
		}
		for k, start := range w.starts {
			if start-g.T0 < w.intended[k] {
				t.Errorf("worker %d request %d started %d ns before its time", i, k, w.intended[k]-(start-g.T0))
			}
		}
	}
	if g.WallNs > int64(5*time.Second) { // it stops by itself at D (plus a request), not at a timeout
		t.Errorf("a 0.25 s schedule took %d ns", g.WallNs)
	}
	g = Run(options(t, "--url", s.URL+"/stall", "--workers", "1", "--rate", "100", "--requests", "3"))
	if w := g.Workers[0]; w.late != 2 || len(w.latencies) != 3 {
		t.Errorf("requests held up by a 500 ms stall: %d late of %d", w.late, len(w.latencies))
	}
}

func TestTheDocumentRecordsTheSeedOfAPoissonScheduleOnly(t *testing.T) {
	s, _ := testServer(t, false)
	for arrival, want := range map[string]any{"uniform": nil, "poisson": uint64(7)} {
		o := options(t, "--url", s.URL+"/", "--workers", "1", "--rate", "1000", "--requests", "2", "--arrival", arrival,
			"--seed", "7")
		doc, err := Document(o, Run(o))
		if err != nil {
			t.Fatal(err)
		}
		if got := doc["workload"].(map[string]any)["seed"]; got != want {
			t.Errorf("%s: seed %v, want %v", arrival, got, want)
		}
	}
}

func TestASharedClientServesEveryWorker(t *testing.T) {
	s, conns := testServer(t, false)
	g := Run(options(t, "--url", s.URL+"/", "--workers", "4", "--requests", "10", "--client-scope", "shared"))
	if r := reasons(g); len(r) != 0 {
		t.Fatalf("%v", r)
	}
	// its pool: at most one connection per worker, however the requests interleave
	if got := conns.Load(); got < 1 || got > 4 {
		t.Errorf("a shared client opened %d connections for 4 workers", got)
	}
}

func TestHTTP2IsAskedForAndRecorded(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		s, _ := testServerWith(t, tlsOn, true)
		args := []string{"--url", s.URL + "/", "--workers", "2", "--requests", "3", "--http", "2"}
		if tlsOn {
			args = append(args, "--insecure")
		}
		g := Run(options(t, args...))
		if r := reasons(g); len(r) != 0 || g.Workers[0].protoMajor != 2 {
			t.Errorf("tls %v: %v, HTTP/%d", tlsOn, r, g.Workers[0].protoMajor)
		}
		g = Run(options(t, args[:6]...)) // without --http 2: HTTP/1.1
		if tlsOn {
			g = Run(options(t, append(args[:6:6], "--insecure")...))
		}
		if g.Workers[0].protoMajor != 1 {
			t.Errorf("tls %v without --http 2: HTTP/%d", tlsOn, g.Workers[0].protoMajor)
		}
	}
	// a server without HTTP/2 over https: ALPN leaves the connection on HTTP/1.1
	s, _ := testServer(t, true)
	g := Run(options(t, "--url", s.URL+"/", "--workers", "1", "--requests", "2", "--http", "2", "--insecure"))
	if r := reasons(g); len(r) != 0 || g.Workers[0].protoMajor != 1 {
		t.Errorf("fallback: %v, HTTP/%d", r, g.Workers[0].protoMajor)
	}
}

func TestStreamedAndWholeBodiesAreCheckedAgainstTheLineOrTheEcho(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		s, _ := testServerWith(t, false, h2)
		for _, upload := range []string{"whole", "stream"} {
			for _, download := range []string{"whole", "stream"} {
				args := []string{"--workers", "2", "--requests", "3", "--warmup", "1", "--method", "POST",
					"--body-size", "100000", "--upload", upload, "--download", download, "--chunk-size", "1000"}
				if h2 {
					args = append(args, "--http", "2")
				}
				for _, path := range []string{"/upload", "/echo"} {
					g := Run(options(t, append(args, "--url", s.URL+path)...))
					want := int64(3 * 100_000)
					if path == "/upload" {
						want = 3 * int64(len(UploadAnswer(UploadBody(100_000))))
					}
					for _, w := range g.Workers {
						if w.failureCount != 0 || w.bytes != want {
							t.Errorf("h2 %v, %s %s %s: %v, %d bytes, want %d", h2, upload, download, path, reasons(g),
								w.bytes, want)
						}
					}
				}
				bad := Run(options(t, append(args, "--url", s.URL+"/bad-echo")...))
				if r := reasons(bad); len(r) != 6 || !strings.HasPrefix(r[0], "Error: upload digest mismatch: got 'abcd") {
					t.Errorf("h2 %v, %s %s, a wrong echo: %v", h2, upload, download, r)
				}
			}
		}
	}
	// over HTTP/1.1 a streamed body goes chunked, a whole one with its length
	s, _ := testServer(t, false)
	args := []string{"--url", s.URL + "/chunked", "--workers", "1", "--requests", "2", "--method", "PUT",
		"--body-size", "5000", "--chunk-size", "1000"}
	if r := reasons(Run(options(t, append(args, "--upload", "stream")...))); len(r) != 0 {
		t.Errorf("streamed: %v", r)
	}
	if r := reasons(Run(options(t, args...))); len(r) != 2 || r[0] != "status 411" {
		t.Errorf("whole: %v", r)
	}
}

func TestTargetsAreCycledAndTheirAnswersNotCompared(t *testing.T) {
	s, _ := testServer(t, false)
	path := targetsFile(t, "GET "+s.URL+"/n/1", "# the body is sent, its answer is not compared",
		"POST "+s.URL+"/hello-body @BODY", "PUT "+s.URL+"/wrong @BODY", "GET "+s.URL+"/n/10")
	for _, upload := range []string{"whole", "stream"} {
		for _, download := range []string{"whole", "stream"} {
			o := options(t, "--url", s.URL+"/n/1", "--targets", path, "--workers", "3", "--requests", "5",
				"--warmup", "2", "--upload", upload, "--download", download, "--chunk-size", "3")
			g := Run(o)
			// answers of 1, 0, 6 ("3 nope") and 10 bytes; worker w's timed request k to target (w + k) mod 4
			for w, want := range []int64{1 + 0 + 6 + 10 + 1, 0 + 6 + 10 + 1 + 0, 6 + 10 + 1 + 0 + 6} {
				if got := g.Workers[w]; got.failureCount != 0 || got.bytes != want {
					t.Errorf("%s %s, worker %d: %v, %d bytes, want %d", upload, download, w, reasons(g), got.bytes, want)
				}
			}
			doc, err := Document(o, g)
			if err != nil {
				t.Fatal(err)
			}
			wl := doc["workload"].(map[string]any)
			if wl["targets"] != path || wl["upload"] != upload || wl["download"] != download || wl["chunk_size"] != 3 {
				t.Errorf("workload %v", wl)
			}
		}
	}
	// a failing target is counted at its request's index
	path = targetsFile(t, "GET "+s.URL+"/n/1", "GET "+s.URL+"/status")
	g := Run(options(t, "--url", s.URL+"/n/1", "--targets", path, "--workers", "2", "--requests", "3", "--warmup", "1"))
	for w, want := range [][]int{{1}, {0, 2}} {
		var got []int
		for _, f := range g.Workers[w].failures {
			got = append(got, f.Index)
		}
		if !slices.Equal(got, want) || g.Workers[w].failures[0].Reason != "status 500" {
			t.Errorf("worker %d failed at %v, want %v", w, got, want)
		}
	}
	o := options(t, "--url", s.URL+"/")
	if doc, _ := Document(o, Run(o)); doc["workload"].(map[string]any)["targets"] != nil {
		t.Errorf("no --targets: %v", doc["workload"])
	}
}
