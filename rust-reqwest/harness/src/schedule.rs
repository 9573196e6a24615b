//! The open loop's schedule (docs/raw-format.md, "Open loop"), apart from any real time so that it can be
//! tested with a fake clock: [`Schedule`] is worker w's intended start times, a pure function of the
//! options; [`Pacer`] walks it and keeps the books (late starts, missed requests); [`Clock`] is the time
//! the worker loop reads and sleeps on (the real ones are in [`crate::run`]).

use std::future::Future;

use crate::options::Arrival;

/// The open loop of `--rate R [--arrival A] [--seed S]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Open {
    /// R: requests/s over all workers.
    pub rate: f64,
    pub arrival: Arrival,
    pub seed: u64,
}

/// How long a worker's timed loop lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `--requests N`: N timed requests, however late.
    Requests(u32),
    /// `--duration D` (open loop), in ns: the schedule's I(w, k) < D, each request started before D.
    Duration(u64),
}

/// Time as the worker loop sees it: ns after t0.
pub trait Clock {
    fn now(&self) -> u64;
    /// Return at `at` ns after t0, or at once if that has passed.
    fn sleep_until(&self, at: u64) -> impl Future<Output = ()> + Send;
}

/// SplitMix64 (Steele, Lea and Flood 2014; Vigna's reference code): the Poisson schedules' generator, the same
/// in every language's harness, so that a seed gives the same schedule everywhere.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Worker w's intended start times I(w, 0), I(w, 1), ... in ns after t0 (an endless iterator).
#[derive(Debug)]
pub enum Schedule {
    /// I(w, k) = (w + k·W) / R.
    Uniform { first: u64, step: u64, rate: f64, k: u64 },
    /// I(w, k) = I(w, k−1) + Xₖ in whole ns, Xₖ = round(−ln(u) · m) with m = W · 1e9 / R and
    /// u = ((x >> 11) + 1) / 2⁵³ from SplitMix64 seeded with S + w (mod 2⁶⁴); I(w, 0) = X₀.
    Poisson { at: u64, rng: SplitMix64, mean_ns: f64 },
}

impl Schedule {
    /// Worker `w`'s schedule (of `workers`).
    pub fn new(open: &Open, workers: u32, w: u32) -> Schedule {
        match open.arrival {
            Arrival::Uniform => {
                Schedule::Uniform { first: u64::from(w), step: u64::from(workers), rate: open.rate, k: 0 }
            }
            Arrival::Poisson => Schedule::Poisson {
                at: 0,
                rng: SplitMix64(open.seed.wrapping_add(u64::from(w))),
                mean_ns: f64::from(workers) * 1e9 / open.rate,
            },
        }
    }
}

impl Iterator for Schedule {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        match self {
            Schedule::Uniform { first, step, rate, k } => {
                let slot = *first + *k * *step;
                *k += 1;
                Some(ns_of(slot as f64 / *rate * 1e9))
            }
            Schedule::Poisson { at, rng, mean_ns } => {
                // exact: a 53-bit integer plus one, times a power of two
                let u = ((rng.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64);
                // whole ns per interval, summed exactly: the other harnesses' times, to the ns
                *at = at.saturating_add(ns_of(-u.ln() * *mean_ns));
                Some(*at)
            }
        }
    }
}

/// ns rounded to whole ns, halves away from zero (as C's round()); saturating: a schedule beyond 584
/// years is never reached.
fn ns_of(ns: f64) -> u64 {
    ns.round() as u64
}

/// One worker's walk along its schedule: which request comes next and when, which started late, which
/// were missed. The loop is
///
/// ```text
/// while let Some(intended) = pacer.next_intended() {
///     clock.sleep_until(intended).await;
///     let start = clock.now();
///     if !pacer.admit(intended, start) { break }   // --duration: too late to start
///     ... the request ...
///     pacer.finished(clock.now());
/// }
/// ```
#[derive(Debug)]
pub struct Pacer {
    schedule: Schedule,
    limit: Limit,
    sent: u64,
    previous_end: u64,
    late: u64,
    missed: u64,
}

impl Pacer {
    pub fn new(schedule: Schedule, limit: Limit) -> Pacer {
        Pacer { schedule, limit, sent: 0, previous_end: 0, late: 0, missed: 0 }
    }

    /// The next request's intended start, or `None` when the schedule is done: N requests sent, or the
    /// next I(w, k) at or past D.
    pub fn next_intended(&mut self) -> Option<u64> {
        if let Limit::Requests(n) = self.limit {
            if self.sent >= u64::from(n) {
                return None;
            }
        }
        let intended = self.schedule.next()?;
        match self.limit {
            Limit::Duration(d) if intended >= d => None,
            _ => Some(intended),
        }
    }

