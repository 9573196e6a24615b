//! reqwest-bench against small raw-socket servers: error classification, body reading, keep-alive
//! reconnects, cancellation. Every server thread and every request is bounded in time.

use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use reqwest_bench::{parse_url, BlockingClient, Client, ClientError, ConnectionKind, FAILURE_CLASSES};

use crate::support::{ok_response, read_request};

const IO_LIMIT: Duration = Duration::from_secs(10);

/// A raw HTTP server on 127.0.0.1: `handle(stream, connection_index)` runs on its own thread for each
/// of the first `max_conns` connections. Returns the base URL and the accepted-connection counter.
pub(crate) fn serve<F>(max_conns: usize, handle: F) -> (String, Arc<AtomicUsize>)
where
    F: Fn(TcpStream, usize) + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    let handle = Arc::new(handle);
    thread::spawn(move || {
        for i in 0..max_conns {
            let Ok((stream, _)) = listener.accept() else { return };
            counter.fetch_add(1, Ordering::SeqCst);
            let _ = stream.set_read_timeout(Some(IO_LIMIT));
            let _ = stream.set_write_timeout(Some(IO_LIMIT));
            let h = handle.clone();
            thread::spawn(move || h(stream, i));
        }
    });
    (url, count)
}

pub(crate) fn client(timeout: Duration) -> Client {
    Client::new(timeout).expect("client")
}

pub(crate) fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

#[test]
fn invalid_urls_are_rejected_before_any_io() {
    for url in [
        "",
        "https://",
        "https:///path",
        "https:example.com",
        "https://127.0.0.1:0/",
        "wss://127.0.0.1/",
        "garbage",
        "http://",
        "http:///path",
        "http:example.com",
        "http:/example.com/",
        "://127.0.0.1/",
        "file:///etc/passwd",
        "http://127.0.0.1:abc/",
        "http://127.0.0.1:-1/",
        "http://[::1/",
        "http://exa mple.com/",
        "ftp://127.0.0.1/",
        "http://127.0.0.1:99999/",
        "http://127.0.0.1:0/",
        "127.0.0.1:8080/",
        // a control character anywhere (the WHATWG parser would drop a tab, CR or LF and go elsewhere)
        "http://127.0.0.1:8080/a\r\nX-Injected: 1",
        "http://127.0.0.1:8080/a?q=\n",
        "http://127.0.0.1:8080/a\tb",
        "http://127.0.0.1:8080/a\0b",
        "http://127.0.0.1:8080/\x7f",
        "http://127.0.0.1\r:8080/",
        "\nhttp://127.0.0.1:8080/",
    ] {
        match parse_url(url) {
            Err(ClientError::InvalidUrl(msg)) => assert!(!msg.is_empty()),
            other => panic!("{url:?}: expected InvalidUrl, got {other:?}"),
        }
        let bc = BlockingClient::new(Duration::from_secs(1)).expect("client");
        assert!(matches!(bc.get(url, || false), Err(ClientError::InvalidUrl(_))), "{url:?}");
    }
    assert!(parse_url("http://127.0.0.1:8080/x?y=1").is_ok());
    assert!(parse_url("http://localhost/").is_ok());
    assert!(parse_url("HTTP://127.0.0.1").is_ok());
    assert!(parse_url(" http://[::1]:8080/x ").is_ok());
    assert!(parse_url("https://127.0.0.1:8443/x").is_ok());
    assert!(parse_url("HTTPS://localhost").is_ok());
}

#[test]
fn invalid_method_and_headers_are_invalid_request() {
    let bc = BlockingClient::new(Duration::from_secs(1)).expect("client");
    let url = "http://127.0.0.1:9/";
    let bad_method = bc.fetch("GE T", url, &[], None, || false);
    assert!(matches!(bad_method, Err(ClientError::InvalidRequest(_))), "{bad_method:?}");
    let bad_name = bc.fetch("GET", url, &[("bad name".into(), "x".into())], None, || false);
    assert!(matches!(bad_name, Err(ClientError::InvalidRequest(_))), "{bad_name:?}");
    let bad_value = bc.fetch("GET", url, &[("x".into(), "a\r\nb".into())], None, || false);
    assert!(matches!(bad_value, Err(ClientError::InvalidRequest(_))), "{bad_value:?}");
}

