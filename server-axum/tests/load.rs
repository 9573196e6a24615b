//! Load test: the real binary holds 1000 concurrent keep-alive connections with zero errors.
//!
//! The server is started with its soft RLIMIT_NOFILE lowered to 256, so it only passes if the
//! server lifts that limit itself at startup (`raise_nofile_limit`). All 1000 connections are
//! established first and every one of them is answered while all are open (a barrier after
//! each connection's first request); then each sends the rest of its requests, interleaved
//! with the others. Everything is bounded by `TOTAL_TIMEOUT`.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{nofile_limits, spawn_server};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::{Barrier, Semaphore};

const CONNECTIONS: usize = 1000;
/// Requests per connection of `GET /` in phase 1 (the first one before the barrier).
const REQUESTS: usize = 20;
/// Requests per connection in phase 2 (mixed); every 10th connection asks `/bytes/65536`.
const MIXED_REQUESTS: usize = 5;
const BIG: usize = 65_536;
/// Soft NOFILE limit the server is started with (the server must raise it itself).
const SERVER_SOFT_NOFILE: u64 = 256;
const TOTAL_TIMEOUT: Duration = Duration::from_secs(60);
/// Upper bound for one connect or one request (so a stuck one is reported, not just timed out).
const OP_TIMEOUT: Duration = Duration::from_secs(30);
/// Parallel connects in flight while establishing: all of them at once, like a benchmark
/// client starting 1000 workers (the server's listen backlog must absorb the burst).
const CONNECT_PARALLELISM: usize = CONNECTIONS;
/// A connect this slow on loopback means a dropped SYN (accept queue overflow) that was
/// retransmitted after the kernel's 1 s initial RTO.
const SLOW_CONNECT: Duration = Duration::from_millis(900);

struct Conn {
    reader: BufReader<TcpStream>,
    line: String,
}

impl Conn {
    /// One `GET path`; returns (status, body).
    async fn get(&mut self, path: &str) -> Result<(u16, Vec<u8>), String> {
        let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n");
        let fut = async {
            self.reader.get_mut().write_all(req.as_bytes()).await.map_err(|e| format!("write: {e}"))?;
            self.line.clear();
            if self.reader.read_line(&mut self.line).await.map_err(|e| format!("read: {e}"))? == 0 {
                return Err("connection closed before status line".to_owned());
            }
            let status: u16 = self
                .line
                .strip_prefix("HTTP/1.1 ")
                .and_then(|r| r.get(..3))
                .and_then(|c| c.parse().ok())
                .ok_or_else(|| format!("bad status line {:?}", self.line))?;
            let mut len = None;
            loop {
                self.line.clear();
                if self.reader.read_line(&mut self.line).await.map_err(|e| format!("read: {e}"))? == 0 {
                    return Err("EOF inside headers".to_owned());
                }
                let h = self.line.trim_end();
                if h.is_empty() {
                    break;
                }
                if let Some((k, v)) = h.split_once(':') {
                    if k.eq_ignore_ascii_case("content-length") {
                        len = Some(v.trim().parse::<usize>().map_err(|e| format!("content-length: {e}"))?);
                    }
                }
            }
            let len = len.ok_or("no content-length")?;
            let mut body = vec![0; len];
            self.reader.read_exact(&mut body).await.map_err(|e| format!("read body: {e}"))?;
            Ok((status, body))
        };
        tokio::time::timeout(OP_TIMEOUT, fut)
            .await
            .map_err(|_| format!("GET {path}: no response within {OP_TIMEOUT:?}"))?
    }
}

fn check(res: Result<(u16, Vec<u8>), String>, path: &str) -> Result<(), String> {
    let (status, body) = res?;
    if status != 200 {
        return Err(format!("GET {path}: status {status}"));
    }
    let ok = if path == "/" {
        body == b"Hello, World!"
    } else {
        body.len() == BIG && body.iter().enumerate().all(|(i, b)| *b == clientbench_server::pattern_byte(i))
    };
    if !ok {
        return Err(format!("GET {path}: wrong body ({} bytes)", body.len()));
    }
    Ok(())
}

