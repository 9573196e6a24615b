package main

// What a worker measured, and the raw document (docs/raw-format.md, "The document"): per-request arrays
// (--record samples) or HdrHistogram buckets at 3 significant digits made at the end from the same samples
// (--record histogram), so the timed loop does the same work in both modes.

import (
	"errors"
	"fmt"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

const (
	maxFailures       = 1000 // a worker lists at most this many failures (all of them are counted)
	significantDigits = 3
	// the histograms' range: 1 ns to a day (the runner refuses a bucket beyond a day)
	highestTrackableNs = 86_400 * 1_000_000_000
)

// Failure is one failed timed request.
type Failure struct {
	Index  int    `json:"index"`
	Reason string `json:"reason"`
	Status *int   `json:"status"`
}

// Worker holds one worker's measurements, timestamps in ns of now() until the document is made.
type Worker struct {
	starts, latencies, intended []int64
	failed                      map[int]bool
	failures                    []Failure
	failureCount                int
	bytes                       int64
	late, missed                int
	loopStart, loopEnd          int64
	unsent                      *unsent // the open loop stopped at D with these requests of its schedule left
	timeout                     float64 // --timeout, s: a request that took longer failed (Overtime)
	tls                         *TLSInfo
	protoMajor                  int        // the HTTP major version of the last successful response
	buf                         []byte     // --download stream: the chunk each answer is read into (nil: whole)
	phases                      *phaseSums // with --phases: the sums over the successful requests
}

// phaseSums is what a worker's document says of its phases: how many successful requests had them recorded,
// the sum of their latencies, and of each phase.
type phaseSums struct {
	count     int
	latencyNs int64
	sums      PhaseTimes
	later     []tracedLater // requests whose phases could not be told yet
}

type tracedLater struct {
	traced    *Traced
	latencyNs int64
}

// add adds a successful request's phases, or keeps it to add later (with late false) if its trace is not
// complete yet; a request whose phases cannot be told adds nothing.
func (s *phaseSums) add(t *Traced, latencyNs int64, late bool) {
	p, state := t.phases()
	switch {
	case state == phasesNotYet && !late:
		s.later = append(s.later, tracedLater{t, latencyNs})
	case state == phasesTold:
		s.count++
		s.latencyNs += latencyNs
		for i, d := range p {
			s.sums[i] += d
		}
	}
}

// addLater adds the requests kept by add, once the loop is over.
func (s *phaseSums) addLater() {
	for _, l := range s.later {
		s.add(l.traced, l.latencyNs, true)
	}
	s.later = nil
}

type unsent struct {
	first int64
	rest  Schedule
}

func newWorker(requests int, open bool, timeout float64) *Worker {
	w := &Worker{
		starts: make([]int64, 0, requests), latencies: make([]int64, 0, requests), failed: map[int]bool{},
		timeout: timeout,
	}
	if open {
		w.intended = make([]int64, 0, requests)
	}
	return w
}

// Record keeps request `index`: its start and end, and its failure if it failed: first err (the client's),
// then ending after --timeout (whatever it returned), then a status other than 200, then a wrong upload answer.
// A successful request adds its phases (nil: none recorded) to the worker's sums.
func (w *Worker) Record(index int, start, end int64, status int, nbytes int64, err error, phases *Traced) {
	w.starts = append(w.starts, start)
	w.latencies = append(w.latencies, end-start)
	w.bytes += nbytes
	var mismatch *DigestMismatch
	if (err == nil || errors.As(err, &mismatch)) && float64(end-start) > w.timeout*1e9 {
		err = &Overtime{TookNs: end - start, Timeout: w.timeout}
	}
	switch {
	case err != nil:
		w.fail(index, Describe(err), nil)
	case status != 200:
		s := status
		w.fail(index, fmt.Sprintf("status %d", status), &s)
	case w.phases != nil && phases != nil:
		w.phases.add(phases, end-start, false)
	}
}

// RecordOpen is Record for the open loop, with the request's intended start (ns after t0).
func (w *Worker) RecordOpen(index int, intended, start, end int64, status int, nbytes int64, err error,
	phases *Traced) {
	w.intended = append(w.intended, intended)
	w.Record(index, start, end, status, nbytes, err, phases)
}

func (w *Worker) fail(index int, reason string, status *int) {
	w.failureCount++
	w.failed[index] = true
	if len(w.failures) < maxFailures {
		w.failures = append(w.failures, Failure{index, reason, status})
	}
}

// CountMissed counts what --duration left unsent (outside the timed group).
func (w *Worker) CountMissed(durationNs int64) {
	if w.unsent != nil {
		w.missed = CountMissed(w.unsent.first, w.unsent.rest, durationNs)
		w.unsent = nil
	}
}

// Bucket is one histogram bucket: its lowest equivalent value and its count.
type Bucket [2]int64

// Histogram is the contract's histogram: every HdrHistogram bucket that holds a value, by increasing value.
type Histogram struct {
	SignificantDigits int      `json:"significant_digits"`
	Counts            []Bucket `json:"counts"`
}

// NewHistogram buckets values as HdrHistogram does at 3 significant digits with a unit of 1 ns.
func NewHistogram(values []int64) (*Histogram, error) {
	h := hdrhistogram.New(1, highestTrackableNs, significantDigits)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			return nil, fmt.Errorf("latency %d ns is beyond a day: %w", v, err)
		}
	}
	out := &Histogram{SignificantDigits: significantDigits, Counts: []Bucket{}}
	for _, bar := range h.Distribution() {
		if bar.Count > 0 {
			out.Counts = append(out.Counts, Bucket{bar.From, bar.Count})
		}
	}
	return out, nil
}