#[test]
fn refused_is_connection_refused() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    }; // listener dropped: nobody listens there now
    let c = client(Duration::from_secs(5));
    let err = rt().block_on(c.get(&format!("http://127.0.0.1:{port}/"))).expect_err("must fail");
    match &err {
        ClientError::Connection(ConnectionKind::Refused, msg) => assert!(msg.contains("refused"), "{msg}"),
        other => panic!("expected Connection(Refused), got {other:?}"),
    }
}

#[test]
fn unresolvable_host_is_connection() {
    let c = client(Duration::from_secs(5));
    // .invalid is reserved (RFC 2606) and never resolves; the lookup stays local.
    let err = rt().block_on(c.get("http://no-such-host.invalid/")).expect_err("must fail");
    assert!(matches!(err, ClientError::Connection(..) | ClientError::Timeout(_)), "{err:?}");
}

#[test]
fn no_answer_is_timeout_within_bounds() {
    let (url, _) = serve(1, |stream, _| {
        let mut r = BufReader::new(stream);
        let _ = read_request(&mut r);
        thread::sleep(Duration::from_secs(3)); // never answers within the client's timeout
    });
    let c = client(Duration::from_millis(300));
    let t = Instant::now();
    let err = rt().block_on(c.get(&url)).expect_err("must time out");
    let took = t.elapsed();
    assert!(matches!(err, ClientError::Timeout(_)), "{err:?}");
    assert!(took >= Duration::from_millis(250) && took < Duration::from_secs(2), "{took:?}");
}

#[test]
fn garbage_status_line_is_protocol() {
    let (url, _) = serve(2, |stream, _| {
        let mut r = BufReader::new(stream);
        if read_request(&mut r).is_some() {
            let _ = r.get_mut().write_all(b"THIS IS NOT HTTP\r\n\r\n");
        }
        thread::sleep(Duration::from_millis(200));
    });
    let err = rt().block_on(client(Duration::from_secs(5)).get(&url)).expect_err("must fail");
    assert!(matches!(err, ClientError::Protocol(_)), "{err:?}");
}

#[test]
fn bad_chunked_framing_is_protocol() {
    let (url, _) = serve(1, |stream, _| {
        let mut r = BufReader::new(stream);
        if read_request(&mut r).is_some() {
            let _ =
                r.get_mut().write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n");
        }
        thread::sleep(Duration::from_millis(200));
    });
    let err = rt().block_on(client(Duration::from_secs(5)).get(&url)).expect_err("must fail");
    assert!(matches!(err, ClientError::Protocol(_)), "{err:?}");
}

/// A Content-Length response cut short by the server closing the connection is reported as
/// `Connection(Closed)` (hyper: "end of file before message length reached"), never retried, never
/// a success with a short body.
#[test]
fn close_mid_body_is_connection_closed() {
    let (url, count) = serve(2, |stream, _| {
        let mut r = BufReader::new(stream);
        if read_request(&mut r).is_some() {
            let _ = r.get_mut().write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly 22 of 100 bytes..");
        }
        // dropping the stream closes it mid-body
    });
    let err = rt().block_on(client(Duration::from_secs(5)).get(&url)).expect_err("must fail");
    assert!(matches!(err, ClientError::Connection(ConnectionKind::Closed, _)), "{err:?}");
    assert_eq!(count.load(Ordering::SeqCst), 1, "a partial response must not be retried");
}

#[test]
fn chunked_body_is_read_fully() {
    let (url, _) = serve(1, |stream, _| {
        let mut r = BufReader::new(stream);
        if read_request(&mut r).is_some() {
            let s = r.get_mut();
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
            for _ in 0..5 {
                let _ = s.write_all(format!("{:x}\r\n{}\r\n", 1000, "x".repeat(1000)).as_bytes());
                let _ = s.flush();
                thread::sleep(Duration::from_millis(20));
            }
            let _ = s.write_all(b"0\r\n\r\n");
        }
        thread::sleep(Duration::from_millis(200));
    });
    let (status, n) = rt().block_on(client(Duration::from_secs(5)).get(&url)).expect("get");
    assert_eq!((status, n), (200, 5000));
}

