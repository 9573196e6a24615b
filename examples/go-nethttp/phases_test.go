package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	headersAfterAsked = 60 * time.Millisecond // the server waits this long before the headers (wait)
	bodyAfterAsked    = 40 * time.Millisecond // and this long between the headers and the body (receive)
)

// the delays /slow made, as its sleeps ended (later than asked on a busy machine): headers, body
type served struct {
	mu     sync.Mutex
	delays [][2]time.Duration
}

// means are the mean delays of the last n answers of /slow
func (s *served) means(t *testing.T, n int) (headers, body time.Duration) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.delays) < n {
		t.Fatalf("the server answered /slow %d times, want %d", len(s.delays), n)
	}
	for _, d := range s.delays[len(s.delays)-n:] {
		headers += d[0]
		body += d[1]
	}
	return headers / time.Duration(n), body / time.Duration(n)
}

// a server that waits headersAfterAsked before the headers and bodyAfterAsked between the headers and the
// body, at /slow (it keeps the delays it made); / answers at once, /status with a 500
func delayServer(t *testing.T, tlsOn bool) (*httptest.Server, *served) {
	var slow served
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		time.Sleep(headersAfterAsked)
		w.Header().Set("Content-Length", "5")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		headers := time.Now()
		time.Sleep(bodyAfterAsked)
		slow.mu.Lock()
		slow.delays = append(slow.delays, [2]time.Duration{headers.Sub(start), time.Since(headers)})
		slow.mu.Unlock()
		_, _ = io.WriteString(w, "hello")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "hello") })
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	s := httptest.NewUnstartedServer(mux)
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	if tlsOn {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s, &slow
}

// the document as the runner reads it: encoded and decoded again
func runDocument(t *testing.T, args ...string) map[string]any {
	t.Helper()
	o := options(t, args...)
	doc, err := Document(o, Run(o))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(doc); err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func docWorkers(doc map[string]any) []map[string]any {
	var out []map[string]any
	for _, w := range doc["workers"].([]any) {
		out = append(out, w.(map[string]any))
	}
	return out
}

// the phases' keys of the document (nil without), and each worker's phases
func docPhases(t *testing.T, doc map[string]any) ([]string, []map[string]any) {
	t.Helper()
	var keys []string
	if list, ok := doc["client"].(map[string]any)["phases"]; ok {
		for _, k := range list.([]any) {
			keys = append(keys, k.(string))
		}
	}
	var phases []map[string]any
	for _, w := range docWorkers(doc) {
		if p, ok := w["phases"]; ok {
			phases = append(phases, p.(map[string]any))
		}
	}
	return keys, phases
}

// sum is worker phases' sum_ns of key (failing the test when a key of client.phases is missing)
func sum(t *testing.T, p map[string]any, key string) float64 {
	t.Helper()
	v, ok := p["sum_ns"].(map[string]any)[key]
	if !ok {
		t.Fatalf("sum_ns has no %q: %v", key, p)
	}
	return v.(float64)
}

func within(got float64, want time.Duration) bool {
	return math.Abs(got-float64(want)) <= 0.1*float64(want)+float64(time.Millisecond)
}

func TestWithoutPhasesTheDocumentHasNoPhasesKeys(t *testing.T) {
	s, _ := delayServer(t, false)
	for _, record := range []string{"samples", "histogram"} {
		doc := runDocument(t, "--url", s.URL+"/", "--workers", "2", "--requests", "3", "--record", record)
		if doc["schema"] != "clientbench.raw/4" {
			t.Errorf("schema %v", doc["schema"])
		}
		if keys, phases := docPhases(t, doc); keys != nil || phases != nil {
			t.Errorf("%s without --phases: client.phases %v, workers' phases %v", record, keys, phases)
		}
	}
}

func TestWaitAndReceiveAreTheServersDelays(t *testing.T) {
	s, slow := delayServer(t, false)
	for _, record := range []string{"samples", "histogram"} {
		doc := runDocument(t, "--url", s.URL+"/slow", "--workers", "2", "--requests", "4", "--warmup", "1",
			"--record", record, "--phases")
		// the timed requests come after every warm-up one; the sleeps end at least when asked
		headersAfter, bodyAfter := slow.means(t, 2*4)
		if headersAfter < headersAfterAsked || bodyAfter < bodyAfterAsked {
			t.Fatalf("the server waited %v and %v", headersAfter, bodyAfter)
		}
		keys, phases := docPhases(t, doc)
		// 127.0.0.1 is not resolved: no dns
		if want := []string{"connect", "tls", "send", "wait", "receive"}; !slices.Equal(keys, want) {
			t.Fatalf("client.phases %v, want %v", keys, want)
		}
		if len(phases) != 2 {
			t.Fatalf("%d workers with phases, want 2", len(phases))
		}
		for i, p := range phases {
			count := p["count"].(float64)
			if count != 4 || len(p["sum_ns"].(map[string]any)) != len(keys) {
				t.Fatalf("%s, worker %d: %v", record, i, p)
			}
			if wait := sum(t, p, "wait") / count; !within(wait, headersAfter) {
				t.Errorf("%s, worker %d: wait %.2f ms, want %v", record, i, wait/1e6, headersAfter)
			}
			if receive := sum(t, p, "receive") / count; !within(receive, bodyAfter) {
				t.Errorf("%s, worker %d: receive %.2f ms, want %v", record, i, receive/1e6, bodyAfter)
			}
			// a kept-alive connection, made in the warm-up: no connect, no TLS over http
			if c, tl := sum(t, p, "connect"), sum(t, p, "tls"); c != 0 || tl != 0 {
				t.Errorf("%s, worker %d: connect %v, tls %v on a reused connection", record, i, c, tl)
			}
			var total float64
			for _, k := range keys {
				total += sum(t, p, k)
			}
			latency := p["latency_ns"].(float64)
			if sum(t, p, "send") <= 0 || total > latency {
				t.Errorf("%s, worker %d: phases %v, their total %v over latency_ns %v", record, i, p, total, latency)
			}
			if record == "samples" { // latency_ns is the sum of the (successful) latencies
				var lat float64
				for _, v := range docWorkers(doc)[i]["latencies_ns"].([]any) {
					lat += v.(float64)
				}
				if lat != latency {
					t.Errorf("worker %d: latency_ns %v, the samples' sum %v", i, latency, lat)
				}
			}
		}
	}
}

func TestConnectAndTLSAreOfNewConnectionsOnly(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		s, _ := delayServer(t, tlsOn)
		args := []string{"--url", s.URL + "/", "--workers", "2", "--requests", "5", "--warmup", "1", "--phases"}
		if tlsOn {
			args = append(args, "--insecure")
		}
		_, reused := docPhases(t, runDocument(t, args...))
		_, fresh := docPhases(t, runDocument(t, append(args, "--connection", "new")...))
		for i := range 2 {
			if fresh[i]["count"].(float64) != 5 || sum(t, fresh[i], "connect") <= 0 {
				t.Errorf("tls %v, new connections, worker %d: %v", tlsOn, i, fresh[i])
			}
			if tl := sum(t, fresh[i], "tls"); (tl > 0) != tlsOn {
				t.Errorf("tls %v, new connections, worker %d: tls %v", tlsOn, i, tl)
			}
			if c, tl := sum(t, reused[i], "connect"), sum(t, reused[i], "tls"); c != 0 || tl != 0 {
				t.Errorf("tls %v, kept alive, worker %d: connect %v, tls %v", tlsOn, i, c, tl)
			}
		}
	}
}

