//! What one worker measured: per request its times (or, with `--record histogram`, its latencies in
//! HdrHistograms), the bytes, the failures (counted, the first [`MAX_FAILURES`] kept), what made a
//! request fail ([`Outcome`]; an upload's answer is checked by [`crate::body::Answer`]), and with `--phases` the
//! sums of the successful requests' phases ([`PhaseSums`]).

use bytes::Bytes;
use hdrhistogram::Histogram;
use reqwest_bench::ClientError;

use crate::document::{Failure, HistogramJson, Histograms, PhasesJson, WorkerJson};
use crate::options::RecordMode;

/// Failures kept per worker (the rest are only counted).
pub const MAX_FAILURES: usize = 1000;
/// The histograms' precision (docs/raw-format.md: 2,048 sub-buckets, unit 1 ns).
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// What a timed request did.
#[derive(Debug)]
pub enum Outcome {
    /// 200 and the whole body (and, for an upload, the expected line or the body echoed).
    Ok { bytes: u64 },
    /// Another status (the body was read).
    Status { status: u16, bytes: u64 },
    /// The request failed.
    Error(ClientError),
    /// An upload answered 200 with neither the expected line nor the body of `body_len` bytes it sent;
    /// `got` is the answer's first bytes.
    Mismatch { expected: Bytes, body_len: u64, got: Bytes, bytes: u64 },
    /// It ended after `--timeout` (which bounds the whole request), whatever it returned.
    Overtime { took_ns: u64, timeout_ns: u64, bytes: u64 },
}

impl Outcome {
    /// A GET's result.
    pub fn of_get(result: Result<(u16, u64), ClientError>) -> Outcome {
        match result {
            Ok((200, bytes)) => Outcome::Ok { bytes },
            Ok((status, bytes)) => Outcome::Status { status, bytes },
            Err(e) => Outcome::Error(e),
        }
    }

    /// The outcome of a request that took `took_ns`: [`Outcome::Overtime`] past `timeout_ns`, unless it
    /// failed before it completed (the reason's order, docs/raw-format.md: the client's error, then the
    /// timeout, then the status, then the upload's answer).
    pub fn within(self, took_ns: u64, timeout_ns: u64) -> Outcome {
        match self {
            Outcome::Ok { bytes } | Outcome::Status { bytes, .. } | Outcome::Mismatch { bytes, .. }
                if took_ns > timeout_ns =>
            {
                Outcome::Overtime { took_ns, timeout_ns, bytes }
            }
            other => other,
        }
    }

    fn bytes(&self) -> u64 {
        match self {
            Outcome::Ok { bytes }
            | Outcome::Status { bytes, .. }
            | Outcome::Mismatch { bytes, .. }
            | Outcome::Overtime { bytes, .. } => *bytes,
            Outcome::Error(_) => 0,
        }
    }

    /// The canonical failure reason and status (`None`: a success).
    pub fn failure(&self) -> Option<(String, Option<u16>)> {
        match self {
            Outcome::Ok { .. } => None,
            Outcome::Status { status, .. } => Some((format!("status {status}"), Some(*status))),
            Outcome::Error(e) => Some((e.to_string(), None)),
            Outcome::Mismatch { expected, body_len, got, bytes } => {
                let text = |b: &Bytes| String::from_utf8_lossy(b).into_owned();
                let got = match *bytes == got.len() as u64 {
                    true => format!("{:?}", text(got)),
                    false => format!("{bytes} bytes starting {:?}", text(got)),
                };
                let expected = format!("{:?} (or the {body_len} bytes sent, echoed)", text(expected));
                // `status` is set only for a `status <code>` failure
                Some((format!("Error: upload digest mismatch: expected {expected}, got {got}"), None))
            }
            Outcome::Overtime { took_ns, timeout_ns, .. } => {
                let s = |ns: u64| ns as f64 / 1e9;
                let text = format!("the request took {:.3} s, past --timeout {} s", s(*took_ns), s(*timeout_ns));
                Some((ClientError::Timeout(text).to_string(), None))
            }
        }
    }
}