#[test]
fn non_2xx_is_returned_not_raised() {
    let (url, _) = serve(1, |stream, _| {
        let mut r = BufReader::new(stream);
        if read_request(&mut r).is_some() {
            let _ = r.get_mut().write_all(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 4\r\n\r\nbusy");
        }
        thread::sleep(Duration::from_millis(200));
    });
    let got = rt().block_on(client(Duration::from_secs(5)).get(&url)).expect("get");
    assert_eq!(got, (503, 4));
}

/// Answers every request on a connection (keep-alive) and closes the connection after it has been
/// idle for 100 ms, like a server's keep-alive timeout.
fn idle_closing_server() -> (String, Arc<AtomicUsize>) {
    serve(10, |stream, _| {
        let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
        let mut r = BufReader::new(stream);
        while read_request(&mut r).is_some() {
            let _ = r.get_mut().write_all(ok_response("hi").as_bytes());
        }
    })
}

#[test]
fn server_closing_idle_keepalive_async_next_get_succeeds() {
    let (url, count) = idle_closing_server();
    let c = client(Duration::from_secs(5));
    let rt = rt();
    assert_eq!(rt.block_on(c.get(&url)).expect("first"), (200, 2));
    assert_eq!(rt.block_on(c.get(&url)).expect("second (reused)"), (200, 2));
    assert_eq!(count.load(Ordering::SeqCst), 1, "keep-alive reuses the connection");
    thread::sleep(Duration::from_millis(300)); // the server closes the idle connection
    assert_eq!(rt.block_on(c.get(&url)).expect("after idle close"), (200, 2));
    assert_eq!(count.load(Ordering::SeqCst), 2);
}

#[test]
fn server_closing_idle_keepalive_blocking_next_get_succeeds() {
    let (url, count) = idle_closing_server();
    let c = BlockingClient::new(Duration::from_secs(5)).expect("client");
    for round in 0..3 {
        assert_eq!(c.get(&url, || false).expect("get"), (200, 2), "round {round}");
        assert_eq!(c.get(&url, || false).expect("get"), (200, 2), "round {round}");
        thread::sleep(Duration::from_millis(300));
    }
    assert_eq!(count.load(Ordering::SeqCst), 3);
}

/// The race the pool cannot see: the server takes the request on the kept-alive connection and closes
/// it without answering. An idempotent request is re-sent once on a new connection.
fn close_second_request_server() -> (String, Arc<AtomicUsize>) {
    serve(10, |stream, conn| {
        let mut r = BufReader::new(stream);
        if read_request(&mut r).is_some() {
            let _ = r.get_mut().write_all(ok_response("hi").as_bytes());
        }
        if conn == 0 {
            let _ = read_request(&mut r); // and close without answering
            return;
        }
        thread::sleep(Duration::from_millis(200));
    })
}

#[test]
fn request_on_stale_connection_is_retried_once_for_get() {
    let (url, count) = close_second_request_server();
    let c = client(Duration::from_secs(5));
    let rt = rt();
    assert_eq!(rt.block_on(c.get(&url)).expect("first"), (200, 2));
    assert_eq!(rt.block_on(c.get(&url)).expect("retried on a new connection"), (200, 2));
    assert_eq!(count.load(Ordering::SeqCst), 2);
}

#[test]
fn request_on_stale_connection_is_not_retried_for_post() {
    let (url, count) = close_second_request_server();
    let c = client(Duration::from_secs(5));
    let rt = rt();
    let first = rt.block_on(c.fetch("POST", &url, &[], Some("a".into()))).expect("first");
    assert_eq!(first.status, 200);
    let err = rt.block_on(c.fetch("POST", &url, &[], Some("b".into()))).expect_err("not retried");
    assert!(matches!(err, ClientError::Connection(..)), "{err:?}");
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

#[test]
fn retry_happens_at_most_once() {
    // Every connection takes the request and closes without answering.
    let (url, count) = serve(10, |stream, _| {
        let mut r = BufReader::new(stream);
        let _ = read_request(&mut r);
    });
    let err = rt().block_on(client(Duration::from_secs(5)).get(&url)).expect_err("never answered");
    assert!(matches!(err, ClientError::Connection(ConnectionKind::Closed, _)), "{err:?}");
    thread::sleep(Duration::from_millis(100));
    assert_eq!(count.load(Ordering::SeqCst), 2, "one attempt plus exactly one retry");
}

#[test]
fn fetch_sends_method_headers_body_and_returns_everything() {
    let (url, _) = serve(1, |stream, _| {
        let mut r = BufReader::new(stream);
        if let Some((head, body)) = read_request(&mut r) {
            let first = head.lines().next().unwrap_or_default().to_string();
            let has_header = head.to_ascii_lowercase().contains("x-test: yes");
            let reply = format!("{first}|{has_header}|{}", String::from_utf8_lossy(&body));
            let _ = r.get_mut().write_all(
                format!(
                    "HTTP/1.1 201 Created\r\nx-one: 1\r\nx-multi: a\r\nx-multi: b\r\ncontent-length: {}\r\n\r\n{}",
                    reply.len(),
                    reply
                )
                .as_bytes(),
            );
        }
        thread::sleep(Duration::from_millis(200));
    });
    let c = BlockingClient::new(Duration::from_secs(5)).expect("client");
    let resp = c
        .fetch("PUT", &format!("{url}/p?q=1"), &[("X-Test".into(), "yes".into())], Some("payload".into()), || false)
        .expect("fetch");
    assert_eq!(resp.status, 201);
    assert_eq!(&resp.body[..], b"PUT /p?q=1 HTTP/1.1|true|payload");
    assert!(resp.headers.contains(&("x-one".to_string(), "1".to_string())));
    let multi: Vec<_> = resp.headers.iter().filter(|(k, _)| k == "x-multi").map(|(_, v)| v.as_str()).collect();
    assert_eq!(multi, ["a", "b"]);
}

#[test]
fn blocking_cancel_returns_promptly() {
    let (url, _) = serve(1, |stream, _| {
        let mut r = BufReader::new(stream);
        let _ = read_request(&mut r);
        thread::sleep(Duration::from_secs(3));
    });
    let c = BlockingClient::new(Duration::from_secs(30)).expect("client");
    let t = Instant::now();
    let mut calls = 0;
    let err = c
        .get(&url, || {
            calls += 1;
            t.elapsed() > Duration::from_millis(200)
        })
        .expect_err("cancelled");
    let took = t.elapsed();
    assert_eq!(err, ClientError::Cancelled);
    assert!(took < Duration::from_millis(600), "{took:?}");
    assert!(calls >= 3, "cancel polled every ~50 ms, got {calls} calls");
}

/// A cancelled request's connection is closed by the time `get` returns (the request runs as a task of the
/// runtime: it is aborted and dropped then, not at the client's next use).
#[test]
fn blocking_cancel_closes_the_connection_before_returning() {
    let closed = Arc::new(std::sync::Mutex::new(None::<Instant>));
    let seen = closed.clone();
    let (url, _) = serve(1, move |stream, _| {
        let mut r = BufReader::new(stream);
        let _ = read_request(&mut r);
        let mut buf = [0u8; 16];
        // no answer: wait for the client to close (EOF) or the IO limit
        if matches!(r.get_mut().read(&mut buf), Ok(0)) {
            *seen.lock().unwrap() = Some(Instant::now());
        }
    });
    let c = BlockingClient::new(Duration::from_secs(30)).expect("client");
    let t = Instant::now();
    let err = c.get(&url, || t.elapsed() > Duration::from_millis(150)).expect_err("cancelled");
    assert_eq!(err, ClientError::Cancelled);
    let returned = Instant::now();
    let deadline = returned + Duration::from_secs(5);
    while closed.lock().unwrap().is_none() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
    }
    let at = closed.lock().unwrap().expect("the server never saw the cancelled request's connection close");
    // the server's read returns once the FIN is there, sent before get() returned (the client is idle since)
    assert!(at.duration_since(returned) < Duration::from_secs(2), "closed {:?} after", at.duration_since(returned));
    drop(c);
}

/// Back-to-back requests of a blocking client, with and without a pause longer than `SETTLE_AFTER` between
/// them, and bodies that hyper hands back to the pool from a task (1 MiB) or at once: one connection.
#[test]
fn blocking_requests_back_to_back_reuse_one_connection() {
    let big = "x".repeat(1 << 20);
    let (url, accepted) = serve(8, move |stream, _| {
        let mut r = BufReader::new(stream);
        while let Some((head, _)) = read_request(&mut r) {
            let body = if head.starts_with("GET /big") { big.as_str() } else { "hi" };
            if r.get_mut().write_all(ok_response(body).as_bytes()).is_err() {
                return;
            }
        }
    });
    let c = BlockingClient::new(IO_LIMIT).expect("client");
    for i in 0..40 {
        let path = if i % 2 == 0 { "/big" } else { "/small" };
        let (status, n) = c.get(&format!("{url}{path}"), || false).expect("get");
        assert_eq!((status, n), (200, if i % 2 == 0 { 1 << 20 } else { 2 }));
        if i % 10 == 9 {
            thread::sleep(Duration::from_millis(30)); // longer than SETTLE_AFTER: the idle check runs
        }
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "connections opened");
}

#[test]
fn blocking_client_shared_by_two_threads_runs_concurrently() {
    let (url, _) = serve(4, |stream, _| {
        let mut r = BufReader::new(stream);
        while read_request(&mut r).is_some() {
            thread::sleep(Duration::from_millis(300));
            let _ = r.get_mut().write_all(ok_response("slow").as_bytes());
        }
    });
    let c = Arc::new(BlockingClient::new(Duration::from_secs(5)).expect("client"));
    let t = Instant::now();
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (c, url) = (c.clone(), url.clone());
            thread::spawn(move || c.get(&url, || false))
        })
        .collect();
    for th in threads {
        assert_eq!(th.join().expect("thread").expect("get"), (200, 4));
    }
    let took = t.elapsed();
    assert!(took < Duration::from_millis(550), "two 300 ms requests took {took:?}: not concurrent");
}

