//! Shared helpers for the process-level tests (`process.rs`, `load.rs`, `bad_input.rs`, ...): spawn the real
//! binary on an ephemeral port, capture its stdout and stderr, talk to it over raw TCP on 127.0.0.1.
//! Every wait is bounded; the child is killed (SIGKILL) and reaped on drop.
#![allow(dead_code)]

pub mod clients;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_clientbench-server");
pub const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// The bound of an HTTP client's request (the reqwest clients of [`clients`]).
pub const TIMEOUT: Duration = Duration::from_secs(10);

pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    /// Every address the server listens on (the listening line's `urls`; the first is `addr`).
    pub addrs: Vec<SocketAddr>,
    /// The URL's scheme is https (`--tls`).
    pub https: bool,
    /// The listening line's `ca_file`: absent (plain HTTP) → None, null → Some(None).
    pub ca_file: Option<Option<String>>,
    /// With HTTP/3 (the listening line's `"http3":true`): its UDP address and buffer sizes.
    pub http3: Option<Http3Line>,
    /// The listening line exactly as printed (with its newline).
    pub line: String,
    /// The CA's temporary directory the server made (`--tls` without `--tls-dir`): the server removes it when
    /// it exits on a signal, the test after a SIGKILL.
    made_dir: Option<std::path::PathBuf>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_thread: Option<thread::JoinHandle<()>>,
    /// Whatever the server printed on stdout after the listening line.
    stdout_rest: Arc<Mutex<Vec<u8>>>,
    stdout_thread: Option<thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(dir) = &self.made_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The current (soft, hard) `RLIMIT_NOFILE` of this process.
#[allow(clippy::unnecessary_cast)] // rlim_t is u64 on Linux, not everywhere
pub fn nofile_limits() -> (u64, u64) {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
    (lim.rlim_cur as u64, lim.rlim_max as u64)
}

/// Spawns the server with `--port 0` (unless `extra` names a `--port`). With `soft_nofile = Some(n)` the child
/// starts with its soft `RLIMIT_NOFILE` lowered to `n` (hard limit unchanged), as under a default 1024 limit.
pub fn spawn_server(extra: &[&str], soft_nofile: Option<u64>) -> Server {
    let mut cmd = Command::new(BIN);
    if !extra.contains(&"--port") {
        cmd.args(["--port", "0"]);
    }
    cmd.args(extra).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    if let Some(soft) = soft_nofile {
        // SAFETY: getrlimit/setrlimit are async-signal-safe; nothing else runs in the hook.
        unsafe {
            cmd.pre_exec(move || {
                let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
                if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                lim.rlim_cur = (soft as libc::rlim_t).min(lim.rlim_max);
                if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().expect("spawn server");

    let stderr = Arc::new(Mutex::new(Vec::new()));
    let mut pipe = child.stderr.take().unwrap();
    let sink = Arc::clone(&stderr);
    let stderr_thread = thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });

    // Read the listening line on a helper thread so a hung server can't hang the test.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout_rest = Arc::new(Mutex::new(Vec::new()));
    let rest_sink = Arc::clone(&stdout_rest);
    let stdout_thread = thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let res = reader.read_line(&mut line).map(|_| line);
        let _ = tx.send(res);
        // Keep reading (so the server never blocks on a full pipe) and keep what comes.
        let mut rest = Vec::new();
        let _ = reader.read_to_end(&mut rest);
        rest_sink.lock().unwrap().extend_from_slice(&rest);
    });
    let line = match rx.recv_timeout(IO_TIMEOUT) {
        Ok(Ok(line)) => line,
        other => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no listening line: {other:?}");
        }
    };
    let v: serde_json::Value = serde_json::from_str(line.trim_end()).expect("listening line is JSON");
    assert_eq!(v["event"], "listening", "{line}");
    let url = v["url"].as_str().unwrap_or_else(|| panic!("bad listening line: {line}"));
    let https = url.starts_with("https://");
    let parse = |url: &str| -> SocketAddr {
        url.strip_prefix(if https { "https://" } else { "http://" })
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("bad listening line: {line}"))
    };
    let addr = parse(url);
    let urls = v["urls"].as_array().unwrap_or_else(|| panic!("no urls in the listening line: {line}"));
    let addrs: Vec<SocketAddr> = urls.iter().map(|u| parse(u.as_str().expect("a URL"))).collect();
    assert_eq!(addrs.first(), Some(&addr), "urls begin with url: {line}");
    let ca_file = v.get("ca_file").map(|c| c.as_str().map(str::to_owned));
    let http3 = match v["http3"].as_bool() {
        Some(true) => Some(Http3Line {
            addr: v["udp_addr"].as_str().and_then(|a| a.parse().ok()).unwrap_or_else(|| panic!("udp_addr: {line}")),
            recv_buffer: v["udp_recv_buffer"].as_u64().unwrap_or_else(|| panic!("udp_recv_buffer: {line}")),
            send_buffer: v["udp_send_buffer"].as_u64().unwrap_or_else(|| panic!("udp_send_buffer: {line}")),
        }),
        Some(false) => {
            assert!(v.get("udp_addr").is_none() && v.get("udp_recv_buffer").is_none(), "{line}");
            None
        }
        None => panic!("no http3 in the listening line: {line}"),
    };
    let made_dir = match &ca_file {
        Some(Some(file)) if !extra.contains(&"--tls-dir") => std::path::Path::new(file).parent().map(Into::into),
        _ => None,
    };
    Server {
        child,
        addr,
        addrs,
        https,
        ca_file,
        http3,
        line,
        made_dir,
        stderr,
        stderr_thread: Some(stderr_thread),
        stdout_rest,
        stdout_thread: Some(stdout_thread),
    }
}