    /// The request intended at `intended` can start now (`start`, at or after it): counts it, and it is
    /// late if the previous one had not finished by `intended`. With `--duration D`, a request that can
    /// only start at or after D is not sent: it and the rest of the schedule before D are missed, and
    /// this returns false (the worker stops).
    pub fn admit(&mut self, intended: u64, start: u64) -> bool {
        if let Limit::Duration(d) = self.limit {
            if start >= d {
                self.missed = 1 + self.schedule.by_ref().take_while(|&i| i < d).count() as u64;
                return false;
            }
        }
        if self.sent > 0 && self.previous_end > intended {
            self.late += 1;
        }
        self.sent += 1;
        true
    }

    /// The request admitted last finished at `end`.
    pub fn finished(&mut self, end: u64) {
        self.previous_end = end;
    }

    /// Requests started.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    pub fn late(&self) -> u64 {
        self.late
    }

    pub fn missed(&self) -> u64 {
        self.missed
    }

    /// About how many requests the schedule holds (to size the sample arrays).
    pub fn expected(&self, open: &Open, workers: u32) -> usize {
        match self.limit {
            Limit::Requests(n) => n as usize,
            Limit::Duration(d) => {
                let mean = d as f64 / 1e9 * open.rate / f64::from(workers);
                (mean + 4.0 * mean.sqrt() + 16.0).min(1e8) as usize
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uniform(rate: f64) -> Open {
        Open { rate, arrival: Arrival::Uniform, seed: 1 }
    }

    fn poisson(rate: f64, seed: u64) -> Open {
        Open { rate, arrival: Arrival::Poisson, seed }
    }

    #[test]
    fn uniform_phases_are_spread_evenly() {
        // 1000 requests/s over 4 workers: each every 4 ms, worker w starting at w ms
        for w in 0..4 {
            let got: Vec<u64> = Schedule::new(&uniform(1000.0), 4, w).take(3).collect();
            let w = u64::from(w);
            assert_eq!(got, [w * 1_000_000, (w + 4) * 1_000_000, (w + 8) * 1_000_000]);
        }
        // the union is one arrival every 1/R
        let mut all: Vec<u64> = (0..4).flat_map(|w| Schedule::new(&uniform(1000.0), 4, w).take(250)).collect();
        all.sort_unstable();
        assert_eq!(all, (0..1000).map(|i| i * 1_000_000).collect::<Vec<u64>>());
        // rounded to the ns: 3 requests/s, one worker
        let got: Vec<u64> = Schedule::new(&uniform(3.0), 1, 0).take(4).collect();
        assert_eq!(got, [0, 333_333_333, 666_666_667, 1_000_000_000]);
    }

    #[test]
    fn splitmix64_is_the_reference_generator() {
        // Vigna's splitmix64.c from state 1
        let mut g = SplitMix64(1);
        assert_eq!([g.next_u64(), g.next_u64()], [0x910a_2dec_8902_5cc1, 0xbeeb_8da1_658e_ec67]);
    }

    #[test]
    fn poisson_is_the_documented_schedule() {
        // docs/raw-format.md's example: --seed 1, W = 4, R = 2000 (a mean interval of 2 ms), workers 0 and 1
        let w0: Vec<u64> = Schedule::new(&poisson(2000.0, 1), 4, 0).take(5).collect();
        assert_eq!(w0, [1_136_339, 1_722_984, 1_781_836, 3_404_080, 5_026_749]);
        let w1: Vec<u64> = Schedule::new(&poisson(2000.0, 1), 4, 1).take(5).collect();
        assert_eq!(w1, [1_051_237, 1_628_870, 2_665_114, 3_199_777, 5_531_920]);
        // S + w wraps: worker 1 of seed 2^64 - 1 is worker 0 of seed 0
        let wrapped: Vec<u64> = Schedule::new(&poisson(2000.0, u64::MAX), 4, 1).take(100).collect();
        assert_eq!(wrapped, Schedule::new(&poisson(2000.0, 0), 4, 0).take(100).collect::<Vec<u64>>());
    }

    #[test]
    fn poisson_is_reproducible_and_has_the_right_mean() {
        let a: Vec<u64> = Schedule::new(&poisson(500.0, 7), 5, 2).take(1000).collect();
        let b: Vec<u64> = Schedule::new(&poisson(500.0, 7), 5, 2).take(1000).collect();
        assert_eq!(a, b, "same seed and worker, same schedule");
        // worker w is seeded with S + w: worker 2 of seed 7 is worker 1 of seed 8, and differs from worker 3
        assert_eq!(a, Schedule::new(&poisson(500.0, 8), 5, 1).take(1000).collect::<Vec<u64>>());
        assert_ne!(a, Schedule::new(&poisson(500.0, 7), 5, 3).take(1000).collect::<Vec<u64>>());
        assert!(a.windows(2).all(|p| p[0] <= p[1]) && a[0] > 0, "I(w, 0) = X0 > 0, increasing");
        // 100 requests/s per worker: mean interval 10 ms. Over 100,000 intervals the sample mean's standard
        // error is 10 ms / sqrt(1e5) = 0.032 ms; the bounds are 9 standard errors wide.
        let n = 100_000;
        let last = Schedule::new(&poisson(500.0, 1), 5, 0).nth(n - 1).unwrap();
        let mean_ms = last as f64 / n as f64 / 1e6;
        assert!((mean_ms - 10.0).abs() < 0.3, "mean interval {mean_ms} ms");
        // exponential: the fraction of intervals below the mean is 1 - 1/e = 0.632
        let times: Vec<u64> = Schedule::new(&poisson(500.0, 3), 5, 0).take(n).collect();
        let short = times.windows(2).filter(|p| p[1] - p[0] < 10_000_000).count() as f64 / (n - 1) as f64;
        assert!((short - 0.632).abs() < 0.01, "{short}");
    }

    /// A fake clock: sleeping jumps to the deadline; a request lasts what the test says.
    struct Walk {
        now: u64,
        pacer: Pacer,
        /// (k, intended, start, end) of every request sent
        sent: Vec<(u64, u64, u64, u64)>,
    }

    /// Walk the pacer as the worker loop does, request k lasting `service(k)` ns.
    fn walk(schedule: Schedule, limit: Limit, service: impl Fn(u64) -> u64) -> Walk {
        let mut w = Walk { now: 0, pacer: Pacer::new(schedule, limit), sent: Vec::new() };
        let mut k = 0;
        while let Some(intended) = w.pacer.next_intended() {
            w.now = w.now.max(intended);
            if !w.pacer.admit(intended, w.now) {
                break;
            }
            let start = w.now;
            w.now += service(k);
            w.pacer.finished(w.now);
            w.sent.push((k, intended, start, w.now));
            k += 1;
        }
        w
    }

    #[test]
    fn a_stall_makes_the_requests_behind_it_late() {
        // one worker every 10 ms; request 2 takes 35 ms, the others 1 ms
        let schedule = Schedule::new(&uniform(100.0), 1, 0);
        let w = walk(schedule, Limit::Requests(8), |k| if k == 2 { 35_000_000 } else { 1_000_000 });
        let ms = 1_000_000;
        let starts: Vec<(u64, u64)> = w.sent.iter().map(|&(_, i, s, _)| (i / ms, s / ms)).collect();
        // 2 runs from 20 to 55 ms: 3, 4 and 5 (intended 30, 40, 50) start late, back to back; 6 is on time
        assert_eq!(starts, [(0, 0), (10, 10), (20, 20), (30, 55), (40, 56), (50, 57), (60, 60), (70, 70)]);
        assert_eq!((w.pacer.sent(), w.pacer.late(), w.pacer.missed()), (8, 3, 0));
    }

    #[test]
    fn duration_stops_the_schedule_and_counts_what_was_missed() {
        let ms = 1_000_000;
        // every 10 ms for 100 ms: 10 requests (0..90 ms), all on time
        let w = walk(Schedule::new(&uniform(100.0), 1, 0), Limit::Duration(100 * ms), |_| ms);
        assert_eq!((w.pacer.sent(), w.pacer.late(), w.pacer.missed()), (10, 0, 0));
        // request 7 (at 70 ms) takes 45 ms: it ends at 115, after D; 8 and 9 are missed
        let w =
            walk(
                Schedule::new(&uniform(100.0), 1, 0),
                Limit::Duration(100 * ms),
                |k| {
                    if k == 7 {
                        45 * ms
                    } else {
                        ms
                    }
                },
            );
        assert_eq!((w.pacer.sent(), w.pacer.late(), w.pacer.missed()), (8, 0, 2));
        // request 7 ends at 95: 8 (80 ms) and 9 (90 ms) start late but before D
        let w =
            walk(
                Schedule::new(&uniform(100.0), 1, 0),
                Limit::Duration(100 * ms),
                |k| {
                    if k == 7 {
                        25 * ms
                    } else {
                        ms
                    }
                },
            );
        assert_eq!((w.pacer.sent(), w.pacer.late(), w.pacer.missed()), (10, 2, 0));
        // sent + missed is the schedule before D, for the second worker of two too (phase 5 ms)
        let w = walk(Schedule::new(&uniform(200.0), 2, 1), Limit::Duration(100 * ms), |k| (k + 1) * 4 * ms);
        assert_eq!(w.sent[0].1, 5 * ms);
        assert_eq!(w.pacer.sent() + w.pacer.missed(), 10);
        assert!(w.pacer.missed() > 0 && w.sent.iter().all(|&(_, _, s, _)| s < 100 * ms));
    }

    #[test]
    fn requests_are_all_sent_however_late() {
        let w = walk(Schedule::new(&poisson(1000.0, 1), 1, 0), Limit::Requests(50), |_| 5_000_000);
        assert_eq!((w.pacer.sent(), w.pacer.missed()), (50, 0));
        // a 5 ms service time against a 1 ms mean interval: nearly every request is late
        assert!(w.pacer.late() >= 45, "{}", w.pacer.late());
        assert!(w.sent.iter().all(|&(_, i, s, _)| s >= i));
    }
}
