package main

import (
	"errors"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"testing"
)

// the contract's rule: v below 2,048 is its own bucket, else ⌊v / 2ᵇ⌋ · 2ᵇ with b = ⌊log₂ v⌋ − 10
func lowestEquivalent(v int64) int64 {
	shift := bits.Len64(uint64(v)) - 11
	if shift <= 0 {
		return v
	}
	return v >> shift << shift
}

func TestHistogramBucketsAreTheContracts(t *testing.T) {
	values := []int64{0, 1, 2047, 2048, 2049, 4095, 4096, 1_000_999, 1_000_999, 86_400_000_000_000}
	for b := 0; b < 46; b++ {
		values = append(values, 1<<b, 1<<b+1, 1<<b-1)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		values = append(values, rng.Int64N(1<<uint(rng.IntN(46)+1)))
	}
	want := map[int64]int64{}
	for _, v := range values {
		want[lowestEquivalent(v)]++
	}
	h, err := NewHistogram(values)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]int64{}
	last := int64(-1)
	for _, b := range h.Counts {
		if b[0] <= last || b[1] < 1 {
			t.Fatalf("buckets not by increasing value with counts >= 1 at %v", b)
		}
		last = b[0]
		got[b[0]] = b[1]
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("buckets differ from the contract's rule")
	}
	if lowestEquivalent(2049) != 2048 || lowestEquivalent(1_000_999) != 1_000_960 {
		t.Error("the spec's examples")
	}
	if _, err := NewHistogram([]int64{86_400_000_000_000 * 2}); err == nil {
		t.Error("a latency beyond a day should be an error")
	}
}

func TestHistogramsAreOfTheSuccessfulRequests(t *testing.T) {
	w := newWorker(3, true, 30)
	w.RecordOpen(0, 0, 100, 1100, 200, 10, nil, nil)
	w.RecordOpen(1, 500, 1100, 5100, 500, 10, nil, nil)
	w.RecordOpen(2, 1000, 5100, 6100, 200, 10, nil, nil)
	doc, err := w.JSON(100, "histogram", nil)
	if err != nil {
		t.Fatal(err)
	}
	if doc.FailureCount != 1 || doc.Count != 3 || doc.StartNs != nil {
		t.Errorf("%+v", doc)
	}
	// service: 1000 and 1000; corrected (from the intended start): 1000 and 6000 - 1000 = 5000
	if got := doc.Histograms["service"].Counts; !reflect.DeepEqual(got, []Bucket{{1000, 2}}) {
		t.Errorf("service %v", got)
	}
	if got := doc.Histograms["corrected"].Counts; !reflect.DeepEqual(got, []Bucket{{1000, 1}, {5000, 1}}) {
		t.Errorf("corrected %v", got)
	}
}

func TestARequestPastTheTimeoutIsATimeoutWhateverItReturned(t *testing.T) {
	w := newWorker(5, false, 0.001)              // --timeout 1 ms bounds the whole request
	w.Record(0, 0, 1_000_000, 200, 10, nil, nil) // exactly 1 ms: in time
	w.Record(1, 0, 2_000_000, 200, 10, nil, nil) // past it: its 200 does not count
	w.Record(2, 0, 2_000_000, 500, 10, nil, nil) // past it: a TimeoutError, not a status
	w.Record(3, 0, 2_000_000, 200, 6, &DigestMismatch{Got: []byte("3 nope"), Expected: []byte("x")}, nil)
	w.Record(4, 0, 2_000_000, 0, 0, errors.New("connection refused"), nil) // the client's own error comes first
	if w.failureCount != 4 || w.bytes != 36 {
		t.Errorf("failures %d, bytes %d", w.failureCount, w.bytes)
	}
	for _, f := range w.failures[:3] {
		if f.Reason != "TimeoutError: the request took 0.002 s, past --timeout 0.001 s" || f.Status != nil {
			t.Errorf("%+v", f)
		}
	}
	if got := w.failures[3].Reason; got != "ConnectionError: connection refused" {
		t.Errorf("the client's error: %q", got)
	}
}