/// `max_connections`: at most that many requests in flight to a host (the server never sees more at
/// once; every request succeeds), a request waits for its turn at most the connect timeout, then fails
/// with a TimeoutError that says why. The client tells the HTTP version of its last response.
#[test]
fn max_connections_bounds_the_requests_in_flight() {
    let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (n, m) = (now.clone(), most.clone());
    let (url, accepted) = serve(64, move |stream, _| {
        let mut r = BufReader::new(stream);
        while read_request(&mut r).is_some() {
            m.fetch_max(n.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
            thread::sleep(Duration::from_millis(20));
            n.fetch_sub(1, Ordering::SeqCst);
            let _ = r.get_mut().write_all(ok_response("hi").as_bytes());
        }
    });
    let options =
        reqwest_bench::ClientOptions { max_connections: Some(2), ..reqwest_bench::ClientOptions::new(IO_LIMIT) };
    let c = Client::with_options(&options).expect("client");
    assert_eq!(c.http_version(), None);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let results = rt.block_on(async {
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let (c, url) = (c.clone(), url.clone());
                tokio::spawn(async move {
                    let mut out = Vec::new();
                    for _ in 0..3 {
                        out.push(c.get(&url).await);
                    }
                    out
                })
            })
            .collect();
        futures_util::future::join_all(tasks).await
    });
    for r in results.into_iter().flat_map(|r| r.expect("task")) {
        assert_eq!(r.expect("get"), (200, 2));
    }
    assert_eq!(most.load(Ordering::SeqCst), 2, "never more than max_connections at once, and that many");
    // a connection handed back a moment after its response may be joined by a new one: at most 2 x max
    assert!(accepted.load(Ordering::SeqCst) <= 4, "{accepted:?}");
    assert_eq!(c.http_version(), Some("HTTP/1.1"));

    let (slow, _) = serve(4, |stream, _| {
        let mut r = BufReader::new(stream);
        while read_request(&mut r).is_some() {
            thread::sleep(Duration::from_millis(1500));
            let _ = r.get_mut().write_all(ok_response("slow").as_bytes());
        }
    });
    let options = reqwest_bench::ClientOptions {
        max_connections: Some(1),
        connect_timeout: Some(Duration::from_millis(200)),
        ..reqwest_bench::ClientOptions::new(IO_LIMIT)
    };
    let c = Arc::new(BlockingClient::with_options(&options).expect("client"));
    let first = {
        let (c, slow) = (c.clone(), slow.clone());
        thread::spawn(move || c.get(&slow, || false))
    };
    thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    let err = c.get(&slow, || false).expect_err("no free connection");
    assert!(t.elapsed() < Duration::from_millis(1000), "{:?}", t.elapsed());
    assert!(matches!(&err, ClientError::Timeout(m) if m.contains("max_connections (1)")), "{err:?}");
    assert_eq!(first.join().unwrap().expect("the first request"), (200, 4));
}

