//! Process-level tests: run the real binary, talk to it over raw TCP on 127.0.0.1.
//! Every wait is bounded; child processes are killed on drop.

use crate::common;

use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use common::{connect, read_response, run_to_completion, spawn_server, RawResponse};

/// One `GET` on a keep-alive connection; the server must answer it.
fn get(stream: &TcpStream, path: &str) -> RawResponse {
    common::get(stream, path).expect("GET")
}

#[test]
fn listening_line_format() {
    let server = spawn_server(&[], None);
    let port = server.addr.port();
    let expected = format!(
        "{{\"event\":\"listening\",\"url\":\"http://127.0.0.1:{port}\",\"urls\":[\"http://127.0.0.1:{port}\"],\"http3\":false}}\n"
    );
    assert_eq!(server.line, expected);
    assert_ne!(server.addr.port(), 0);
}

fn serve_then_signal(sig: libc::c_int, extra: &[&str]) {
    let mut server = spawn_server(extra, None);
    let stream = connect(server.addr);
    // Two requests on one keep-alive connection.
    for _ in 0..2 {
        let resp = get(&stream, "/");
        assert_eq!(resp.status_line, "HTTP/1.1 200 OK");
        assert_eq!(resp.header("content-length"), Some("13"));
        assert_eq!(resp.header("content-type"), Some("text/plain; charset=utf-8"));
        assert_eq!(resp.body, b"Hello, World!");
    }
    let resp = get(&stream, "/bytes/100");
    assert_eq!(resp.body.len(), 100);

    // The idle keep-alive connection stays open while we signal.
    let status = server.signal_and_wait(sig, Duration::from_secs(5)).expect("server did not exit within 5 s");
    assert!(status.success(), "exit status {status:?}");

    // Nothing but the listening line on stdout.
    assert_eq!(server.stdout_rest(), "", "unexpected extra stdout");
    drop(stream);
}

#[test]
fn sigterm_exits_zero() {
    serve_then_signal(libc::SIGTERM, &[]);
}

#[test]
fn sigint_exits_zero() {
    serve_then_signal(libc::SIGINT, &["--threads", "1"]);
}

#[test]
fn sigterm_with_request_in_flight_exits_within_grace() {
    let mut server = spawn_server(&[], None);
    let mut stream = connect(server.addr);
    stream.write_all(b"GET /delay/10000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    thread::sleep(Duration::from_millis(200)); // let the request reach the handler
    let start = Instant::now();
    let status = server.signal_and_wait(libc::SIGTERM, Duration::from_secs(5)).expect("server did not exit within 5 s");
    assert!(status.success(), "exit status {status:?}");
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(1500), "exited too early: {took:?}");
    assert!(took < Duration::from_secs(4), "grace period too long: {took:?}");
}

