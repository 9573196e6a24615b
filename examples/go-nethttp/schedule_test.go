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
