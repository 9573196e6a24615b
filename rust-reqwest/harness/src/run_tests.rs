//! The workers with fake clients: the closed loop in both modes, the open loop on a fake clock (intended
//! times, late starts, missed requests, corrected latencies), uploads and their check, a shared client,
//! `unsupported`. Streamed bodies and targets: run_bodies_tests.rs, which shares the helpers here.

use super::*;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use clap::Parser;

use crate::body::{body_pattern, Answer, Outgoing};
use crate::document::WorkerJson;
use crate::options::{upload_line, Options, RecordMode};

#[derive(clap::Parser)]
pub(super) struct Cli {
    #[command(flatten)]
    pub(super) o: Options,
}

pub(super) fn plan(args: &[&str]) -> Plan {
    let cli = Cli::try_parse_from([&["driver", "--url", "http://127.0.0.1:9/", "--timeout", "1"][..], args].concat());
    cli.unwrap().o.plan().unwrap()
}

pub(super) fn co() -> ClientOptions {
    ClientOptions::new(Duration::from_secs(1))
}

fn timeout() -> ClientError {
    ClientError::Timeout("request timed out".into())
}

/// A fake client: request j of a worker answers 200 with j bytes, except every 4th (status 500) and every
/// 5th (a timeout); uploads answer the line of what they sent (whole or streamed), except the 3rd, which
/// answers a wrong one; counts the clients made.
struct Fake {
    clients: AtomicU32,
}

struct FakeClient {
    next: AtomicU32,
}

fn answer_of(client: &FakeClient) -> Result<(u16, u64), ClientError> {
    let j = client.next.fetch_add(1, Ordering::Relaxed);
    match j {
        j if j % 5 == 4 => Err(timeout()),
        j if j % 4 == 3 => Ok((500, 1)),
        j => Ok((200, u64::from(j))),
    }
}

/// The bytes of a body as the client is given them (a stream's chunks at most `chunk` bytes each).
pub(super) fn sent(body: Outgoing, chunk: usize) -> Vec<u8> {
    match body {
        Outgoing::None => Vec::new(),
        Outgoing::Whole(b) => b.to_vec(),
        Outgoing::Stream(chunks) => chunks.inspect(|c| assert!(c.len() <= chunk)).flat_map(|c| c.to_vec()).collect(),
    }
}

fn send_answer(client: &FakeClient, method: Method, body: Outgoing, answer: &mut Answer) -> Result<u16, ClientError> {
    if method == Method::Get {
        let (status, n) = answer_of(client)?;
        answer.feed(&vec![b'x'; n as usize]);
        return Ok(status);
    }
    let j = client.next.fetch_add(1, Ordering::Relaxed);
    let line = if j == 2 { upload_line(b"something else") } else { upload_line(&sent(body, usize::MAX)) };
    answer.feed(&line);
    Ok(200)
}

impl Driver for Fake {
    type Client = FakeClient;

    fn make_client(&self, _options: &ClientOptions) -> Result<FakeClient, ClientError> {
        self.clients.fetch_add(1, Ordering::Relaxed);
        Ok(FakeClient { next: AtomicU32::new(0) })
    }

    fn get(&self, client: &FakeClient, _url: &str) -> impl Future<Output = Result<(u16, u64), ClientError>> + Send {
        std::future::ready(answer_of(client))
    }

    fn send(
        &self,
        client: &FakeClient,
        method: Method,
        _url: &str,
        body: Outgoing,
        answer: &mut Answer<'_>,
    ) -> impl Future<Output = Result<u16, ClientError>> + Send {
        std::future::ready(send_answer(client, method, body, answer))
    }
}

/// The same client, answering from a tokio task after a yield (a real async request is pending first).
struct AsyncFake(Fake);

impl Driver for AsyncFake {
    type Client = FakeClient;

    fn make_client(&self, options: &ClientOptions) -> Result<FakeClient, ClientError> {
        self.0.make_client(options)
    }

