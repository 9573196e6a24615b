package main

// The open loop (docs/raw-format.md, "Open loop"): each worker's intended start times I(w, k), relative to t0,
// and a sleep that keeps to them.

import (
	"math"
	"math/rand/v2"
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

// poisson: sums of exponential intervals of mean W/R from a generator seeded with S + w.
type poisson struct {
	rng       *rand.Rand
	perWorker float64 // R/W
	t         float64 // seconds
}

func (p *poisson) Next() int64 {
	p.t += p.rng.ExpFloat64() / p.perWorker
	return int64(math.Round(p.t * 1e9))
}

// NewSchedule is worker w's schedule for the open loop's flags.
func NewSchedule(worker int, o *Options) Schedule {
	if o.Arrival == "poisson" {
		seed := uint64(o.Seed + int64(worker))
		return &poisson{rng: rand.New(rand.NewPCG(seed, 0)), perWorker: o.Rate / float64(o.Workers)}
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
