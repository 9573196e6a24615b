//! The benchmark server with HTTP/3, in the test process, as the binary serves it with `--tls`: HTTPS on TCP
//! and QUIC on UDP at the same port of 127.0.0.1, one router and one set of counters (clientbench-server's
//! `http3` module), its certificate signed by a generated CA. The HTTP/3 tests of reqwest-bench (client_http3.rs)
//! and of the driver (http3.rs) include this file by path.

// Each test crate that includes this module uses only part of it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use axum::extract::Request;
use axum::ServiceExt;
use clientbench_server::tls::TlsListener;
use clientbench_server::{http3, tls, udp, Stats};

/// A running server: `https://127.0.0.1:PORT` over TCP and QUIC.
pub struct H3Server {
    pub url: String,
    pub stats: Arc<Stats>,
    /// The CA's PEM file (removed on drop).
    pub ca_file: PathBuf,
}

impl Drop for H3Server {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.ca_file);
    }
}

/// Start an [`H3Server`] for the rest of the test process.
pub fn h3_server() -> H3Server {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let identity = tls::generate(&tls::SERVER_NAMES).unwrap();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let ca_file = std::env::temp_dir().join(format!("reqwest-h3-test-{}-{n}-ca.pem", std::process::id()));
    std::fs::write(&ca_file, identity.ca_pem.as_deref().unwrap()).unwrap();
    let quic = tls::quic_server_config(&identity).unwrap();
    let tcp = tls::server_config(identity, None).unwrap();
    let stats = Arc::new(Stats::default());
    let shared = stats.clone();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async move {
            // a TCP port whose UDP twin is free (the two port spaces are apart: it nearly always is)
            let (listener, quic_listener) = loop {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let addr: SocketAddr = listener.local_addr().unwrap();
                if let Ok(q) = http3::Listener::bind(addr, udp::DEFAULT_BUFFER, quic.clone()) {
                    break (listener, q);
                }
            };
            tx.send(listener.local_addr().unwrap()).unwrap();
            let counted = clientbench_server::counted_app(shared.clone());
            // never stopped: the sender lives as long as the runtime's task
            let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
            let h3 = http3::serve(quic_listener, counted.clone(), shared.clone(), stop_rx);
            let app = ServiceExt::<Request>::into_make_service(counted);
            let tcp = axum::serve(TlsListener::new(listener, tcp, shared), app);
            let _ = tokio::join!(h3, tcp);
            drop(stop_tx);
        });
    });
    let addr = rx.recv_timeout(Duration::from_secs(10)).expect("the server starts");
    H3Server { url: format!("https://{addr}"), stats, ca_file }
}

/// A UDP port of 127.0.0.1 where nobody listens (bound, then closed).
pub fn closed_udp_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