    async fn get(&self, client: &FakeClient, _url: &str) -> Result<(u16, u64), ClientError> {
        tokio::task::yield_now().await;
        answer_of(client)
    }

    async fn send(
        &self,
        client: &FakeClient,
        method: Method,
        _url: &str,
        body: Outgoing,
        answer: &mut Answer<'_>,
    ) -> Result<u16, ClientError> {
        tokio::task::yield_now().await;
        send_answer(client, method, body, answer)
    }
}

fn fake() -> Fake {
    Fake { clients: AtomicU32::new(0) }
}

fn check_closed(group: Group, plan: &Plan) {
    let Limit::Requests(n) = plan.limit else { panic!("a closed loop") };
    assert_eq!(group.records.len(), plan.workers as usize);
    let mut loops = Vec::new();
    for r in group.records {
        let json = r.into_json();
        loops.push(json.elapsed_ns);
        let (start, latency) = (json.start_ns.unwrap(), json.latencies_ns.unwrap());
        assert_eq!((start.len(), latency.len(), json.count), (n as usize, n as usize, u64::from(n)));
        assert!(start.windows(2).all(|w| w[0] <= w[1]));
        assert!(json.intended_ns.is_none() && (json.late, json.missed) == (0, 0));
        // with --connection keep-alive the warm-up requests came first on the same client
        let first = if plan.connection == Connection::New { 0 } else { plan.warmup };
        let mut bytes = 0;
        let mut failures = Vec::new();
        for i in 0..n {
            let j = if plan.connection == Connection::New { first } else { first + i };
            match j {
                j if j % 5 == 4 => failures.push((i, timeout().to_string(), None)),
                j if j % 4 == 3 => {
                    bytes += 1;
                    failures.push((i, "status 500".to_string(), Some(500)));
                }
                j => bytes += u64::from(j),
            }
        }
        assert_eq!(json.bytes, bytes);
        assert_eq!(json.failure_count, failures.len() as u64);
        let got: Vec<_> = json.failures.into_iter().map(|f| (f.index, f.reason, f.status)).collect();
        assert_eq!(got, failures);
    }
    assert!(loops.iter().all(|&l| l <= group.wall_ns), "wall_ns contains every timed loop");
}

#[test]
fn threads_and_tasks_run_the_same_workload() {
    for connection in ["keep-alive", "new"] {
        let plan = plan(&["--workers", "3", "--requests", "12", "--warmup", "2", "--connection", connection]);
        check_closed(run_threads(fake(), &plan, &co()).expect("threads"), &plan);
        check_closed(run_tasks(AsyncFake(fake()), &plan, &co()).expect("tasks"), &plan);
    }
}

#[test]
fn new_connection_makes_a_client_per_timed_request() {
    let plan = plan(&["--workers", "2", "--requests", "5", "--warmup", "3", "--connection", "new"]);
    let driver = Arc::new(fake());
    struct Shared(Arc<Fake>);
    impl Driver for Shared {
        type Client = FakeClient;
        fn make_client(&self, o: &ClientOptions) -> Result<FakeClient, ClientError> {
            self.0.make_client(o)
        }
        fn get(&self, c: &FakeClient, url: &str) -> impl Future<Output = Result<(u16, u64), ClientError>> + Send {
            self.0.get(c, url)
        }
        fn send(
            &self,
            c: &FakeClient,
            m: Method,
            url: &str,
            body: Outgoing,
            answer: &mut Answer<'_>,
        ) -> impl Future<Output = Result<u16, ClientError>> + Send {
            self.0.send(c, m, url, body, answer)
        }
    }
    run_threads(Shared(driver.clone()), &plan, &co()).expect("threads");
    // one client per worker for the warm-up, then one per timed request
    assert_eq!(driver.clients.load(Ordering::Relaxed), 2 * (1 + 5));
}

