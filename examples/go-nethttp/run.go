package main

// The workers (docs/raw-format.md, "The workload"): W goroutines, each with its own client; a ready gate, so
// t0 is taken once every worker has made its client and done its warm-up; then the timed loop, closed (N
// sequential requests) or open (on the worker's schedule). Worker w's request k goes to target (w + k) mod T,
// k counted from 0 in the warm-up and again in the timed loop.

import (
	"crypto/tls"
	"math"
	"sync"
	"time"
)

var clockBase = time.Now()

// now reads the monotonic clock, in ns.
func now() int64 { return int64(time.Since(clockBase)) }

// TLSInfo is the TLS version and cipher suite of worker 0's connection.
type TLSInfo struct {
	Version string `json:"version"`
	Cipher  string `json:"cipher"`
}

// the names OpenSSL gives the versions, as the other drivers report them
var tlsVersions = map[uint16]string{
	tls.VersionTLS10: "TLSv1", tls.VersionTLS11: "TLSv1.1", tls.VersionTLS12: "TLSv1.2", tls.VersionTLS13: "TLSv1.3",
}

func tlsInfo(cs *tls.ConnectionState) *TLSInfo {
	if cs == nil {
		return nil
	}
	v, ok := tlsVersions[cs.Version]
	if !ok {
		v = tls.VersionName(cs.Version)
	}
	return &TLSInfo{Version: v, Cipher: tls.CipherSuiteName(cs.CipherSuite)}
}

// Group is what the workers measured: wall time and CPU time of the timed group, from t0.
type Group struct {
	Workers []*Worker
	T0      int64
	WallNs  int64
	CPUNs   int64
}

// Run runs the workload and returns what every worker measured.
func Run(o *Options) *Group {
	workers := make([]*Worker, o.Workers)
	for i := range workers {
		workers[i] = newWorker(o.Requests, o.OpenLoop(), o.Timeout)
		if o.Phases {
			workers[i].phases = new(phaseSums)
		}
		if o.Download == "stream" {
			workers[i].buf = make([]byte, o.ChunkSize) // each streamed answer is read into it, a chunk at a time
		}
	}
	var ready, done sync.WaitGroup
	ready.Add(o.Workers)
	done.Add(o.Workers)
	gate := make(chan struct{})
	var t0 int64
	var shared *Client
	if o.Scope == "shared" {
		shared = NewClient(o, true)
	}
	for i, w := range workers {
		go func() {
			defer done.Done()
			client := shared
			if client == nil {
				client = NewClient(o, false)
			}
			for k := range o.Warmup {
				_, _ = client.Do(Pick(o.Targets, i, k), w.buf) // warm-up failures are not measured
			}
			ready.Done()
			<-gate
			if o.OpenLoop() {
				client = openLoop(w, i, client, o, t0)
			} else {
				client = closedLoop(w, i, client, o)
			}
			if shared == nil {
				client.Close()
			}
		}()
	}
	ready.Wait()
	t0, cpu0 := now(), cpuNs()
	close(gate) // the workers read t0 after this
	done.Wait()
	if shared != nil {
		shared.Close()
	}
	g := &Group{Workers: workers, T0: t0, WallNs: now() - t0, CPUNs: cpuNs() - cpu0}
	if o.Duration > 0 {
		for _, w := range workers {
			w.CountMissed(durationNs(o))
		}
	}
	return g
}

// durationNs is D in whole ns, rounded as the intended times are (halves away from zero): a request is due when
// I(w, k) < D in ns (docs/raw-format.md, "Open loop").
func durationNs(o *Options) int64 { return int64(math.Round(o.Duration * 1e9)) }

// send does worker `index`'s request k: with --connection new on a new client (and connection), made in the
// timed section.
func send(w *Worker, index, k int, client *Client, o *Options) (*Client, Result, error) {
	if o.Connection == "new" {
		client.Close()
		client = NewClient(o, false)
	}
	res, err := client.Do(Pick(o.Targets, index, k), w.buf)
	if w.tls == nil && res.TLS != nil {
		w.tls = tlsInfo(res.TLS)
	}
	if err == nil && res.Status == 200 {
		w.protoMajor = res.ProtoMajor
	}
	return client, res, err
}

func closedLoop(w *Worker, index int, client *Client, o *Options) *Client {
	w.loopStart = now()
	for k := range o.Requests {
		start := now()
		var (
			res Result
			err error
		)
		client, res, err = send(w, index, k, client, o)
		w.Record(k, start, now(), res.Status, res.Bytes, err, res.Phases)
	}
	w.loopEnd = now()
	return client
}

// openLoop: request k starts at t0 + I(w, k), or as soon as request k-1 has returned when that is later (a
// late start, still charged from I(w, k)). With --requests it sends N requests; with --duration D it stops at
// the first request of the schedule (I < D) that cannot start before D: it and the rest are missed.
func openLoop(w *Worker, index int, client *Client, o *Options, t0 int64) *Client {
	schedule := NewSchedule(index, o)
	d := durationNs(o)
	t := now()
	w.loopStart = t
	for k := 0; o.Duration > 0 || k < o.Requests; k++ {
		dueRel := schedule.Next()
		if o.Duration > 0 && dueRel >= d {
			break
		}
		due := t0 + dueRel
		late := false
		if t < due {
			SleepUntil(due)
			t = now()
		} else {
			late = k > 0 && t > due
		}
		if o.Duration > 0 && t-t0 >= d {
			w.unsent = &unsent{dueRel, schedule}
			break
		}
		if late {
			w.late++
		}
		var (
			res Result
			err error
		)
		client, res, err = send(w, index, k, client, o)
		end := now()
		w.RecordOpen(k, dueRel, t, end, res.Status, res.Bytes, err, res.Phases)
		t = end
	}
	w.loopEnd = now()
	return client
}
