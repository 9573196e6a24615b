package main

// The open loop (docs/raw-format.md, "Open loop"): each worker's intended start times I(w, k), relative to t0,
// and a sleep that keeps to them.

import (
	"math"
	"runtime"
	"syscall"
	"time"
)

// Schedule yields I(w, 0), I(w, 1), ... in ns after t0.
type Schedule interface{ Next() int64 }

// uniform: I(w, k) = (w + k·W) / R, each worker every W/R s and the W phases spread evenly.
type uniform struct {
	worker, workers int
	rate            float64
	k               int
}

func (u *uniform) Next() int64 {
	t := math.Round(float64(u.worker+u.k*u.workers) / u.rate * 1e9)
	u.k++
	return int64(t)
}

// SplitMix64 (Steele, Lea and Flood 2014; Vigna's reference code) is the Poisson schedules' generator, the same
// in every harness of the contract, so that a seed gives the same schedule in every language.
type SplitMix64 struct{ state uint64 }

// Next is the generator's next 64-bit output.
func (g *SplitMix64) Next() uint64 {
	g.state += 0x9e3779b97f4a7c15
	z := g.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// poisson: I(w, k) = I(w, k-1) + round(-ln(u) * m) ns, m = W * 1e9 / R, u = ((x >> 11) + 1) / 2^53 from
// SplitMix64 seeded with S + w; summed in whole ns, so I(w, 0) is the first interval (not 0).
type poisson struct {
	rng    SplitMix64
	meanNs float64 // W * 1e9 / R
	t      int64   // ns
}

func (p *poisson) Next() int64 {
	u := float64(p.rng.Next()>>11+1) * 0x1p-53 // (0, 1], exact
	interval := math.Round(-math.Log(u) * p.meanNs)
	p.t += int64(interval)
	return p.t
}

// NewSchedule is worker w's schedule for the open loop's flags.
func NewSchedule(worker int, o *Options) Schedule {
	if o.Arrival == "poisson" {
		seed := o.Seed + uint64(worker) // wraps mod 2^64, as the contract says
		return &poisson{rng: SplitMix64{seed}, meanNs: float64(o.Workers) * 1e9 / o.Rate}
	}
	return &uniform{worker: worker, workers: o.Workers, rate: o.Rate}
}

// CountMissed counts the requests of a schedule not sent: the first one, which could not start before D
// (I = first), and every later one with I < D.
func CountMissed(first int64, rest Schedule, durationNs int64) int {
	if first >= durationNs {
		return 0
	}
	n := 1
	for rest.Next() < durationNs {
		n++
	}
	return n
}

// Go's timers wake up about 1 ms late on Linux here (the runtime's poller sleeps in whole milliseconds),
// which would be charged to every open-loop request; the last stretch of a wait is a nanosleep(2) instead, on
// a thread whose timer slack is 1 ns (Linux's default slack of 50 µs would be charged likewise).
const coarseSleepMargin = 2 * time.Millisecond

const prSetTimerslack = 29 // PR_SET_TIMERSLACK

// SleepUntil returns at or after the clock reads `due` (ns of now()).
func SleepUntil(due int64) {
	for {
		left := time.Duration(due - now())
		if left <= 0 {
			return
		}
		if left > coarseSleepMargin {
			time.Sleep(left - coarseSleepMargin)
			continue
		}
		runtime.LockOSThread()
		_, _, _ = syscall.Syscall(syscall.SYS_PRCTL, prSetTimerslack, 1, 0)
		ts := syscall.NsecToTimespec(int64(left))
		_ = syscall.Nanosleep(&ts, nil) // EINTR: the loop sleeps again
		runtime.UnlockOSThread()
	}
}