#[test]
fn uploads_are_checked_in_both_modes() {
    let plan = plan(&["--workers", "2", "--requests", "4", "--method", "POST", "--body-size", "100"]);
    for group in [run_threads(fake(), &plan, &co()).unwrap(), run_tasks(AsyncFake(fake()), &plan, &co()).unwrap()] {
        for r in group.records {
            let json = r.into_json();
            let (line, other) = (upload_line(&body_pattern(100)), upload_line(b"something else"));
            assert_eq!((json.count, json.bytes), (4, 3 * line.len() as u64 + other.len() as u64));
            // the fake's 3rd answer (request 2) is the line of another body
            assert_eq!(json.failure_count, 1);
            let f = &json.failures[0];
            assert_eq!((f.index, f.status), (2, None)); // `status` only for a `status <code>` failure
            let line = String::from_utf8_lossy(&line);
            let expected =
                format!("Error: upload digest mismatch: expected {line:?} (or the 100 bytes sent, echoed), got ");
            assert!(f.reason.starts_with(&expected), "{}", f.reason);
        }
    }
}

/// A fake clock, ns after t0: sleeping jumps to the deadline.
struct FakeClock(Arc<AtomicU64>);

impl Clock for FakeClock {
    fn now(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }

    async fn sleep_until(&self, at: u64) {
        self.0.fetch_max(at, Ordering::SeqCst);
    }
}

/// A server on the fake clock: request k takes `service(k)` ns, then answers 200 with 13 bytes.
struct Timed {
    clock: Arc<AtomicU64>,
    service: fn(u64) -> u64,
    next: AtomicU64,
}

impl Driver for Timed {
    type Client = ();

    fn make_client(&self, _options: &ClientOptions) -> Result<(), ClientError> {
        Ok(())
    }

    fn get(&self, _client: &(), _url: &str) -> impl Future<Output = Result<(u16, u64), ClientError>> + Send {
        let k = self.next.fetch_add(1, Ordering::SeqCst);
        self.clock.fetch_add((self.service)(k), Ordering::SeqCst);
        std::future::ready(Ok((200, 13)))
    }

    fn send(
        &self,
        _client: &(),
        _method: Method,
        _url: &str,
        _body: Outgoing,
        _answer: &mut Answer<'_>,
    ) -> impl Future<Output = Result<u16, ClientError>> + Send {
        std::future::ready(Err(ClientError::Usage("not used".into())))
    }
}

const MS: u64 = 1_000_000;

/// The buckets of a histogram of these latencies, in ms.
fn buckets_of(ms: &[u64]) -> Vec<(u64, u64)> {
    let ns: Vec<u64> = ms.iter().map(|v| v * MS).collect();
    crate::record::buckets(&crate::record::histogram_of(&ns)).counts
}

/// Worker `w`'s timed loop on the fake clock.
fn fake_timed(plan: &Plan, w: u32, service: fn(u64) -> u64) -> WorkerJson {
    let clock = Arc::new(AtomicU64::new(0));
    let driver = Timed { clock: clock.clone(), service, next: AtomicU64::new(0) };
    block_on(timed(&driver, &mut Held::Own(Ok(())), plan, &co(), w, &FakeClock(clock))).into_json()
}

