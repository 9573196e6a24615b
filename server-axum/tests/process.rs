//! Process-level tests: run the real binary, talk to it over raw TCP on 127.0.0.1.
//! Every wait is bounded; child processes are killed on drop.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ChildStderr, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_clientbench-server");
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// A running server; killed (SIGKILL) and reaped on drop if still alive.
struct Server {
    child: Child,
    addr: SocketAddr,
    line: String,
    stdout: Option<BufReader<ChildStdout>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn_server(extra: &[&str]) -> Server {
    let mut child = Command::new(BIN)
        .args(["--port", "0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn server");
    let stdout = child.stdout.take().unwrap();
    // Read the listening line on a helper thread so a hung server can't hang the test.
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let res = reader.read_line(&mut line).map(|_| (line, reader));
        let _ = tx.send(res);
    });
    let (line, reader) = match rx.recv_timeout(IO_TIMEOUT) {
        Ok(Ok(v)) => v,
        other => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no listening line: {other:?}");
        }
    };
    let v: serde_json::Value =
        serde_json::from_str(line.trim_end()).expect("listening line is JSON");
    assert_eq!(v["event"], "listening", "{line}");
    let url = v["url"].as_str().expect("url is a string");
    let addr: SocketAddr = url
        .strip_prefix("http://")
        .expect("url starts with http://")
        .parse()
        .expect("url has host:port");
    Server {
        child,
        addr,
        line,
        stdout: Some(reader),
    }
}

fn send_signal(child: &Child, sig: libc::c_int) {
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, sig) };
    assert_eq!(rc, 0, "kill failed");
}

fn wait_timeout(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        if start.elapsed() > limit {
            return None;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect_timeout(&addr, IO_TIMEOUT).expect("connect");
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    s.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    s
}

struct RawResponse {
    status_line: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl RawResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Reads one Content-Length-delimited HTTP/1.1 response, leaving the stream positioned
/// right after it.
fn read_response(reader: &mut BufReader<&TcpStream>) -> RawResponse {
    let mut status_line = String::new();
    reader
        .read_line(&mut status_line)
        .expect("read status line");
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        let n = reader.read_line(&mut line).expect("read header");
        assert!(n > 0, "EOF inside headers");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':').expect("header has a colon");
        headers.push((k.trim().to_owned(), v.trim().to_owned()));
    }
    let mut resp = RawResponse {
        status_line: status_line.trim_end().to_owned(),
        headers,
        body: Vec::new(),
    };
    let bodiless = ["204", "205", "304"]
        .iter()
        .any(|c| resp.status_line.split(' ').nth(1) == Some(*c));
    let len: usize = match resp.header("content-length") {
        Some(v) => v.parse().unwrap(),
        None if bodiless => 0,
        None => panic!("content-length missing: {}", resp.status_line),
    };
    if bodiless {
        assert_eq!(len, 0, "{} advertises content", resp.status_line);
    }
    resp.body = vec![0; len];
    reader.read_exact(&mut resp.body).expect("read body");
    resp
}

