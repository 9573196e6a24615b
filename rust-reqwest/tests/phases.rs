//! reqwest-bench's phases (src/phases.rs) against a TLS server of tests/support that waits X ms before the
//! response head and Y ms between the head and the body: `send+wait` is X and `receive` Y within 10% + 1 ms;
//! `connect+tls` is non-zero on a new TLS connection and 0 on a reused one; the blocking and the async client;
//! a host name's key; a client built without `ClientOptions::phases` does not time its connections.

use crate::support;

use std::io::{BufReader, Write};
use std::time::Duration;

use reqwest_bench::phases::Layout;
use reqwest_bench::{BlockingClient, Client, ClientOptions, Phases};
use support::timing::{attempts, Misses};
use support::{read_request, server_config, tls_server, Ca, Tls, IO_LIMIT};

const HEAD_MS: u64 = 100;
const BODY_MS: u64 = 60;
const BODY: &str = "hello, phases";

/// Keep-alive: each request's head after `HEAD_MS`, its body `BODY_MS` after the head (two writes, each flushed:
/// a TLS record, a TCP segment of its own; without Nagle, which would hold the body back until the client's
/// delayed ACK of the head).
fn slow(r: &mut BufReader<Tls>) {
    let _ = r.get_mut().sock.set_nodelay(true);
    while read_request(r).is_some() {
        std::thread::sleep(Duration::from_millis(HEAD_MS));
        let tls = r.get_mut();
        let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", BODY.len());
        if tls.write_all(head.as_bytes()).and_then(|()| tls.flush()).is_err() {
            return;
        }
        std::thread::sleep(Duration::from_millis(BODY_MS));
        if tls.write_all(BODY.as_bytes()).and_then(|()| tls.flush()).is_err() {
            return;
        }
    }
}

fn check(m: &mut Misses, p: &Phases, new_connection: bool, what: &str) {
    m.about(p.send_wait as f64, HEAD_MS as f64, format_args!("{what}: send+wait {p:?}"));
    m.about(p.receive as f64, BODY_MS as f64, format_args!("{what}: receive {p:?}"));
    assert_eq!(p.connect > 0, new_connection, "{what}: connect+tls {p:?}");
}

fn options(ca: &Ca) -> ClientOptions {
    ClientOptions { tls: ca.trust(), phases: true, ..ClientOptions::new(IO_LIMIT) }
}

#[test]
fn blocking_client_phases_follow_the_servers_delays() {
    attempts(|m| {
        let ca = Ca::new("phases-blocking");
        let (port, seen) =
            tls_server(server_config(ca.leaf(&["localhost", "127.0.0.1"], false), &[&rustls::version::TLS13]), 4, slow);
        let c = BlockingClient::with_options(&options(&ca)).unwrap();
        let url = format!("https://127.0.0.1:{port}/");
        for (i, new_connection) in [true, false, false].into_iter().enumerate() {
            let (status, n, p) = c.get_phases(&url, || false).unwrap();
            assert_eq!((status, n), (200, BODY.len() as u64));
            check(m, &p, new_connection, &format!("request {i}"));
            assert_eq!(p.layout, Layout::default());
            let keys: Vec<_> = p.entries().map(|(k, _)| k).collect();
            assert_eq!(keys, ["connect+tls", "send+wait", "receive"]);
        }
        assert_eq!(seen.connections.load(std::sync::atomic::Ordering::SeqCst), 1);
        // by name: its resolution is in the connection's time
        let (_, _, p) = c.get_phases(&format!("https://localhost:{port}/"), || false).unwrap();
        check(m, &p, true, "localhost");
        assert_eq!(p.entries().next().map(|(k, _)| k), Some("dns+connect+tls"));
        // the plain get records nothing and still works on the pool
        assert_eq!(c.get(&url, || false).unwrap(), (200, BODY.len() as u64));
    });
}

#[test]
fn async_client_phases_follow_the_servers_delays() {
    attempts(|m| {
        let ca = Ca::new("phases-async");
        let (port, _) = tls_server(server_config(ca.leaf(&["127.0.0.1"], false), &[&rustls::version::TLS13]), 4, slow);
        // (current-thread: on a multi-thread runtime the next request may start before the connection is back in
        // the pool, and open another one)
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let url = format!("https://127.0.0.1:{port}/");
        rt.block_on(async {
            let c = Client::with_options(&options(&ca)).unwrap();
            let (_, _, first) = c.get_phases(&url).await.unwrap();
            check(m, &first, true, "first");
            let (_, _, second) = c.get_phases(&url).await.unwrap();
            check(m, &second, false, "second");
            // the whole exchange and body, phases and all, within what the caller measured
            let started = std::time::Instant::now();
            let (_, _, third) = c.get_phases(&url).await.unwrap();
            let took = started.elapsed().as_nanos() as u64;
            assert!(third.connect + third.send_wait + third.receive <= took, "{third:?} in {took} ns");
        });
    });
}

/// Without `ClientOptions::phases` the connector is reqwest's own: a new connection's time is not told apart (it
/// is inside `send_wait`, which the contract's driver never reports that way: it sets the option with --phases).
#[test]
fn without_the_option_connections_are_not_timed() {
    attempts(|m| {
        let ca = Ca::new("phases-off");
        let (port, _) = tls_server(server_config(ca.leaf(&["127.0.0.1"], false), &[&rustls::version::TLS13]), 2, slow);
        let c = BlockingClient::with_options(&ClientOptions { phases: false, ..options(&ca) }).unwrap();
        let (_, _, p) = c.get_phases(&format!("https://127.0.0.1:{port}/"), || false).unwrap();
        assert_eq!(p.connect, 0);
        assert!(p.send_wait >= HEAD_MS * 1_000_000, "{p:?}");
        m.about(p.receive as f64, BODY_MS as f64, format_args!("receive {p:?}"));
    });
}