/// What the listening line says of HTTP/3.
#[derive(Debug, Clone, Copy)]
pub struct Http3Line {
    pub addr: SocketAddr,
    pub recv_buffer: u64,
    pub send_buffer: u64,
}

/// A directory of this test's own under the system's temporary directory, removed on drop.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("clientbench-server-test-{}-{tag}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    pub fn path(&self, name: &str) -> std::path::PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the binary with `args` to completion (bounded: killed after 10 s); returns status, stdout, stderr.
pub fn run_to_completion(args: &[&str]) -> (ExitStatus, String, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let status = match wait_timeout(&mut child, Duration::from_secs(10)) {
        Some(s) => s,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?}: did not exit within 10 s");
        }
    };
    let mut out = String::new();
    let mut err = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (status, out, err)
}

/// Polls until the child exits or `limit` passes.
pub fn wait_timeout(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
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

impl Server {
    /// Everything the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    pub fn assert_alive(&mut self) {
        if let Some(status) = self.child.try_wait().expect("try_wait") {
            panic!("server exited: {status:?}; stderr:\n{}", self.stderr());
        }
    }

    pub fn assert_no_panic(&self) {
        let err = self.stderr();
        assert!(!err.contains("panicked"), "server panicked:\n{err}");
    }

    /// `GET /health` on a fresh connection must answer 200 `ok`.
    pub fn assert_healthy(&mut self) {
        self.assert_alive();
        let stream = connect(self.addr);
        let resp = get(&stream, "/health").expect("GET /health");
        assert_eq!(resp.status, 200, "{}", resp.status_line);
        assert_eq!(resp.body, b"ok");
    }

    /// Sends SIGTERM and waits (bounded) for the exit; returns the exit status and stderr.
    /// Sends `sig` and waits up to `limit` for the exit (None: still running).
    pub fn signal_and_wait(&mut self, sig: libc::c_int, limit: Duration) -> Option<ExitStatus> {
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
        assert_eq!(rc, 0, "kill({sig}) failed");
        wait_timeout(&mut self.child, limit)
    }

    /// Everything printed on stdout after the listening line; call once the server has exited.
    pub fn stdout_rest(&mut self) -> String {
        // The pipe closes with the process: the reader thread ends promptly.
        if let Some(t) = self.stdout_thread.take() {
            let _ = t.join();
        }
        String::from_utf8_lossy(&self.stdout_rest.lock().unwrap()).into_owned()
    }

    pub fn terminate(mut self) -> (ExitStatus, String) {
        let status = self
            .signal_and_wait(libc::SIGTERM, Duration::from_secs(10))
            .expect("server did not exit within 10 s of SIGTERM");
        if let Some(t) = self.stderr_thread.take() {
            let _ = t.join();
        }
        (status, self.stderr())
    }
}

pub fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect_timeout(&addr, IO_TIMEOUT).expect("connect");
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    s.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    s
}

#[derive(Debug)]
pub struct RawResponse {
    pub status_line: String,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Reads one Content-Length-delimited HTTP/1.1 response. `Ok(None)` = the server closed the
/// connection (EOF or reset) before sending a status line; errors are timeouts, malformed
/// responses or a connection lost mid-response.
pub fn read_response(reader: &mut impl BufRead) -> std::io::Result<Option<RawResponse>> {
    use std::io::{Error, ErrorKind};
    let mut status_line = String::new();
    match reader.read_line(&mut status_line) {
        Ok(0) => return Ok(None),
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::ConnectionReset && status_line.is_empty() => return Ok(None),
        Err(e) => return Err(e),
    }
    let bad = |msg: String| Error::new(ErrorKind::InvalidData, msg);
    let status_line = status_line.trim_end().to_owned();
    let status: u16 = status_line
        .strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| bad(format!("bad status line {status_line:?}")))?;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Err(bad("EOF inside headers".into()));
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':').ok_or_else(|| bad(format!("header without colon {line:?}")))?;
        headers.push((k.trim().to_owned(), v.trim().to_owned()));
    }
    let mut resp = RawResponse { status_line, status, headers, body: Vec::new() };
    let len: usize = match resp.header("content-length") {
        Some(v) => v.parse().map_err(|_| bad(format!("bad content-length {v:?}")))?,
        None if matches!(status, 204 | 205 | 304) => 0,
        None => return Err(bad(format!("no content-length: {}", resp.status_line))),
    };
    if matches!(status, 204 | 205 | 304) && len != 0 {
        return Err(bad(format!("{} advertises content", resp.status_line)));
    }
    resp.body = vec![0; len];
    reader.read_exact(&mut resp.body)?;
    Ok(Some(resp))
}

/// One `GET` on a keep-alive connection; `Ok(None)` if the server closed it instead.
pub fn get(stream: &TcpStream, path: &str) -> std::io::Result<RawResponse> {
    let mut w = stream;
    write!(w, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")?;
    let mut reader = BufReader::new(stream);
    let resp = read_response(&mut reader)?
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "connection closed"))?;
    assert!(reader.buffer().is_empty(), "extra bytes after response");
    Ok(resp)
}
