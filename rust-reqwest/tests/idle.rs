//! reqwest-bench against a keep-alive server that closes idle connections (as nginx's `keepalive_timeout`): every
//! method, blocking and on both runtimes, gets its answer after the close, reaching the server exactly once, and
//! GET needs no re-send for it. Every server thread and every request is bounded in time.

use std::io::{BufReader, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use bytes::Bytes;
use reqwest_bench::{BlockingClient, ClientError};

use crate::client::{client, rt, serve};
use crate::support::{ok_response, read_request};

/// What [`idle_timeout_server`] saw: every answered request as `<METHOD> <body>`, and how many requests
/// arrived on a connection after the server had already closed it (sent its FIN).
#[derive(Default)]
struct IdleLog {
    answered: std::sync::Mutex<Vec<String>>,
    late: AtomicUsize,
}

/// A keep-alive server that answers every request with `<METHOD> <body>` and closes a connection once it
/// has been idle for 200 ms, like nginx's `keepalive_timeout`. It closes only its sending side (FIN) and
/// then listens on for a while: a request that still arrives was sent on a connection the client had
/// been told was closed, i.e. it reached the server and was left unanswered (the client can only retry
/// it blindly). A correct client never sends one.
fn idle_timeout_server() -> (String, Arc<AtomicUsize>, Arc<IdleLog>) {
    let log = Arc::new(IdleLog::default());
    let seen = log.clone();
    let (url, count) = serve(64, move |stream, _| {
        let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
        let mut r = BufReader::new(stream);
        while let Some((head, body)) = read_request(&mut r) {
            let method = head.split(' ').next().unwrap_or_default().to_string();
            let line = format!("{method} {}", String::from_utf8_lossy(&body));
            seen.answered.lock().expect("log").push(line.clone());
            let _ = r.get_mut().write_all(ok_response(&line).as_bytes());
        }
        // idle for 200 ms (or EOF): close our side, then count what still arrives
        let _ = r.get_ref().shutdown(std::net::Shutdown::Write);
        let _ = r.get_ref().set_read_timeout(Some(Duration::from_secs(1)));
        while read_request(&mut r).is_some() {
            seen.late.fetch_add(1, Ordering::SeqCst);
        }
    });
    (url, count, log)
}

const IDLE_METHODS: [&str; 4] = ["GET", "POST", "PUT", "PATCH"];
/// Longer than the server's idle timeout: the pooled connection is closed by then.
const IDLE_PAUSE: Duration = Duration::from_millis(500);

/// Each method, twice on a fresh or reused connection, then after a pause in which the server closed
/// the idle connection: every request succeeds and reaches the server exactly once.
fn idle_close_round_trip(mut send: impl FnMut(&str, &str, Bytes) -> Result<reqwest_bench::Response, ClientError>) {
    let (url, count, log) = idle_timeout_server();
    let mut expected = Vec::new();
    for (round, method) in IDLE_METHODS.iter().enumerate() {
        for attempt in 0..2 {
            let body = format!("{method}-{round}-{attempt}");
            let resp = send(method, &url, Bytes::from(body.clone()))
                .unwrap_or_else(|e| panic!("{method} after the server closed the idle connection: {e}"));
            let line = format!("{method} {body}");
            assert_eq!((resp.status, &resp.body[..]), (200, line.as_bytes()), "{method}");
            expected.push(line);
        }
        thread::sleep(IDLE_PAUSE);
    }
    assert_eq!(*log.answered.lock().expect("log"), expected, "every request reached the server exactly once");
    assert_eq!(log.late.load(Ordering::SeqCst), 0, "no request was sent on a connection the server had closed");
    // (at least: on a multi-thread runtime a request can start before the previous one's connection is
    // back in the pool, and then opens another one)
    assert!(count.load(Ordering::SeqCst) >= IDLE_METHODS.len(), "a new connection per round");
}

#[test]
fn idle_closed_connection_blocking_every_method_succeeds() {
    let c = BlockingClient::new(Duration::from_secs(5)).expect("client");
    idle_close_round_trip(|method, url, body| c.fetch(method, url, &[], Some(body), || false));
}

#[test]
fn idle_closed_connection_async_current_thread_every_method_succeeds() {
    // The caller's current-thread runtime only runs inside block_on: between requests nobody reads the
    // server's FIN, exactly as in BlockingClient.
    let c = client(Duration::from_secs(5));
    let rt = rt();
    idle_close_round_trip(|method, url, body| rt.block_on(c.fetch(method, url, &[], Some(body))));
}

#[test]
fn idle_closed_connection_async_multi_thread_every_method_succeeds() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime");
    let c = {
        let _guard = rt.enter();
        client(Duration::from_secs(5))
    };
    idle_close_round_trip(|method, url, body| rt.block_on(c.fetch(method, url, &[], Some(body))));
}

#[test]
fn idle_closed_connection_get_succeeds_without_retry() {
    // The idle check alone must keep GET off the closed connection: the idempotent re-send would hide
    // a failure of it.
    let (url, count, log) = idle_timeout_server();
    let c = BlockingClient::new(Duration::from_secs(5)).expect("client");
    for _ in 0..3 {
        assert_eq!(c.get(&url, || false).expect("get"), (200, 4));
        thread::sleep(IDLE_PAUSE);
    }
    assert_eq!(log.answered.lock().expect("log").len(), 3);
    assert_eq!(log.late.load(Ordering::SeqCst), 0, "no GET was sent on a closed connection (and re-sent)");
    assert_eq!(count.load(Ordering::SeqCst), 3, "no connection was opened for a re-send");
}