/// Where the latencies go.
enum Store {
    /// Per request: actual start, service time, and (open loop) intended start, ns.
    Samples { start: Vec<u64>, latency: Vec<u64>, intended: Vec<u64> },
    /// The successful requests' service times, and (open loop) corrected latencies, ns: the histograms
    /// are made at the end (so that the loop only appends).
    Histograms { service: Vec<u64>, corrected: Vec<u64> },
}

/// What one worker measured, times in ns after t0.
pub struct Record {
    store: Store,
    /// An open loop: the intended starts are kept.
    open: bool,
    count: u64,
    pub(crate) late: u64,
    pub(crate) missed: u64,
    bytes: u64,
    failure_count: u64,
    failures: Vec<Failure>,
    pub(crate) loop_start: u64,
    pub(crate) loop_end: u64,
    /// The TLS version the worker's (last) client negotiated.
    pub(crate) tls_version: Option<&'static str>,
    /// The HTTP version of the worker's client's most recent response.
    pub(crate) protocol: Option<&'static str>,
    /// With `--phases` (and a driver that records some): the sums of the successful requests' phases.
    pub(crate) phases: Option<PhaseSums>,
}

/// `workers[i].phases`: the successful timed requests whose phases were recorded, the sum of their latencies
/// (service times) and of each phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseSums {
    keys: Vec<&'static str>,
    count: u64,
    latency_ns: u64,
    sums: Vec<u64>,
}

impl PhaseSums {
    /// Nothing yet, under `keys` (`client.phases`).
    pub fn new(keys: Vec<&'static str>) -> PhaseSums {
        let sums = vec![0; keys.len()];
        PhaseSums { keys, count: 0, latency_ns: 0, sums }
    }

    /// One successful request of service time `latency`, with its phases `(key, ns)`. A request with a phase
    /// that is not one of the keys is left out (the contract's count is of the requests whose phases were
    /// recorded): false. That is a bug of the driver's [`crate::Driver::phase_keys`] (a debug build panics).
    pub fn add(&mut self, latency: u64, phases: impl IntoIterator<Item = (&'static str, u64)>) -> bool {
        // checked whole before anything is added (no allocation: a request has a few phases)
        let (mut found, mut n) = ([(0usize, 0u64); 8], 0);
        for (key, ns) in phases {
            let i = self.keys.iter().position(|k| *k == key);
            let Some(i) = i.filter(|_| n < found.len()) else {
                debug_assert!(false, "phase {key:?} is not one of the driver's keys {:?}", self.keys);
                return false;
            };
            found[n] = (i, ns);
            n += 1;
        }
        for &(i, ns) in &found[..n] {
            self.sums[i] = self.sums[i].saturating_add(ns);
        }
        self.count += 1;
        self.latency_ns = self.latency_ns.saturating_add(latency);
        true
    }

    pub(crate) fn into_json(self) -> PhasesJson {
        PhasesJson {
            count: self.count,
            latency_ns: self.latency_ns,
            sum_ns: self.keys.into_iter().zip(self.sums).collect(),
        }
    }
}

impl Record {
    /// Room for `expected` requests; `open`: the intended starts (or the corrected latencies) are kept.
    pub fn new(mode: RecordMode, open: bool, expected: usize) -> Self {
        let store = match mode {
            RecordMode::Samples => Store::Samples {
                start: Vec::with_capacity(expected),
                latency: Vec::with_capacity(expected),
                intended: Vec::with_capacity(if open { expected } else { 0 }),
            },
            RecordMode::Histogram => Store::Histograms {
                service: Vec::with_capacity(expected),
                corrected: Vec::with_capacity(if open { expected } else { 0 }),
            },
        };
        Record {
            store,
            open,
            count: 0,
            late: 0,
            missed: 0,
            bytes: 0,
            failure_count: 0,
            failures: Vec::new(),
            loop_start: 0,
            loop_end: 0,
            tls_version: None,
            protocol: None,
            phases: None,
        }
    }