func TestAHostNameAddsDNSAndFailuresAddNothing(t *testing.T) {
	s, _ := delayServer(t, false)
	byName := strings.Replace(s.URL, "127.0.0.1", "localhost", 1)
	doc := runDocument(t, "--url", byName+"/", "--workers", "1", "--requests", "3", "--connection", "new", "--phases")
	keys, phases := docPhases(t, doc)
	if keys[0] != "dns" || phases[0]["count"].(float64) != 3 || sum(t, phases[0], "dns") <= 0 {
		t.Errorf("by name: %v, %v", keys, phases)
	}
	keys, phases = docPhases(t, runDocument(t, "--url", s.URL+"/status", "--workers", "1", "--requests", "3", "--phases"))
	if len(keys) != 5 || phases[0]["count"].(float64) != 0 || phases[0]["latency_ns"].(float64) != 0 ||
		sum(t, phases[0], "wait") != 0 {
		t.Errorf("3 failures: %v", phases)
	}
}

func TestHTTP2RequestsHaveTheirPhases(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		s, _ := testServerWith(t, tlsOn, true)
		args := []string{"--url", s.URL + "/", "--workers", "2", "--requests", "3", "--warmup", "1", "--http", "2", "--phases"}
		if tlsOn {
			args = append(args, "--insecure")
		}
		for _, connection := range []string{"keep-alive", "new"} {
			doc := runDocument(t, append(args, "--connection", connection)...)
			_, phases := docPhases(t, doc)
			if doc["client"].(map[string]any)["protocol"] != "HTTP/2" {
				t.Fatalf("tls %v: %v", tlsOn, doc["client"])
			}
			for i, p := range phases {
				if p["count"].(float64) != 3 || sum(t, p, "wait") <= 0 || sum(t, p, "receive") < 0 ||
					(sum(t, p, "connect") > 0) != (connection == "new") || (sum(t, p, "tls") > 0) != (tlsOn && connection == "new") {
					t.Errorf("tls %v, %s, worker %d: %v", tlsOn, connection, i, p)
				}
			}
		}
	}
}
