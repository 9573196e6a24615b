//! A client without HTTP/3 has no QUIC endpoint: reqwest (with its `http3` feature) would give every client
//! built inside a tokio runtime a UDP socket of its own, which reqwest-bench's TCP configuration avoids
//! (src/tls.rs, "QUIC only when asked"); a client with HTTP/3 has one. The test counts this process's UDP
//! sockets only: the other tests of this binary run beside it, and open TCP sockets alone.

use std::collections::HashSet;
use std::time::Duration;

use reqwest_bench::{BlockingClient, Client, ClientOptions, Http2, TlsConfig};

/// The process's open file descriptors that are UDP sockets (IPv4 or IPv6): the socket inodes of /proc/self/fd
/// that the namespace's UDP tables list.
fn udp_sockets() -> usize {
    let mut udp = HashSet::new();
    for table in ["/proc/self/net/udp", "/proc/self/net/udp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
        udp.extend(text.lines().skip(1).filter_map(|line| line.split_whitespace().nth(9).map(str::to_owned)));
    }
    let fds = std::fs::read_dir("/proc/self/fd").unwrap().flatten();
    fds.filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|link| {
            let link = link.to_string_lossy();
            link.strip_prefix("socket:[").and_then(|rest| rest.strip_suffix(']')).map(str::to_owned)
        })
        .filter(|inode| udp.contains(inode))
        .count()
}

#[test]
fn only_a_client_with_http3_has_a_udp_socket() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let inside = rt.enter();
    let before = udp_sockets();
    let mut kept = Vec::new();
    for tls in [TlsConfig::system(), TlsConfig::insecure()] {
        for http2 in [Http2::Off, Http2::Alpn, Http2::PriorKnowledge] {
            let options = ClientOptions { tls: tls.clone(), http2, ..ClientOptions::new(Duration::from_secs(1)) };
            kept.push(Client::with_options(&options).unwrap());
        }
    }
    assert_eq!(udp_sockets(), before, "no UDP socket for a client over TCP");
    let h3 = ClientOptions { http3: true, ..ClientOptions::new(Duration::from_secs(1)) };
    let client = Client::with_options(&h3).unwrap();
    assert_eq!(udp_sockets(), before + 1, "the QUIC endpoint's UDP socket");
    drop(client);
    drop(inside);
    drop(kept);
    // the endpoint's socket is closed by its driver task, on the runtime's worker, some time after the client is
    // dropped: the runtime's shutdown ends that task
    drop(rt);
    assert_eq!(udp_sockets(), before, "the QUIC endpoint closed with its client and runtime");
    // a blocking client's runtime is its own
    let blocking = BlockingClient::with_options(&ClientOptions::new(Duration::from_secs(1))).unwrap();
    assert_eq!(udp_sockets(), before, "no UDP socket for a blocking client over TCP");
    drop(blocking);
    let blocking = BlockingClient::with_options(&h3).unwrap();
    assert_eq!(udp_sockets(), before + 1, "a blocking client with HTTP/3: its QUIC endpoint");
    drop(blocking);
}
