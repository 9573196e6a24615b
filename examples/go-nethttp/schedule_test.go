package main

import (
	"math"
	"testing"
)

func TestUniformPhasesSpreadEvenly(t *testing.T) {
	o := &Options{Workers: 4, Rate: 100, Arrival: "uniform"}
	// worker 1 of 4 at 100/s: every 40 ms, from 10 ms
	s := NewSchedule(1, o)
	for k, want := range []int64{10e6, 50e6, 90e6, 130e6} {
		if got := s.Next(); got != want {
			t.Errorf("I(1, %d) = %d, want %d", k, got, want)
		}
	}
}

func TestPoissonIsSeededAndHasTheMean(t *testing.T) {
	o := &Options{Workers: 2, Rate: 1000, Arrival: "poisson", Seed: 7}
	a, b, other := NewSchedule(0, o), NewSchedule(0, o), NewSchedule(1, o)
	var last int64
	same := true
	for range 20_000 {
		x := a.Next()
		if x != b.Next() {
			t.Fatal("the same seed gives another schedule")
		}
		same = same && x == other.Next()
		last = x
	}
	if same {
		t.Error("worker 1 has worker 0's schedule")
	}
	// 20,000 intervals of mean W/R = 2 ms: 40 s, within 3%
	if math.Abs(float64(last)/40e9-1) > 0.03 {
		t.Errorf("mean interval %g ms", float64(last)/20_000/1e6)
	}
}

func TestPoissonIsTheContractsSchedule(t *testing.T) {
	// docs/raw-format.md's example: --seed 1, W = 4, R = 2000 (a mean interval of 2 ms)
	o := &Options{Workers: 4, Rate: 2000, Arrival: "poisson", Seed: 1}
	for w, want := range [][]int64{
		{1_136_339, 1_722_984, 1_781_836, 3_404_080, 5_026_749},
		{1_051_237, 1_628_870, 2_665_114, 3_199_777, 5_531_920},
	} {
		s := NewSchedule(w, o)
		for k, v := range want {
			if got := s.Next(); got != v {
				t.Errorf("I(%d, %d) = %d, want %d", w, k, got, v)
			}
		}
	}
	// SplitMix64 itself (Vigna's splitmix64.c from state 1), and S + w wraps mod 2^64
	g := SplitMix64{1}
	if a, b := g.Next(), g.Next(); a != 0x910a2dec89025cc1 || b != 0xbeeb8da1658eec67 {
		t.Errorf("splitmix64: %#x %#x", a, b)
	}
	wrapped := NewSchedule(1, &Options{Workers: 4, Rate: 2000, Arrival: "poisson", Seed: 1<<64 - 1})
	zero := NewSchedule(0, &Options{Workers: 4, Rate: 2000, Arrival: "poisson", Seed: 0})
	for range 100 {
		if wrapped.Next() != zero.Next() {
			t.Fatal("worker 1 of seed 2^64 - 1 is not worker 0 of seed 0")
		}
	}
}

func TestMissedCountsTheScheduleLeftBeforeD(t *testing.T) {
	o := &Options{Workers: 1, Rate: 10, Arrival: "uniform"} // 0, 100 ms, 200 ms, ...
	s := NewSchedule(0, o)
	s.Next()
	s.Next()
	first := s.Next() // 200 ms could not start: it and 300..900 ms are missed
	if got := CountMissed(first, s, 1e9); got != 8 {
		t.Errorf("missed %d, want 8", got)
	}
	if got := CountMissed(1e9, s, 1e9); got != 0 {
		t.Errorf("missed %d at D", got)
	}
}

func TestSleepUntilDoesNotWakeEarly(t *testing.T) {
	for _, d := range []int64{0, 100e3, 1e6, 3e6} {
		due := now() + d
		SleepUntil(due)
		if now() < due {
			t.Errorf("woke before a %d ns wait ended", d)
		}
	}
}
