//! Test servers and a test PKI for the HTTPS tests of reqwest-bench and of the binaries built on it (the
//! drivers' and the probes' tests include this file by path): a CA and its certificates (made with rcgen
//! when a test starts), rustls and plain TCP servers on 127.0.0.1 (a thread per connection, every read
//! bounded in time), and a bounded run of a binary.

// Each test crate that includes this module uses only part of it.
#![allow(dead_code)]

pub mod timing;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use reqwest_bench::TlsConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{HandshakeKind, ServerConfig, ServerConnection, StreamOwned};

pub const IO_LIMIT: Duration = Duration::from_secs(10);

// ---- test PKI -----------------------------------------------------------------------------------------

/// A test CA; its certificate is written to a PEM file (the CA bundle a client is given).
pub struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pub pem_file: PathBuf,
    _dir: TempDir,
}

pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("reqwest-bench-tls-{}-{tag}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A server certificate and its key.
pub struct Leaf {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

impl Ca {
    pub fn new(tag: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(rcgen::DnType::CommonName, format!("test CA {tag}"));
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).unwrap();
        let dir = TempDir::new(tag);
        let pem_file = dir.0.join("ca.pem");
        std::fs::write(&pem_file, cert.pem()).unwrap();
        Ca { issuer: Issuer::new(params, key), pem_file, _dir: dir }
    }

    /// A certificate for `names`; `expired`: valid 2019–2020 only.
    pub fn leaf(&self, names: &[&str], expired: bool) -> Leaf {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
        if expired {
            params.not_before = rcgen::date_time_ymd(2019, 1, 1);
            params.not_after = rcgen::date_time_ymd(2020, 1, 1);
        }
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Leaf { chain: vec![cert.der().clone()], key: PrivatePkcs8KeyDer::from(key.serialize_der()).into() }
    }

    pub fn trust(&self) -> TlsConfig {
        TlsConfig::ca_file(&self.pem_file).expect("CA file")
    }
}

/// A self-signed certificate for localhost (no CA).
pub fn self_signed() -> Leaf {
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["localhost".to_string()]).unwrap().self_signed(&key).unwrap();
    Leaf { chain: vec![cert.der().clone()], key: PrivatePkcs8KeyDer::from(key.serialize_der()).into() }
}

pub fn server_config(leaf: Leaf, versions: &[&'static rustls::SupportedProtocolVersion]) -> Arc<ServerConfig> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(leaf.chain, leaf.key)
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

// ---- servers ------------------------------------------------------------------------------------------

pub type Tls = StreamOwned<ServerConnection, TcpStream>;

/// What a TLS server saw: accepted connections, and the handshake kind of each completed handshake.
#[derive(Default)]
pub struct Seen {
    pub connections: AtomicUsize,
    pub handshakes: Mutex<Vec<HandshakeKind>>,
}

/// A TLS server on 127.0.0.1 for the first `max_conns` connections, each on its own thread: completes the
/// handshake, then runs `handle`. Returns the port and what it saw.
pub fn tls_server<F>(config: Arc<ServerConfig>, max_conns: usize, handle: F) -> (u16, Arc<Seen>)
where
    F: Fn(&mut BufReader<Tls>) + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Seen::default());
    let log = seen.clone();
    let handle = Arc::new(handle);
    thread::spawn(move || {
        for _ in 0..max_conns {
            let Ok((tcp, _)) = listener.accept() else { return };
            log.connections.fetch_add(1, Ordering::SeqCst);
            let _ = tcp.set_read_timeout(Some(IO_LIMIT));
            let _ = tcp.set_write_timeout(Some(IO_LIMIT));
            let (config, log, handle) = (config.clone(), log.clone(), handle.clone());
            thread::spawn(move || {
                let mut tls = StreamOwned::new(ServerConnection::new(config).unwrap(), tcp);
                while tls.conn.is_handshaking() {
                    if tls.conn.complete_io(&mut tls.sock).is_err() {
                        return; // the client gave up (or never was a TLS client)
                    }
                }
                log.handshakes.lock().unwrap().push(tls.conn.handshake_kind().expect("handshake kind"));
                handle(&mut BufReader::new(tls));
            });
        }
    });
    (port, seen)
}

/// Read one request head (and its Content-Length body); None on EOF / error.
pub fn read_request(reader: &mut impl BufRead) -> Option<(String, Vec<u8>)> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        let end = line == "\r\n";
        head.push_str(&line);
        if end {
            break;
        }
    }
    let len = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length").then(|| v.trim().parse::<usize>().ok()).flatten()
        })
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some((head, body))
}

pub fn ok_response(body: &str) -> String {
    format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{}", body.len(), body)
}

/// Answers every request on the connection with 200 `hello` (keep-alive), then closes with close_notify.
pub fn hello(r: &mut BufReader<Tls>) {
    while read_request(r).is_some() {
        let tls = r.get_mut();
        if tls.write_all(ok_response("hello").as_bytes()).and_then(|()| tls.flush()).is_err() {
            return;
        }
    }
    r.get_mut().conn.send_close_notify();
    let _ = r.get_mut().flush();
}

/// A plain TCP server for `max_conns` connections, `handle` on a thread each. Returns the port.
pub fn tcp_server<F>(max_conns: usize, handle: F) -> u16
where
    F: Fn(TcpStream) + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    let handle = Arc::new(handle);
    thread::spawn(move || {
        for _ in 0..max_conns {
            let Ok((tcp, _)) = listener.accept() else { return };
            let _ = tcp.set_read_timeout(Some(IO_LIMIT));
            let h = handle.clone();
            thread::spawn(move || h(tcp));
        }
    });
    port
}

// ---- the binaries -------------------------------------------------------------------------------------

/// Run `bin` with `args` to the end (killed, and the test failed, after 60 s).
pub fn run(bin: &str, args: &[&str]) -> std::process::Output {
    let mut child = std::process::Command::new(bin)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("try_wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{bin} {args:?} did not finish within 60 s");
        }
        thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}