fn get(stream: &TcpStream, path: &str) -> RawResponse {
    let mut w = stream;
    write!(w, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut reader = BufReader::new(stream);
    let resp = read_response(&mut reader);
    assert!(
        reader.buffer().is_empty(),
        "unexpected extra bytes after response"
    );
    resp
}

#[test]
fn listening_line_format() {
    let server = spawn_server(&[]);
    let expected = format!(
        "{{\"event\":\"listening\",\"url\":\"http://127.0.0.1:{}\"}}\n",
        server.addr.port()
    );
    assert_eq!(server.line, expected);
    assert_ne!(server.addr.port(), 0);
}

fn serve_then_signal(sig: libc::c_int, extra: &[&str]) {
    let mut server = spawn_server(extra);
    let stream = connect(server.addr);
    // Two requests on one keep-alive connection.
    for _ in 0..2 {
        let resp = get(&stream, "/");
        assert_eq!(resp.status_line, "HTTP/1.1 200 OK");
        assert_eq!(resp.header("content-length"), Some("13"));
        assert_eq!(
            resp.header("content-type"),
            Some("text/plain; charset=utf-8")
        );
        assert_eq!(resp.body, b"Hello, World!");
    }
    let resp = get(&stream, "/bytes/100");
    assert_eq!(resp.body.len(), 100);

    // The idle keep-alive connection stays open while we signal.
    send_signal(&server.child, sig);
    let status = wait_timeout(&mut server.child, Duration::from_secs(5))
        .expect("server did not exit within 5 s");
    assert!(status.success(), "exit status {status:?}");

    // Nothing but the listening line on stdout.
    let mut rest = String::new();
    server
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut rest)
        .unwrap();
    assert_eq!(rest, "", "unexpected extra stdout");
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
    let mut server = spawn_server(&[]);
    let mut stream = connect(server.addr);
    stream
        .write_all(b"GET /delay/10000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    thread::sleep(Duration::from_millis(200)); // let the request reach the handler
    let start = Instant::now();
    send_signal(&server.child, libc::SIGTERM);
    let status = wait_timeout(&mut server.child, Duration::from_secs(5))
        .expect("server did not exit within 5 s");
    assert!(status.success(), "exit status {status:?}");
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(1500),
        "exited too early: {took:?}"
    );
    assert!(
        took < Duration::from_secs(4),
        "grace period too long: {took:?}"
    );
}

#[test]
fn close_endpoint_closes_connection() {
    let server = spawn_server(&[]);
    let stream = connect(server.addr);
    let mut w = &stream;
    w.write_all(b"GET /close HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let mut reader = BufReader::new(&stream);
    let resp = read_response(&mut reader);
    assert_eq!(resp.status_line, "HTTP/1.1 200 OK");
    assert_eq!(resp.header("connection"), Some("close"));
    assert_eq!(resp.body, b"Hello, World!");
    // The server must close its side: the next read sees EOF (not a timeout).
    let mut buf = [0u8; 16];
    let n = reader
        .read(&mut buf)
        .expect("read after /close (timeout = not closed)");
    assert_eq!(n, 0, "expected EOF after /close response");
}

#[test]
fn keep_alive_by_default() {
    let server = spawn_server(&[]);
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

fn run_to_completion(args: &[&str]) -> (ExitStatus, String, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let status = match wait_timeout(&mut child, Duration::from_secs(5)) {
        Some(s) => s,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?}: did not exit within 5 s");
        }
    };
    let mut out = String::new();
    let mut err = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let stderr: ChildStderr = child.stderr.take().unwrap();
    BufReader::new(stderr).read_to_string(&mut err).unwrap();
    (status, out, err)
}

#[test]
fn port_in_use_fails_cleanly() {
    let blocker = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = blocker.local_addr().unwrap().port().to_string();
    let (status, out, err) = run_to_completion(&["--host", "127.0.0.1", "--port", &port]);
    assert_eq!(status.code(), Some(1), "stderr: {err}");
    assert!(
        !err.trim().is_empty(),
        "expected an error message on stderr"
    );
    assert_eq!(
        err.trim().lines().count(),
        1,
        "one-line error expected: {err}"
    );
    assert!(!err.contains("panicked"), "panic on bind failure: {err}");
    assert_eq!(out, "", "nothing on stdout when bind fails");
    drop(blocker);
}

#[test]
fn help_and_bad_flags() {
    let (status, out, _) = run_to_completion(&["--help"]);
    assert!(status.success());
    for flag in ["--host", "--port", "--threads"] {
        assert!(out.contains(flag), "--help lacks {flag}: {out}");
    }
    let (status, _, err) = run_to_completion(&["--no-such-flag"]);
    assert_eq!(status.code(), Some(2), "{err}");
    let (status, _, err) = run_to_completion(&["--port", "notaport"]);
    assert_eq!(status.code(), Some(2), "{err}");
    let (status, _, err) = run_to_completion(&["--threads", "0"]);
    assert_eq!(status.code(), Some(2), "{err}");
}