    /// Sum the successful requests' phases under `keys` ([`Record::phases`]).
    pub fn with_phases(mut self, keys: Vec<&'static str>) -> Self {
        self.phases = Some(PhaseSums::new(keys));
        self
    }

    /// A successful timed request's phases, of service time `latency` (with [`Record::with_phases`] only).
    pub fn phases(&mut self, latency: u64, phases: impl IntoIterator<Item = (&'static str, u64)>) {
        if let Some(sums) = &mut self.phases {
            sums.add(latency, phases);
        }
    }

    /// Timed request `index`, intended at `intended` (open loop), ran from `start` to `end`.
    pub fn record(&mut self, index: u64, intended: Option<u64>, start: u64, end: u64, outcome: Outcome) {
        self.count += 1;
        self.bytes += outcome.bytes();
        let ok = matches!(outcome, Outcome::Ok { .. });
        match &mut self.store {
            Store::Samples { start: starts, latency, intended: intendeds } => {
                starts.push(start);
                latency.push(end.saturating_sub(start));
                if let Some(i) = intended {
                    intendeds.push(i);
                }
            }
            Store::Histograms { service, corrected } => {
                if ok {
                    service.push(end.saturating_sub(start));
                    if let Some(i) = intended {
                        corrected.push(end.saturating_sub(i));
                    }
                }
            }
        }
        if !ok {
            self.failure_count += 1;
            if self.failures.len() < MAX_FAILURES {
                if let Some((reason, status)) = outcome.failure() {
                    let index = u32::try_from(index).unwrap_or(u32::MAX);
                    self.failures.push(Failure { index, reason, status });
                }
            }
        }
    }

    pub(crate) fn into_json(self) -> WorkerJson {
        let (start_ns, latencies_ns, intended_ns, histograms) = match self.store {
            Store::Samples { start, latency, intended } => {
                (Some(start), Some(latency), self.open.then_some(intended), None)
            }
            Store::Histograms { service, corrected } => {
                let corrected = self.open.then(|| buckets(&histogram_of(&corrected)));
                (None, None, None, Some(Histograms { service: buckets(&histogram_of(&service)), corrected }))
            }
        };
        WorkerJson {
            elapsed_ns: self.loop_end.saturating_sub(self.loop_start),
            count: self.count,
            late: self.late,
            missed: self.missed,
            start_ns,
            latencies_ns,
            intended_ns,
            histograms,
            bytes: self.bytes,
            failure_count: self.failure_count,
            failures: self.failures,
            phases: self.phases.map(PhaseSums::into_json),
        }
    }
}

/// An empty histogram of the document's scheme (it grows to whatever value is recorded).
pub fn histogram() -> Histogram<u64> {
    Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits is a valid precision")
}

/// The histogram of `values`.
pub fn histogram_of(values: &[u64]) -> Histogram<u64> {
    let mut h = histogram();
    for &v in values {
        // an error only for a value beyond the largest trackable (u64::MAX / 2 ns: centuries)
        if h.record(v).is_err() {
            h.saturating_record(v);
        }
    }
    h
}

/// Every bucket of `h` that holds a value, by increasing value: its lowest equivalent value and count.
pub fn buckets(h: &Histogram<u64>) -> HistogramJson {
    let counts = h.iter_recorded().map(|v| (h.lowest_equivalent(v.value_iterated_to()), v.count_at_value())).collect();
    HistogramJson { significant_digits: SIGNIFICANT_DIGITS, counts }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts_of(values: &[u64]) -> Vec<(u64, u64)> {
        buckets(&histogram_of(values)).counts
    }

    #[test]
    fn histogram_buckets_are_the_lowest_equivalent_values() {
        // the spec's examples: exact below 2,048; 2,049 -> 2,048; 1,000,999 -> 1,000,960
        assert_eq!(counts_of(&[2_049]), [(2_048, 1)]);
        assert_eq!(counts_of(&[1_000_999]), [(1_000_960, 1)]);
        assert_eq!(counts_of(&[0, 1, 2_047, 2_047]), [(0, 1), (1, 1), (2_047, 2)]);
        // one bucket per 2^b above 2,048, with b = floor(log2 v) - 10
        assert_eq!(counts_of(&[2_048, 2_049, 2_050, 4_099, 4_100]), [(2_048, 2), (2_050, 1), (4_096, 1), (4_100, 1)]);
        assert_eq!(counts_of(&[1_000_960, 1_001_471, 1_001_472]), [(1_000_960, 2), (1_001_472, 1)]);
        // a minute, to the ns, sorted
        let v = 60_000_000_123u64;
        let b = 63 - v.leading_zeros() as u64 - 10;
        assert_eq!(counts_of(&[v, 5]), [(5, 1), (v >> b << b, 1)]);
        // the spec's formula for any value
        for v in (0..5_000_000u64).step_by(7_919).chain([u64::from(u32::MAX), 1 << 40]) {
            let want =
                if v < 2_048 { v } else { (v >> (63 - v.leading_zeros() - 10)) << (63 - v.leading_zeros() - 10) };
            assert_eq!(counts_of(&[v]), [(want, 1)], "{v}");
        }
    }

    fn mismatch(got: &'static [u8], bytes: u64) -> Outcome {
        Outcome::Mismatch { expected: Bytes::from_static(b"3 abc"), body_len: 3, got: Bytes::from_static(got), bytes }
    }

    #[test]
    fn a_mismatch_shows_what_was_expected_and_got() {
        let wrong = mismatch(b"3 abd", 5).failure().unwrap();
        let expected = "Error: upload digest mismatch: expected \"3 abc\" (or the 3 bytes sent, echoed)";
        assert_eq!(wrong, (format!("{expected}, got \"3 abd\""), None));
        // a longer body with the right start
        let long = mismatch(b"3 abc", 9).failure().unwrap();
        assert_eq!(long.0, format!("{expected}, got 9 bytes starting \"3 abc\""));
        assert_eq!(Outcome::Status { status: 405, bytes: 0 }.failure(), Some(("status 405".into(), Some(405))));
        let timeout = Outcome::Error(ClientError::Timeout("request timed out".into())).failure();
        assert_eq!(timeout, Some(("TimeoutError: request timed out".into(), None)));
    }

    #[test]
    fn a_request_past_the_timeout_is_a_timeout_whatever_it_returned() {
        let second = 1_000_000_000;
        let slow = |o: Outcome| o.within(second + 1, second);
        let reason = "TimeoutError: the request took 1.000 s, past --timeout 1 s";
        assert_eq!(slow(Outcome::Ok { bytes: 5 }).failure(), Some((reason.into(), None)));
        assert_eq!(slow(Outcome::Status { status: 500, bytes: 5 }).failure(), Some((reason.into(), None)));
        assert_eq!(slow(mismatch(b"3 abd", 5)).failure(), Some((reason.into(), None)));
        // its bytes still count; the client's own error keeps its reason; at the timeout exactly, it is in time
        let mut rec = Record::new(RecordMode::Histogram, false, 0);
        rec.record(0, None, 0, second + 1, slow(Outcome::Ok { bytes: 7 }));
        rec.record(1, None, 0, second, Outcome::Ok { bytes: 7 }.within(second, second));
        let json = rec.into_json();
        assert_eq!((json.bytes, json.failure_count, json.histograms.unwrap().service.counts.len()), (14, 1, 1));
        let refused = ClientError::Connection(reqwest_bench::ConnectionKind::Refused, "refused".into());
        assert!(matches!(Outcome::Error(refused).within(2 * second, second), Outcome::Error(_)));
    }

    #[test]
    fn failures_are_all_counted_and_the_first_thousand_kept() {
        let mut rec = Record::new(RecordMode::Samples, false, 0);
        for k in 0..1500 {
            let outcome = if k % 3 == 0 { Outcome::Ok { bytes: 2 } } else { Outcome::Status { status: 503, bytes: 1 } };
            rec.record(k, None, k, k + 10, outcome);
        }
        let json = rec.into_json();
        assert_eq!((json.count, json.failure_count, json.failures.len(), json.bytes), (1500, 1000, 1000, 2000));
        assert_eq!(json.failures[0].index, 1);
        let mut rec = Record::new(RecordMode::Samples, false, 0);
        for k in 0..2500 {
            rec.record(k, None, k, k + 1, Outcome::Status { status: 500, bytes: 0 });
        }
        let json = rec.into_json();
        assert_eq!((json.failure_count, json.failures.len()), (2500, MAX_FAILURES));
        assert_eq!(json.failures.last().map(|f| f.index), Some(999));
        assert!(json.intended_ns.is_none() && json.histograms.is_none());
    }

    #[test]
    fn phases_are_summed_under_every_key() {
        let mut rec =
            Record::new(RecordMode::Histogram, false, 0).with_phases(vec!["connect+tls", "send+wait", "receive"]);
        rec.phases(100, [("connect+tls", 10), ("send+wait", 50), ("receive", 20)]);
        rec.phases(60, [("send+wait", 40), ("receive", 5)]);
        let json = rec.into_json().phases.expect("phases");
        assert_eq!((json.count, json.latency_ns), (2, 160));
        assert_eq!(json.sum_ns, [("connect+tls", 10), ("send+wait", 90), ("receive", 25)]);
        // none: every key still there, 0
        let none = Record::new(RecordMode::Samples, false, 0).with_phases(vec!["connect+tls", "receive"]);
        let json = none.into_json().phases.expect("phases");
        assert_eq!((json.count, json.latency_ns, json.sum_ns), (0, 0, vec![("connect+tls", 0), ("receive", 0)]));
        assert!(Record::new(RecordMode::Samples, false, 0).into_json().phases.is_none());
    }

    #[test]
    fn a_phase_without_its_key_leaves_the_request_out() {
        let mut sums = PhaseSums::new(vec!["connect+tls", "receive"]);
        assert!(sums.add(5, [("connect+tls", 1), ("receive", 2)]));
        let unknown = std::panic::catch_unwind(move || {
            let ok = sums.add(7, [("connect+tls", 1), ("connect", 1)]);
            (ok, sums)
        });
        // a debug build says it is a bug; a release build leaves the request out, nothing of it added
        assert_eq!(unknown.is_err(), cfg!(debug_assertions));
        if let Ok((ok, sums)) = unknown {
            assert_eq!((ok, sums.into_json().count), (false, 1));
        }
    }

    #[test]
    fn histograms_hold_the_successful_requests() {
        let mut rec = Record::new(RecordMode::Histogram, true, 0);
        rec.record(0, Some(100), 100, 1_100, Outcome::Ok { bytes: 1 });
        rec.record(1, Some(200), 1_100, 3_149, Outcome::Ok { bytes: 1 }); // late: corrected 2,949
        rec.record(2, Some(300), 3_149, 3_200, Outcome::Status { status: 500, bytes: 1 });
        let json = rec.into_json();
        let h = json.histograms.unwrap();
        assert_eq!(h.service.counts, [(1_000, 1), (2_048, 1)]);
        assert_eq!(h.corrected.unwrap().counts, [(1_000, 1), (2_948, 1)]);
        assert!(json.start_ns.is_none() && json.latencies_ns.is_none() && json.intended_ns.is_none());
        assert_eq!((json.count, json.failure_count), (3, 1));
        // closed loop: no corrected histogram
        let rec = Record::new(RecordMode::Histogram, false, 0);
        assert!(rec.into_json().histograms.unwrap().corrected.is_none());
    }
}