#[test]
fn the_open_loop_charges_a_stall_to_every_request_behind_it() {
    // 400 requests/s over 4 workers: worker 1 every 10 ms from 2.5 ms; request 2 (at 22.5 ms) takes 35 ms
    let plan = plan(&["--workers", "4", "--rate", "400", "--requests", "8"]);
    let json = fake_timed(&plan, 1, |k| if k == 2 { 35 * MS } else { MS });
    let intended = json.intended_ns.unwrap();
    assert_eq!(intended, (0..8).map(|k| 2_500_000 + k * 10 * MS).collect::<Vec<u64>>());
    let start = json.start_ns.unwrap();
    // 2 ends at 57.5 ms: 3, 4 and 5 (intended 32.5, 42.5, 52.5) start then, back to back; 6 is on time
    let want: Vec<u64> = [2.5, 12.5, 22.5, 57.5, 58.5, 59.5, 62.5, 72.5].iter().map(|ms| (ms * 1e6) as u64).collect();
    assert_eq!(start, want);
    assert_eq!(json.latencies_ns.unwrap(), [MS, MS, 35 * MS, MS, MS, MS, MS, MS], "service times");
    assert_eq!((json.count, json.late, json.missed, json.failure_count), (8, 3, 0, 0));
    assert_eq!(json.elapsed_ns, 73_500_000, "the loop runs from t0 to the last end");
    // the same run as histograms: the corrected latencies are end - intended
    let plan = self::plan(&["--workers", "4", "--rate", "400", "--requests", "8", "--record", "histogram"]);
    let json = fake_timed(&plan, 1, |k| if k == 2 { 35 * MS } else { MS });
    let h = json.histograms.unwrap();
    assert_eq!(h.corrected.unwrap().counts, buckets_of(&[1, 1, 35, 26, 17, 8, 1, 1]));
    assert_eq!(h.service.counts, buckets_of(&[1, 1, 35, 1, 1, 1, 1, 1]));
    assert!(json.start_ns.is_none() && json.intended_ns.is_none());
}

#[test]
fn the_open_loop_stops_at_the_duration_and_counts_the_missed() {
    // one worker every 10 ms for 100 ms; request 7 (at 70 ms) takes 45 ms: 8 and 9 are never sent
    let plan = plan(&["--workers", "1", "--rate", "100", "--duration", "0.1"]);
    let json = fake_timed(&plan, 0, |k| if k == 7 { 45 * MS } else { MS });
    assert_eq!((json.count, json.late, json.missed), (8, 0, 2));
    assert_eq!(json.intended_ns.unwrap().len(), 8);
    assert_eq!(*json.start_ns.unwrap().last().unwrap(), 70 * MS);
    // nothing slow: the whole schedule, on time
    let json = fake_timed(&plan, 0, |_| MS);
    assert_eq!((json.count, json.late, json.missed), (10, 0, 0));
}

#[test]
fn the_open_loop_runs_in_both_modes() {
    // 2,000 requests/s over 2 workers for 50 ms: each worker's schedule has 50 requests before D
    let plan = plan(&["--workers", "2", "--rate", "2000", "--duration", "0.05", "--method", "PUT"]);
    for group in [run_threads(fake(), &plan, &co()).unwrap(), run_tasks(AsyncFake(fake()), &plan, &co()).unwrap()] {
        assert!(group.wall_ns >= 49 * MS, "the last request is intended at 49.5 ms: {}", group.wall_ns);
        for (w, r) in group.records.into_iter().enumerate() {
            let json = r.into_json();
            assert_eq!(json.count + json.missed, 50);
            let intended = json.intended_ns.unwrap();
            let schedule: Vec<u64> = Schedule::new(&plan.open.unwrap(), 2, w as u32).take(intended.len()).collect();
            assert_eq!(intended, schedule);
            let start = json.start_ns.unwrap();
            assert!(start.iter().zip(&intended).all(|(s, i)| s >= i), "no request starts before its time");
            assert!(start.iter().all(|&s| s < 50 * MS), "every request starts before D");
        }
    }
}

#[test]
fn a_request_past_the_timeout_fails_whatever_it_returned() {
    // --timeout 20 ms bounds the whole request: the fake's 35 ms request 2 answered 200, and failed
    for loop_ in [&["--rate", "100"][..], &[]] {
        let args =
            [&["driver", "--url", "http://127.0.0.1:9/", "--timeout", "0.02", "--requests", "4"], loop_].concat();
        let plan = Cli::try_parse_from(args).unwrap().o.plan().unwrap();
        let json = fake_timed(&plan, 0, |k| if k == 2 { 35 * MS } else { MS });
        assert_eq!((json.count, json.failure_count, json.bytes), (4, 1, 4 * 13), "{loop_:?}");
        let f = &json.failures[0];
        assert_eq!(
            (f.index, f.reason.as_str(), f.status),
            (2, "TimeoutError: the request took 0.035 s, past --timeout 0.02 s", None)
        );
    }
}