#[test]
fn blocking_client_inside_tokio_runtime_is_usage_error() {
    let c = BlockingClient::new(Duration::from_secs(1)).expect("client");
    let err = rt().block_on(async { c.get("http://127.0.0.1:9/", || false) }).expect_err("usage");
    assert!(matches!(err, ClientError::Usage(_)), "{err:?}");
}

/// Failure reasons start with the class names every harness uses (C++ beast_client::Error::type_name,
/// Python's harness): `<Class>: <message>`.
#[test]
fn failure_reasons_use_the_shared_class_names() {
    let cases = [
        (ClientError::Timeout("t".into()), "TimeoutError: t"),
        (ClientError::Tls("s".into()), "TLSError: s"),
        (ClientError::Connection(ConnectionKind::Refused, "r".into()), "ConnectionError: r"),
        (ClientError::Connection(ConnectionKind::Other, "o".into()), "ConnectionError: o"),
        (ClientError::Protocol("p".into()), "ProtocolError: p"),
        (ClientError::InvalidUrl("u".into()), "InvalidUrl: u"),
        (ClientError::InvalidRequest("q".into()), "InvalidRequest: q"),
        (ClientError::Cancelled, "Cancelled: request cancelled"),
        (ClientError::Usage("client is closed".into()), "Error: client is closed"),
    ];
    for (err, text) in cases {
        assert!(FAILURE_CLASSES.contains(&err.kind()), "{err:?}");
        assert_eq!(err.to_string(), text);
    }
    // and what real failures print
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let refused = rt().block_on(client(Duration::from_secs(5)).get(&format!("http://127.0.0.1:{port}/")));
    let text = refused.expect_err("refused").to_string();
    assert!(text.starts_with("ConnectionError: ") && text.contains("refused"), "{text}");
    let (url, _) = serve(1, |stream, _| {
        let mut r = BufReader::new(stream);
        let _ = read_request(&mut r);
        thread::sleep(Duration::from_secs(2));
    });
    let timed_out = rt().block_on(client(Duration::from_millis(200)).get(&url)).expect_err("timeout").to_string();
    assert!(timed_out.starts_with("TimeoutError: "), "{timed_out}");
    let bad = BlockingClient::new(Duration::from_secs(1)).expect("client").get("ftp://127.0.0.1/", || false);
    assert!(bad.expect_err("ftp").to_string().starts_with("InvalidUrl: "));
}

#[test]
fn reqwest_version_is_known() {
    assert!(reqwest_bench::REQWEST_VERSION.starts_with("0.13."), "{}", reqwest_bench::REQWEST_VERSION);
}