#[test]
fn close_endpoint_closes_connection() {
    let server = spawn_server(&[], None);
    let stream = connect(server.addr);
    let mut w = &stream;
    w.write_all(b"GET /close HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut reader = BufReader::new(&stream);
    let resp = read_response(&mut reader).expect("read /close response").expect("a response before the close");
    assert_eq!(resp.status_line, "HTTP/1.1 200 OK");
    assert_eq!(resp.header("connection"), Some("close"));
    assert_eq!(resp.body, b"Hello, World!");
    // The server must close its side: the next read sees EOF (not a timeout).
    let mut buf = [0u8; 16];
    let n = reader.read(&mut buf).expect("read after /close (timeout = not closed)");
    assert_eq!(n, 0, "expected EOF after /close response");
}

#[test]
fn keep_alive_by_default() {
    let server = spawn_server(&[], None);
    let stream = connect(server.addr);
    let resp = get(&stream, "/health");
    assert_eq!(resp.body, b"ok");
    assert_eq!(resp.header("connection"), None);
    let resp = get(&stream, "/status/503");
    assert_eq!(resp.status_line, "HTTP/1.1 503 Service Unavailable");
    assert_eq!(resp.body, b"status 503");
    // Bodiless statuses must not break framing of the next response.
    for code in [204, 205, 304] {
        let resp = get(&stream, &format!("/status/{code}"));
        assert!(resp.status_line.starts_with(&format!("HTTP/1.1 {code} ")));
        assert!(resp.body.is_empty());
    }
    assert_eq!(get(&stream, "/").body, b"Hello, World!");
}

#[test]
fn port_in_use_fails_cleanly() {
    let blocker = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = blocker.local_addr().unwrap().port().to_string();
    let (status, out, err) = run_to_completion(&["--host", "127.0.0.1", "--port", &port]);
    assert_eq!(status.code(), Some(1), "stderr: {err}");
    assert!(!err.trim().is_empty(), "expected an error message on stderr");
    assert_eq!(err.trim().lines().count(), 1, "one-line error expected: {err}");
    assert!(!err.contains("panicked"), "panic on bind failure: {err}");
    assert_eq!(out, "", "nothing on stdout when bind fails");
    drop(blocker);
}

#[test]
fn help_and_bad_flags() {
    let (status, out, _) = run_to_completion(&["--help"]);
    assert!(status.success());
    for flag in ["--host", "--port", "--threads", "--tls", "--tls-dir", "--tls-cert", "--tls-key", "--tls-version"] {
        assert!(out.contains(flag), "--help lacks {flag}: {out}");
    }
    let (status, _, err) = run_to_completion(&["--no-such-flag"]);
    assert_eq!(status.code(), Some(2), "{err}");
    let (status, _, err) = run_to_completion(&["--port", "notaport"]);
    assert_eq!(status.code(), Some(2), "{err}");
    let (status, _, err) = run_to_completion(&["--threads", "0"]);
    assert_eq!(status.code(), Some(2), "{err}");
    // TLS flags only go with --tls, --tls-cert with --tls-key, and the version is 1.2 or 1.3.
    for bad in [
        &["--tls-dir", "/tmp"][..],
        &["--tls-version", "1.3"],
        &["--tls", "--tls-cert", "c.pem"],
        &["--tls", "--tls-key", "k.pem"],
        &["--tls", "--tls-version", "1.1"],
        &["--tls", "--tls-dir", "/tmp", "--tls-cert", "c.pem", "--tls-key", "k.pem"],
    ] {
        let (status, out, err) = run_to_completion(bad);
        assert_eq!(status.code(), Some(2), "{bad:?}: {err}");
        assert_eq!(out, "", "{bad:?}");
    }
}

/// `GET /stats` on plain HTTP: every accepted connection counts (the one /stats came on included), the
/// TLS counters stay 0; keep-alive requests on one connection count it once; every request counts (the
/// /stats request itself included), a connection that sends nothing is neither HTTP/1.1 nor HTTP/2.
#[test]
fn stats_count_plain_connections() {
    let server = spawn_server(&[], None);
    for _ in 0..3 {
        let stream = connect(server.addr);
        for _ in 0..4 {
            assert_eq!(get(&stream, "/").status, 200);
        }
    }
    drop(connect(server.addr));
    let stream = connect(server.addr);
    let resp = get(&stream, "/stats");
    assert_eq!(resp.header("content-type"), Some("application/json"));
    let expected = |requests: u32| {
        format!(
            r#"{{"connections":5,"tls_handshakes":0,"tls_resumed":0,"http1_connections":4,"h2_connections":0,"requests":{requests},"h2_requests":0,"quic_connections":0,"quic_handshakes":0,"h3_requests":0,"udp_recv_buffer":null,"udp_send_buffer":null,"origins":1,"origin_requests":{{"127.0.0.1":{requests}}}}}"#
        )
    };
    assert_eq!(String::from_utf8(resp.body).unwrap(), expected(13));
    // The same connection again: no new connection, one more request.
    let body = get(&stream, "/stats").body;
    assert_eq!(String::from_utf8(body).unwrap(), expected(14));
}