#[test]
fn closed_loop_histograms_have_no_corrected_latency() {
    let plan = plan(&["--workers", "1", "--requests", "3", "--record", "histogram"]);
    assert_eq!(plan.record, RecordMode::Histogram);
    let json = fake_timed(&plan, 0, |_| 3 * MS);
    let h = json.histograms.unwrap();
    assert_eq!(h.service.counts, buckets_of(&[3, 3, 3]));
    assert!(h.corrected.is_none() && json.start_ns.is_none());
}

/// `--client-scope shared`: one client for every worker, made once before the gate; its warm-up is still
/// K requests per worker. The fake client counts its requests: the shared one sees all of them.
#[test]
fn a_shared_client_serves_every_worker() {
    let plan = plan(&["--workers", "3", "--requests", "5", "--warmup", "2", "--client-scope", "shared"]);
    for threads in [true, false] {
        let driver = Arc::new(fake());
        struct Counting(Arc<Fake>);
        impl Driver for Counting {
            type Client = FakeClient;
            fn make_client(&self, o: &ClientOptions) -> Result<FakeClient, ClientError> {
                self.0.make_client(o)
            }
            async fn get(&self, c: &FakeClient, _url: &str) -> Result<(u16, u64), ClientError> {
                c.next.fetch_add(1, Ordering::Relaxed);
                Ok((200, 1))
            }
            async fn send(
                &self,
                _c: &FakeClient,
                _m: Method,
                _url: &str,
                _body: Outgoing,
                _answer: &mut Answer<'_>,
            ) -> Result<u16, ClientError> {
                unreachable!("GET only")
            }
            fn protocol(&self, c: &FakeClient) -> Option<&'static str> {
                // the shared client has seen every worker's requests by the time a worker asks
                (c.next.load(Ordering::Relaxed) >= 3 * 2 + 5).then_some("HTTP/2")
            }
        }
        let group = match threads {
            true => run_threads(Counting(driver.clone()), &plan, &co()).unwrap(),
            false => run_tasks(Counting(driver.clone()), &plan, &co()).unwrap(),
        };
        assert_eq!(driver.clients.load(Ordering::Relaxed), 1, "one client");
        let recs: Vec<_> = group.records.into_iter().map(|r| (r.protocol, r.into_json())).collect();
        assert!(recs.iter().all(|(p, j)| *p == Some("HTTP/2") && j.count == 5 && j.failure_count == 0));
    }
}

/// A driver that cannot do what is asked says so: `unsupported` exits 3 (and the run is not made).
#[test]
fn unsupported_is_exit_status_3() {
    struct NoH2;
    impl Driver for NoH2 {
        type Client = ();
        fn make_client(&self, _o: &ClientOptions) -> Result<(), ClientError> {
            Ok(())
        }
        async fn get(&self, _c: &(), _url: &str) -> Result<(u16, u64), ClientError> {
            Ok((200, 0))
        }
        async fn send(
            &self,
            _c: &(),
            _m: Method,
            _url: &str,
            _body: Outgoing,
            _answer: &mut Answer<'_>,
        ) -> Result<u16, ClientError> {
            Ok(200)
        }
        fn unsupported(&self, o: &Options) -> Option<String> {
            (o.http == crate::HttpVersion::Http2).then(|| "HTTP/2".to_owned())
        }
    }
    let parse = |args: &[&str]| Cli::try_parse_from([&["driver", "--url", "http://127.0.0.1:9/"][..], args].concat());
    let asked = parse(&["--http", "2"]).unwrap().o;
    assert_eq!(crate::unsupported(&NoH2, &asked), Err(std::process::ExitCode::from(crate::EXIT_UNSUPPORTED)));
    assert_eq!(crate::unsupported(&NoH2, &parse(&[]).unwrap().o), Ok(()));
}