// WorkerJSON is a worker in the document.
type WorkerJSON struct {
	ElapsedNs    int64                 `json:"elapsed_ns"`
	Count        int                   `json:"count"`
	Late         int                   `json:"late"`
	Missed       int                   `json:"missed"`
	Bytes        int64                 `json:"bytes"`
	FailureCount int                   `json:"failure_count"`
	Failures     []Failure             `json:"failures"`
	StartNs      *[]int64              `json:"start_ns,omitempty"`
	LatenciesNs  *[]int64              `json:"latencies_ns,omitempty"`
	IntendedNs   *[]int64              `json:"intended_ns,omitempty"`
	Histograms   map[string]*Histogram `json:"histograms,omitempty"`
	Phases       *PhasesJSON           `json:"phases,omitempty"`
}

// PhasesJSON is a worker's phases in the document: over its `count` successful requests whose phases were
// recorded, the sum of their latencies and of each phase of client.phases.
type PhasesJSON struct {
	Count     int              `json:"count"`
	LatencyNs int64            `json:"latency_ns"`
	SumNs     map[string]int64 `json:"sum_ns"`
}

// JSON is the worker in the document, its timestamps made relative to t0; with phaseKeys (client.phases), its
// phases' sums.
func (w *Worker) JSON(t0 int64, record string, phaseKeys []string) (*WorkerJSON, error) {
	out := &WorkerJSON{
		ElapsedNs: w.loopEnd - w.loopStart, Count: len(w.latencies), Late: w.late, Missed: w.missed,
		Bytes: w.bytes, FailureCount: w.failureCount, Failures: w.failures,
	}
	if w.phases != nil && phaseKeys != nil {
		w.phases.addLater()
		out.Phases = &PhasesJSON{Count: w.phases.count, LatencyNs: w.phases.latencyNs, SumNs: map[string]int64{}}
		for i, name := range phaseNames {
			if slices.Contains(phaseKeys, name) {
				out.Phases.SumNs[name] = w.phases.sums[i]
			}
		}
	}
	if out.Failures == nil {
		out.Failures = []Failure{}
	}
	starts := make([]int64, len(w.starts))
	for i, s := range w.starts {
		starts[i] = max(0, s-t0)
	}
	if record == "samples" {
		out.StartNs, out.LatenciesNs = &starts, &w.latencies
		if w.intended != nil {
			out.IntendedNs = &w.intended
		}
		return out, nil
	}
	// histograms: of the successful requests only
	var service, corrected []int64
	for i, lat := range w.latencies {
		if w.failed[i] {
			continue
		}
		service = append(service, lat)
		if w.intended != nil {
			corrected = append(corrected, starts[i]+lat-w.intended[i])
		}
	}
	out.Histograms = map[string]*Histogram{}
	var err error
	if out.Histograms["service"], err = NewHistogram(service); err != nil {
		return nil, err
	}
	if w.intended != nil {
		if out.Histograms["corrected"], err = NewHistogram(corrected); err != nil {
			return nil, err
		}
	}
	return out, nil
}
