//! A client without HTTP/3 has no QUIC endpoint: reqwest (with its `http3` feature) would give every client
//! built inside a tokio runtime a UDP socket of its own, which reqwest-bench's TCP configuration avoids
//! (src/tls.rs, "QUIC only when asked"); a client with HTTP/3 has one. Its own test binary, so that no other
//! test opens files while this one counts them.

use std::time::Duration;

use reqwest_bench::{BlockingClient, Client, ClientOptions, Http2, TlsConfig};

/// The process's open file descriptors that are sockets.
fn sockets() -> usize {
    let fds = std::fs::read_dir("/proc/self/fd").unwrap().flatten();
    fds.filter(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))).count()
}

#[test]
fn only_a_client_with_http3_has_a_udp_socket() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let _inside = rt.enter();
    let before = sockets();
    let mut kept = Vec::new();
    for tls in [TlsConfig::system(), TlsConfig::insecure()] {
        for http2 in [Http2::Off, Http2::Alpn, Http2::PriorKnowledge] {
            let options = ClientOptions { tls: tls.clone(), http2, ..ClientOptions::new(Duration::from_secs(1)) };
            kept.push(Client::with_options(&options).unwrap());
        }
    }
    assert_eq!(sockets(), before, "no socket before a request, over TCP");
    let h3 = ClientOptions { http3: true, ..ClientOptions::new(Duration::from_secs(1)) };
    let client = Client::with_options(&h3).unwrap();
    assert_eq!(sockets(), before + 1, "the QUIC endpoint's UDP socket");
    drop(client);
    drop(_inside);
    // a blocking client's runtime is its own (with a socket of its own: tokio's signal driver), the QUIC
    // endpoint one more
    let before = sockets();
    let blocking = BlockingClient::with_options(&ClientOptions::new(Duration::from_secs(1))).unwrap();
    let runtime = sockets() - before;
    drop(blocking);
    let blocking = BlockingClient::with_options(&h3).unwrap();
    assert_eq!(sockets() - before, runtime + 1);
    drop(blocking);
}