/// `--phases`: each worker sums the phases of its successful timed requests (not the warm-up's, not a failure's:
/// a 500, a timeout, an upload's wrong answer) under the driver's keys, samples or histograms, in both modes;
/// without the flag, or with a driver that records none, there are none.
#[test]
fn phases_are_summed_over_the_successful_requests() {
    const KEYS: [&str; 3] = ["connect+tls", "send+wait", "receive"];
    fn phases() -> Phases {
        Phases { connect: 1, send_wait: 10, receive: 100, ..Phases::default() }
    }
    struct Phased(Fake);
    impl Driver for Phased {
        type Client = FakeClient;
        fn make_client(&self, o: &ClientOptions) -> Result<FakeClient, ClientError> {
            self.0.make_client(o)
        }
        fn get(&self, c: &FakeClient, url: &str) -> impl Future<Output = Result<(u16, u64), ClientError>> + Send {
            self.0.get(c, url)
        }
        fn send(
            &self,
            c: &FakeClient,
            m: Method,
            url: &str,
            body: Outgoing,
            answer: &mut Answer<'_>,
        ) -> impl Future<Output = Result<u16, ClientError>> + Send {
            self.0.send(c, m, url, body, answer)
        }
        fn phase_keys(&self, _plan: &Plan) -> Vec<&'static str> {
            KEYS.to_vec()
        }
        async fn get_phases(&self, c: &FakeClient, _url: &str) -> Result<(u16, u64, Phases), ClientError> {
            tokio::task::yield_now().await;
            answer_of(c).map(|(s, n)| (s, n, phases()))
        }
        async fn send_phases(
            &self,
            c: &FakeClient,
            m: Method,
            _url: &str,
            body: Outgoing,
            answer: &mut Answer<'_>,
        ) -> Result<(u16, Phases), ClientError> {
            send_answer(c, m, body, answer).map(|s| (s, phases()))
        }
    }
    let runs: [&[&str]; 3] = [
        &["--requests", "20"],
        &["--requests", "20", "--record", "histogram"],
        &["--method", "POST", "--body-size", "3", "--requests", "6"],
    ];
    for args in runs {
        let with = plan(&[&["--workers", "2", "--warmup", "2", "--phases"][..], args].concat());
        let groups =
            [run_threads(Phased(fake()), &with, &co()).unwrap(), run_tasks(Phased(fake()), &with, &co()).unwrap()];
        for group in groups {
            assert_eq!(group.phase_keys.as_deref(), Some(&KEYS[..]), "{args:?}");
            for r in group.records {
                let json = r.into_json();
                let ok = json.count - json.failure_count;
                assert!(ok > 0 && json.failure_count > 0, "{args:?}: both kinds");
                let p = json.phases.expect("phases");
                assert_eq!(p.count, ok, "{args:?}");
                assert_eq!(p.sum_ns, [("connect+tls", ok), ("send+wait", 10 * ok), ("receive", 100 * ok)], "{args:?}");
                if let Some(latencies) = json.latencies_ns {
                    let failed: std::collections::HashSet<u32> = json.failures.iter().map(|f| f.index).collect();
                    let of_ok = latencies.iter().enumerate().filter(|(k, _)| !failed.contains(&(*k as u32)));
                    assert_eq!(p.latency_ns, of_ok.map(|(_, l)| l).sum::<u64>(), "{args:?}");
                }
            }
        }
        let without = plan(&[&["--workers", "2", "--warmup", "2"][..], args].concat());
        let group = run_threads(Phased(fake()), &without, &co()).unwrap();
        assert!(group.phase_keys.is_none() && group.records.into_iter().all(|r| r.into_json().phases.is_none()));
    }
    let group = run_tasks(AsyncFake(fake()), &plan(&["--phases"]), &co()).unwrap();
    assert!(group.phase_keys.is_none() && group.records.into_iter().all(|r| r.into_json().phases.is_none()));
}