#[cfg(target_os = "linux")]
fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count()).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holds_1000_keep_alive_connections() {
    // This process needs 1000+ descriptors too.
    let soft = clientbench_server::raise_nofile_limit().expect("raise own RLIMIT_NOFILE");
    let (_, hard) = nofile_limits();
    assert!(
        soft >= CONNECTIONS as u64 + 100,
        "open-file hard limit {hard} is too low for {CONNECTIONS} connections (raise `ulimit -Hn`)"
    );

    let mut server = spawn_server(&[], Some(SERVER_SOFT_NOFILE));
    let addr = server.addr;
    let pid = server.child.id();
    let start = Instant::now();

    let run = async {
        // Phase 0: establish all connections.
        let gate = Arc::new(Semaphore::new(CONNECT_PARALLELISM));
        let mut connecting = Vec::with_capacity(CONNECTIONS);
        for _ in 0..CONNECTIONS {
            let gate = Arc::clone(&gate);
            connecting.push(tokio::spawn(async move {
                let _permit = gate.acquire_owned().await.unwrap();
                let t0 = Instant::now();
                let s = tokio::time::timeout(OP_TIMEOUT, TcpStream::connect(addr))
                    .await
                    .map_err(|_| "connect timed out".to_owned())?
                    .map_err(|e| format!("connect: {e}"))?;
                s.set_nodelay(true).map_err(|e| format!("nodelay: {e}"))?;
                Ok::<_, String>((s, t0.elapsed()))
            }));
        }
        let mut streams = Vec::with_capacity(CONNECTIONS);
        let mut errors = Vec::new();
        let mut slow = 0;
        let mut max_connect = Duration::ZERO;
        for h in connecting {
            match h.await.expect("connect task") {
                Ok((s, took)) => {
                    streams.push(s);
                    slow += usize::from(took >= SLOW_CONNECT);
                    max_connect = max_connect.max(took);
                }
                Err(e) => errors.push(e),
            }
        }
        assert!(errors.is_empty(), "{} connect errors, first: {:?}", errors.len(), errors.first());
        assert_eq!(streams.len(), CONNECTIONS);
        let connected_at = start.elapsed();
        // Only meaningful if the kernel lets the server have a backlog >= 1000.
        let somaxconn: u32 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        if somaxconn >= CONNECTIONS as u32 {
            assert_eq!(
                slow, 0,
                "{slow} connects took >= {SLOW_CONNECT:?} (max {max_connect:?}): SYNs dropped, \
                 listen backlog too small?"
            );
        } else if slow > 0 {
            eprintln!("load: {slow} slow connects (net.core.somaxconn = {somaxconn} < {CONNECTIONS})");
        }

        // Phases 1 and 2: every connection in its own task; barriers (with this task as the
        // extra party) make sure all 1000 are open and served at the same time.
        let first_done = Arc::new(Barrier::new(CONNECTIONS + 1));
        let go_on = Arc::new(Barrier::new(CONNECTIONS + 1));
        let phase1_done = Arc::new(Barrier::new(CONNECTIONS + 1));
        let ok = Arc::new(AtomicUsize::new(0));
        let ok_mixed = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::with_capacity(CONNECTIONS);
        for (i, s) in streams.into_iter().enumerate() {
            let (first_done, go_on, phase1_done) =
                (Arc::clone(&first_done), Arc::clone(&go_on), Arc::clone(&phase1_done));
            let (ok, ok_mixed) = (Arc::clone(&ok), Arc::clone(&ok_mixed));
            tasks.push(tokio::spawn(async move {
                let mut c = Conn { reader: BufReader::new(s), line: String::new() };
                let mut errs = Vec::new();
                let mut alive = true;
                let mut one = |res: Result<(), String>, counter: &AtomicUsize, alive: &mut bool| match res {
                    Ok(()) => {
                        counter.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        errs.push(format!("conn {i}: {e}"));
                        *alive = false; // framing is lost: stop using this connection
                    }
                };
                let r = check(c.get("/").await, "/");
                one(r, &ok, &mut alive);
                first_done.wait().await;
                go_on.wait().await;
                for _ in 1..REQUESTS {
                    if !alive {
                        break;
                    }
                    let r = check(c.get("/").await, "/");
                    one(r, &ok, &mut alive);
                }
                phase1_done.wait().await;
                for k in 0..MIXED_REQUESTS {
                    if !alive {
                        break;
                    }
                    let path = if i % 10 == 0 && k % 2 == 0 { "/bytes/65536" } else { "/" };
                    let r = check(c.get(path).await, path);
                    one(r, &ok_mixed, &mut alive);
                }
                // Hand the connection back so it stays open until the end of the test.
                (c, errs)
            }));
        }

        first_done.wait().await;
        let all_open_at = start.elapsed();
        let fds = {
            #[cfg(target_os = "linux")]
            {
                open_fds(pid)
            }
            #[cfg(not(target_os = "linux"))]
            {
                let _ = pid;
                usize::MAX
            }
        };
        assert!(fds >= CONNECTIONS, "server has only {fds} open descriptors while {CONNECTIONS} connections are open");
        go_on.wait().await;
        phase1_done.wait().await;
        let phase1_at = start.elapsed();

        let mut conns = Vec::with_capacity(CONNECTIONS);
        let mut errors = Vec::new();
        for t in tasks {
            let (c, e) = t.await.expect("connection task panicked");
            conns.push(c);
            errors.extend(e);
        }
        eprintln!(
            "load: {CONNECTIONS} connected in {connected_at:?} (slowest {max_connect:?}), all answered once at {all_open_at:?} \
             (server fds: {fds}), phase 1 done at {phase1_at:?}, phase 2 done at {:?}",
            start.elapsed()
        );
        (conns, errors, ok.load(Ordering::Relaxed), ok_mixed.load(Ordering::Relaxed))
    };

    let (conns, errors, ok, ok_mixed) = tokio::time::timeout(TOTAL_TIMEOUT, run)
        .await
        .unwrap_or_else(|_| panic!("load test did not finish within {TOTAL_TIMEOUT:?}"));

    assert!(errors.is_empty(), "{} errors, first ones: {:#?}", errors.len(), &errors[..errors.len().min(5)]);
    assert_eq!(ok, CONNECTIONS * REQUESTS, "phase 1 successful responses");
    assert_eq!(ok_mixed, CONNECTIONS * MIXED_REQUESTS, "phase 2 successful responses");

    // Still alive and answering, with all 1000 connections still open.
    assert_eq!(conns.len(), CONNECTIONS);
    tokio::task::block_in_place(|| server.assert_healthy());
    server.assert_no_panic();

    // SIGTERM with 1000 idle keep-alive connections open: clean exit with status 0.
    let (status, stderr) = tokio::task::block_in_place(|| server.terminate());
    drop(conns);
    assert!(status.success(), "exit status {status:?}; stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "server panicked:\n{stderr}");
    assert!(!stderr.contains("could not raise"), "server could not raise its open-file limit:\n{stderr}");
}
