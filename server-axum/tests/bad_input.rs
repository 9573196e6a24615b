//! Hostile input against the real binary over raw TCP: every malformed or out-of-range
//! request gets a 4xx (or, for unparseable HTTP, a closed connection), nothing hangs, and
//! the server never panics: afterwards it still answers /health, its stderr has no
//! "panicked", and SIGTERM still gives exit status 0.
//!
//! Every read and write has a short timeout; a request the server is still waiting on is
//! half-closed (our write side shut down), after which the server must close the connection.

use crate::common;

use std::io::{BufReader, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::thread;
use std::time::Duration;

use common::{read_response, spawn_server, Server};

const READ_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a probe waits for an answer before half-closing (a request cut short on purpose
/// is only answered, or the connection closed, once the server sees EOF). Shortening it can
/// only turn a 4xx into a close, both accepted.
const FIRST_WAIT: Duration = Duration::from_millis(500);

/// What the server did with one request.
#[derive(Debug, PartialEq)]
enum Outcome {
    Status(u16),
    /// EOF or reset before any response byte.
    Closed,
    /// No response and no close even after we half-closed: the server hangs on it.
    Hang,
    /// Anything else (a malformed response, a connection lost mid-response).
    Broken(String),
}

impl Outcome {
    fn is_4xx_or_closed(&self) -> bool {
        matches!(self, Outcome::Status(400..=499) | Outcome::Closed)
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

fn open(addr: SocketAddr, timeout: Duration) -> TcpStream {
    let s = TcpStream::connect_timeout(&addr, READ_TIMEOUT).expect("connect");
    s.set_read_timeout(Some(timeout)).unwrap();
    s.set_write_timeout(Some(timeout)).unwrap();
    s
}

/// Reads one response from `stream`; on no answer within `FIRST_WAIT`, half-closes and
/// waits `READ_TIMEOUT` more.
fn outcome(stream: &TcpStream) -> Outcome {
    stream.set_read_timeout(Some(FIRST_WAIT)).unwrap();
    let mut reader = BufReader::new(stream);
    match read_response(&mut reader) {
        Ok(Some(r)) => return Outcome::Status(r.status),
        Ok(None) => return Outcome::Closed,
        Err(e) if is_timeout(&e) && reader.buffer().is_empty() => {}
        Err(e) => return Outcome::Broken(e.to_string()),
    }
    // The server is waiting for more: tell it there is none.
    let _ = stream.shutdown(Shutdown::Write);
    stream.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
    match read_response(&mut reader) {
        Ok(Some(r)) => Outcome::Status(r.status),
        Ok(None) => Outcome::Closed,
        Err(e) if is_timeout(&e) => Outcome::Hang,
        Err(e) => Outcome::Broken(e.to_string()),
    }
}

/// Sends `raw` on a fresh connection (write errors are fine: the server may close early)
/// and returns what came back.
fn probe(addr: SocketAddr, raw: &[u8]) -> Outcome {
    let stream = open(addr, READ_TIMEOUT);
    let _ = (&stream).write_all(raw);
    outcome(&stream)
}

/// The end of every test: alive, healthy, no panic, clean SIGTERM exit.
fn finish(mut server: Server) {
    server.assert_healthy();
    server.assert_no_panic();
    let (status, stderr) = server.terminate();
    assert!(status.success(), "exit status {status:?}; stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "server panicked:\n{stderr}");
}

/// Probes every case, up to `PARALLEL` at a time (each may take a read timeout or two).
fn probe_all(addr: SocketAddr, cases: Vec<(String, Vec<u8>)>) -> Vec<(String, Outcome)> {
    const PARALLEL: usize = 16;
    let mut results = Vec::with_capacity(cases.len());
    let mut cases = cases.into_iter().peekable();
    while cases.peek().is_some() {
        let batch: Vec<_> =
            cases.by_ref().take(PARALLEL).map(|(name, raw)| thread::spawn(move || (name, probe(addr, &raw)))).collect();
        results.extend(batch.into_iter().map(|t| t.join().expect("probe thread")));
    }
    results
}

fn assert_all(results: Vec<(String, Outcome)>, ok: impl Fn(&Outcome) -> bool) {
    let bad: Vec<_> = results.iter().filter(|(_, o)| !ok(o)).collect();
    assert!(bad.is_empty(), "{} unexpected outcomes: {bad:#?}", bad.len());
}

/// Out-of-range and malformed path values are answered in-protocol with the exact 4xx,
/// and the keep-alive connection stays usable afterwards.
#[test]
fn bad_values_get_exact_4xx_on_one_keep_alive_connection() {
    let server = spawn_server(&[], None);
    let cases: &[(&str, &str, u16)] = &[
        ("GET", "/bytes/-1", 400),
        ("GET", "/bytes/1e9", 400),
        ("GET", "/bytes/99999999999999999999", 400),
        ("GET", "/bytes/18446744073709551616", 400),
        ("GET", "/bytes/67108865", 400),
        ("GET", "/bytes/abc", 400),
        ("GET", "/bytes/%00", 400),
        ("GET", "/bytes/%FF%FE", 400),
        ("GET", "/bytes/%ZZ", 400),
        ("GET", "/bytes/+1", 400),
        ("GET", "/bytes/0x10", 400),
        ("GET", "/bytes/1%20", 400),
        ("GET", "/bytes/%E2%80%8B1", 400),
        ("GET", "/bytes/", 404),
        ("GET", "/bytes", 404),
        ("GET", "/bytes/1/2", 404),
        ("GET", "/delay/-5", 400),
        ("GET", "/delay/10001", 400),
        ("GET", "/delay/1.5", 400),
        ("GET", "/delay/x", 400),
        ("GET", "/delay/99999999999999999999", 400),
        ("GET", "/delay/", 404),
        ("GET", "/status/0", 400),
        ("GET", "/status/99", 400),
        ("GET", "/status/100", 400),
        ("GET", "/status/101", 400),
        ("GET", "/status/199", 400),
        ("GET", "/status/600", 400),
        ("GET", "/status/1000", 400),
        ("GET", "/status/65736", 400),
        ("GET", "/status/abc", 400),
        ("GET", "/status/200x", 400),
        ("GET", "/status/-200", 400),
        ("GET", "/status/", 404),
        ("GET", "/%ZZ", 404),
        ("GET", "/%00", 404),
        ("GET", "/no/such/path", 404),
        ("GET", "/echo", 405),
        ("GET", "/stall", 400),
        ("GET", "/stall?every=0&ms=1", 400),
        ("GET", "/stall?every=1&ms=60001", 400),
        ("GET", "/stall?every=1", 400),
        ("GET", "/stall?ms=1", 400),
        ("GET", "/stall?every=-1&ms=1", 400),
        ("GET", "/stall?every=1&ms=1.5", 400),
        ("GET", "/stall?every=99999999999999999999&ms=1", 400),
        ("POST", "/stall?every=1&ms=0", 405),
        ("DELETE", "/upload", 405),
        ("POST", "/", 405),
        ("DELETE", "/bytes/1", 405),
        ("FOO", "/", 405),
    ];
    let stream = open(server.addr, READ_TIMEOUT);
    let mut results = Vec::new();
    for (method, path, want) in cases {
        let req = format!("{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
        (&stream).write_all(req.as_bytes()).expect("write (connection closed?)");
        let mut reader = BufReader::new(&stream);
        let got = match read_response(&mut reader) {
            Ok(Some(r)) => Outcome::Status(r.status),
            Ok(None) => Outcome::Closed,
            Err(e) => Outcome::Broken(e.to_string()),
        };
        assert!(reader.buffer().is_empty(), "{method} {path}: extra bytes");
        let closed = got == Outcome::Closed;
        results.push((format!("{method} {path} (want {want})"), got));
        if closed {
            break; // the rest would fail for the same reason
        }
    }
    let mismatched: Vec<_> =
        results.iter().zip(cases).filter(|((_, got), (_, _, want))| *got != Outcome::Status(*want)).collect();
    assert!(mismatched.is_empty(), "unexpected answers: {mismatched:#?}");
    assert_eq!(results.len(), cases.len());
    // The same connection still serves a normal request.
    let resp = common::get(&stream, "/").expect("GET / after the bad ones");
    assert_eq!((resp.status, resp.body.as_slice()), (200, &b"Hello, World!"[..]));
    finish(server);
}

/// Requests HTTP/1.1 can't parse, or the server refuses to: 4xx or a closed connection.
#[test]
fn malformed_http_gets_4xx_or_close() {
    let server = spawn_server(&[], None);
    let long_path = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(100 * 1024));
    let long_bytes_path = format!("GET /bytes/{} HTTP/1.1\r\nHost: x\r\n\r\n", "9".repeat(100 * 1024));
    let huge_header = format!("GET / HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n", "b".repeat(1 << 20));
    let many_headers = {
        let mut s = String::from("GET / HTTP/1.1\r\nHost: x\r\n");
        for i in 0..10_000 {
            s.push_str(&format!("X-H{i}: {}\r\n", "v".repeat(90)));
        }
        s + "\r\n"
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("100 KiB path", long_path.into_bytes()),
        ("100 KiB /bytes value", long_bytes_path.into_bytes()),
        ("1 MiB header value", huge_header.into_bytes()),
        ("10000 headers (~1 MiB)", many_headers.into_bytes()),
        ("raw invalid UTF-8 in path", b"GET /bytes/\xff\xfe\xc3\x28 HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()),
        ("raw NUL in path", b"GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()),
        ("control chars in path", b"GET /\x01\x7f HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()),
        ("garbage request line", b"sdkfj sdf sdf sdf\r\n\r\n".to_vec()),
        ("only a method", b"GET\r\n\r\n".to_vec()),
        ("HTTP/0.9 request", b"GET /\r\n\r\n".to_vec()),
        ("HTTP/0.9 request, single line", b"GET /\r\n".to_vec()),
        ("HTTP/2.0 version in HTTP/1 line", b"GET / HTTP/2.0\r\nHost: x\r\n\r\n".to_vec()),
        ("HTTP/9.9 version", b"GET / HTTP/9.9\r\nHost: x\r\n\r\n".to_vec()),
        ("HTTP/2 prior-knowledge preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec()),
        ("TLS ClientHello", b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03".to_vec()),
        ("NUL in method", b"G\x00T / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()),
        ("header without colon", b"GET / HTTP/1.1\r\nHost x\r\n\r\n".to_vec()),
        ("space in header name", b"GET / HTTP/1.1\r\nHo st: x\r\n\r\n".to_vec()),
        ("NUL in header value", b"GET / HTTP/1.1\r\nHost: x\x00y\r\n\r\n".to_vec()),
        ("obsolete line folding", b"GET / HTTP/1.1\r\nHost: x\r\n y\r\n\r\n".to_vec()),
        ("empty request", b"\r\n\r\n\r\n\r\n".to_vec()),
        ("Content-Length: -1", b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n".to_vec()),
        ("Content-Length: abc", b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n".to_vec()),
        ("Content-Length overflow", b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n".to_vec()),
        ("conflicting Content-Lengths", b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd".to_vec()),
        ("unknown Transfer-Encoding", b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nabc".to_vec()),
        ("chunk size not hex", b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nabc\r\n0\r\n\r\n".to_vec()),
        ("negative chunk size", b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nabc\r\n0\r\n\r\n".to_vec()),
        ("chunk size overflow", b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\nabc\r\n0\r\n\r\n".to_vec()),
        ("chunk longer than its size", b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcdef\r\n0\r\n\r\n".to_vec()),
        ("chunk size without CRLF", b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3abc0\r\n\r\n".to_vec()),
        ("chunked body cut short", b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc".to_vec()),
        ("truncated body", b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789".to_vec()),
        ("truncated headers", b"GET / HTTP/1.1\r\nHost: x\r\nX-A: 1".to_vec()),
    ];
    let cases = cases.into_iter().map(|(n, r)| (n.to_owned(), r)).collect();
    assert_all(probe_all(server.addr, cases), Outcome::is_4xx_or_closed);
    finish(server);
}

/// `POST /echo` one byte over the 64 MiB limit: 413, both with Content-Length and chunked.
#[test]
fn echo_over_limit_is_413() {
    let server = spawn_server(&[], None);
    let limit = clientbench_server::MAX_ECHO_BYTES;
    for chunked in [false, true] {
        let stream = open(server.addr, Duration::from_secs(20));
        let writer = stream.try_clone().unwrap();
        let sender = thread::spawn(move || {
            let mut w = &writer;
            let chunk = vec![b'x'; 1 << 20];
            let mut left = limit + 1;
            let head = if chunked {
                "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".to_owned()
            } else {
                format!("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: {left}\r\n\r\n")
            };
            w.write_all(head.as_bytes())?;
            while left > 0 {
                let n = left.min(chunk.len());
                if chunked {
                    write!(w, "{n:x}\r\n")?;
                }
                w.write_all(&chunk[..n])?;
                if chunked {
                    w.write_all(b"\r\n")?;
                }
                left -= n;
            }
            if chunked {
                w.write_all(b"0\r\n\r\n")?;
            }
            Ok::<_, std::io::Error>(())
        });
        let mut reader = BufReader::new(&stream);
        let got = read_response(&mut reader);
        // The server may stop reading after the limit: write errors are expected then.
        let _ = sender.join().expect("sender thread");
        let resp = got
            .unwrap_or_else(|e| panic!("chunked={chunked}: reading the response: {e}"))
            .unwrap_or_else(|| panic!("chunked={chunked}: closed without a response"));
        assert_eq!(resp.status, 413, "chunked={chunked}: {}", resp.status_line);
    }
    finish(server);
}

/// `/upload` refuses a declared body over 1 GiB at once, without waiting for it.
#[test]
fn upload_over_limit_is_413_before_the_body() {
    let server = spawn_server(&[], None);
    let stream = open(server.addr, READ_TIMEOUT);
    let over = clientbench_server::MAX_UPLOAD_BYTES + 1;
    write!(&stream, "PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: {over}\r\n\r\nabc").unwrap();
    let resp = read_response(&mut BufReader::new(&stream)).expect("a response").expect("not closed");
    assert_eq!(resp.status, 413, "{}", resp.status_line);
    finish(server);
}

/// A declared body that never comes: the server must not hang on it or answer 2xx.
#[test]
fn truncated_body_then_close_is_not_served() {
    let server = spawn_server(&[], None);
    for raw in [
        &b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nshort"[..],
        &b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 67108865\r\n\r\n"[..],
        &b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"[..],
        &b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nshort"[..],
        &b"PUT /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"[..],
    ] {
        let stream = open(server.addr, READ_TIMEOUT);
        (&stream).write_all(raw).unwrap();
        stream.shutdown(Shutdown::Write).unwrap();
        let got = outcome(&stream);
        assert!(got.is_4xx_or_closed(), "{:?}: {got:?}", String::from_utf8_lossy(raw));
    }
    finish(server);
}

/// Both Content-Length and chunked: RFC 9112 §6.3 lets the server either reject it or read
/// it as chunked and close the connection afterwards (hyper does the latter). No smuggling:
/// the chunked body is what's echoed, and nothing on the connection is read after it.
#[test]
fn content_length_with_chunked_is_read_as_chunked_then_closed() {
    let server = spawn_server(&[], None);
    let stream = open(server.addr, READ_TIMEOUT);
    (&stream)
        .write_all(
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n\
              5\r\nabcde\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
        )
        .unwrap();
    let mut reader = BufReader::new(&stream);
    match read_response(&mut reader) {
        Ok(None) => {}
        Ok(Some(r)) if (400..500).contains(&r.status) => {}
        Ok(Some(r)) => {
            assert_eq!(r.status, 200, "{}", r.status_line);
            assert_eq!(r.body, b"abcde", "not read as chunked");
            assert_eq!(r.header("connection"), Some("close"));
            let mut rest = Vec::new();
            let n = reader.read_to_end(&mut rest).expect("EOF expected, not a timeout");
            assert_eq!(n, 0, "smuggled request answered: {:?}", String::from_utf8_lossy(&rest));
        }
        Err(e) => panic!("{e}"),
    }
    finish(server);
}

/// xorshift64: a tiny deterministic PRNG, so failures are reproducible.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn bytes(&mut self, len: usize, alphabet: &[u8]) -> Vec<u8> {
        (0..len).map(|_| alphabet[self.below(alphabet.len())]).collect()
    }
}

/// 200 pseudo-random requests: garbage values for the three parameterised routes (always
/// with a non-digit, so none is valid) and garbage request lines.
#[test]
fn random_requests_get_4xx_or_close() {
    let server = spawn_server(&[], None);
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let all: Vec<u8> = (0..=255).collect();
    let printable: Vec<u8> = (0x21..0x7f).collect();
    let mut cases = Vec::new();
    for i in 0..200 {
        let raw = if i < 100 {
            let route = ["/bytes/", "/delay/", "/status/"][rng.below(3)];
            let alphabet = if rng.below(2) == 0 { &printable } else { &all };
            let len = 1 + rng.below(40);
            // No '?' or '#': "/bytes/1?junk" is a valid request for /bytes/1.
            let mut value: Vec<u8> =
                rng.bytes(len, alphabet).into_iter().map(|b| if b == b'?' || b == b'#' { b'x' } else { b }).collect();
            if rng.below(3) == 0 {
                // Percent-encode some of it, as a client would.
                value = value.iter().flat_map(|b| format!("%{b:02X}").into_bytes()).collect();
            }
            value.push(b'x'); // never a valid number, even after percent-decoding
            let mut req = format!("GET {route}").into_bytes();
            req.extend_from_slice(&value);
            req.extend_from_slice(b" HTTP/1.1\r\nHost: x\r\n\r\n");
            req
        } else {
            let len = 1 + rng.below(200);
            let mut req = rng.bytes(len, &all);
            req.extend_from_slice(b"\r\n\r\n");
            req
        };
        cases.push((format!("#{i} {:?}", String::from_utf8_lossy(&raw)), raw));
    }
    assert_all(probe_all(server.addr, cases), Outcome::is_4xx_or_closed);
    finish(server);
}
