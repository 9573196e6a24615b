//! The flags around HTTP/3: `--no-http3`, `--udp-buffer`, `--tls-version` (1.2 has no HTTP/3), a UDP port
//! that is taken (one line, exit 1), and `--tls-name` over HTTP/3. The real binary; every wait is bounded.

use crate::common;

use std::net::{SocketAddr, TcpListener, UdpSocket};

use clientbench_server::{StatsSnapshot, HELLO};
use common::clients::{ca, client, url, Client, Http};
use common::{run_to_completion, spawn_server, TIMEOUT};
use reqwest::Version;

async fn stats(server: &common::Server) -> StatsSnapshot {
    let resp = client(server, Http::Two).get(url(server, "/stats")).send().await.expect("/stats");
    serde_json::from_slice(&resp.bytes().await.unwrap()).expect("/stats is JSON")
}

/// Whether a UDP socket can be bound to `addr` (nothing else holds it).
fn udp_free(addr: SocketAddr) -> bool {
    UdpSocket::bind(addr).is_ok()
}

/// `--tls` holds the TCP listener's port over UDP too; `--no-http3` leaves it alone and says so in the
/// listening line and /stats, serving HTTPS as before.
#[tokio::test]
async fn no_http3_leaves_udp_alone() {
    let on = spawn_server(&["--tls"], None);
    let h3 = on.http3.expect("HTTP/3 on with --tls");
    assert_eq!(h3.addr, on.addr, "the same address and port number");
    assert!(!udp_free(on.addr), "the server holds UDP {}", on.addr);

    let off = spawn_server(&["--tls", "--no-http3"], None);
    assert!(off.http3.is_none(), "{}", off.line);
    assert!(off.line.contains(",\"http3\":false}"), "{}", off.line);
    assert!(udp_free(off.addr), "UDP {} is free", off.addr);
    let resp = client(&off, Http::One).get(url(&off, "/")).send().await.unwrap();
    assert_eq!(resp.text().await.unwrap(), HELLO);
    let s = stats(&off).await;
    assert_eq!((s.udp_recv_buffer, s.udp_send_buffer, s.quic_connections), (None, None, 0), "{s:?}");

    let plain = spawn_server(&[], None);
    assert!(plain.http3.is_none() && udp_free(plain.addr), "{}", plain.line);
}

/// QUIC is TLS 1.3 only: `--tls-version 1.2` serves no HTTP/3, `--tls-version 1.3` does.
#[test]
fn tls_version_12_has_no_http3() {
    assert!(spawn_server(&["--tls", "--tls-version", "1.2"], None).http3.is_none());
    assert!(spawn_server(&["--tls", "--tls-version", "1.3"], None).http3.is_some());
}

/// `--udp-buffer` asks for that size each way: 64 KiB is below every cap, so Linux grants it (and reports
/// it doubled); the listening line and /stats agree. The default, 4 MiB, is granted up to the kernel's cap
/// (`net.core.rmem_max`), or whole when the server may pass it (CAP_NET_ADMIN).
#[tokio::test]
async fn udp_buffer_sizes_are_set_and_reported() {
    let server = spawn_server(&["--tls", "--udp-buffer", "65536"], None);
    let h3 = server.http3.expect("HTTP/3 on");
    assert_eq!((h3.recv_buffer, h3.send_buffer), (131_072, 131_072), "{}", server.line);
    let s = stats(&server).await;
    assert_eq!((s.udp_recv_buffer, s.udp_send_buffer), (Some(131_072), Some(131_072)), "{s:?}");

    let default = spawn_server(&["--tls"], None).http3.expect("HTTP/3 on");
    let cap = |file: &str| -> u64 { std::fs::read_to_string(file).unwrap().trim().parse().unwrap() };
    let asked = 2 * 4 * 1024 * 1024;
    let floor = |max: u64| asked.min(2 * max);
    assert!(
        (floor(cap("/proc/sys/net/core/rmem_max"))..=asked).contains(&default.recv_buffer),
        "recv {}",
        default.recv_buffer
    );
    assert!(
        (floor(cap("/proc/sys/net/core/wmem_max"))..=asked).contains(&default.send_buffer),
        "send {}",
        default.send_buffer
    );
}

/// A UDP port another socket holds: `--tls` on that port number fails with one line naming UDP and the way
/// out (exit 1, nothing on stdout); with `--no-http3` the same port serves.
#[test]
fn a_taken_udp_port_is_a_one_line_error() {
    // a UDP port whose TCP twin is free
    let (holder, port) = (0..50)
        .find_map(|_| {
            let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
            let port = udp.local_addr().unwrap().port();
            TcpListener::bind(("127.0.0.1", port)).ok().map(|_| (udp, port))
        })
        .expect("a UDP port with a free TCP twin");
    let port_arg = port.to_string();
    let (status, out, err) = run_to_completion(&["--tls", "--port", &port_arg]);
    assert_eq!(status.code(), Some(1), "{err}");
    assert_eq!(out, "");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("clientbench-server: failed to bind UDP 127.0.0.1:"), "{err}");
    assert!(err.contains("--no-http3") && !err.contains("panicked"), "{err}");

    let server = spawn_server(&["--tls", "--no-http3", "--port", &port_arg], None);
    assert_eq!(server.addr.port(), port);
    drop(holder);
}

/// Bad values and combinations are refused before anything is bound (exit 2, the flag named).
#[test]
fn bad_flags_are_refused() {
    let cases: [(&[&str], &str); 8] = [
        (&["--tls", "--udp-buffer", "0"], "--udp-buffer"),
        (&["--tls", "--udp-buffer", "4MiB"], "--udp-buffer"),
        (&["--tls", "--udp-buffer", "2147483648"], "--udp-buffer"),
        (&["--udp-buffer", "65536"], "--tls"),
        (&["--tls", "--no-http3", "--udp-buffer", "65536"], "--no-http3"),
        (&["--tls", "--tls-version", "1.2", "--udp-buffer", "65536"], "TLS 1.3"),
        (&["--tls-name", "myhost"], "--tls"),
        (&["--tls", "--tls-name", "my host"], "neither an IP address nor a DNS name"),
    ];
    for (args, mention) in cases {
        let mut all = vec!["--port", "0"];
        all.extend_from_slice(args);
        let (status, out, err) = run_to_completion(&all);
        assert_eq!(status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(out, "", "{args:?}");
        assert!(err.contains(mention), "{args:?}: {err}");
    }
    let (status, _, err) =
        run_to_completion(&["--port", "0", "--tls", "--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-name", "x"]);
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains("--tls-name") && err.contains("--tls-cert"), "{err}");
}

/// `--tls-name`: a client that knows the server by that name verifies it over HTTP/3 as over HTTPS (the one
/// certificate serves both); an unknown name fails verification.
#[tokio::test]
async fn tls_name_verifies_over_http3() {
    let server = spawn_server(&["--tls", "--tls-name", "bench-host.example"], None);
    let port = server.addr.port();
    let named = |name: &str, http: Http| {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let b = reqwest::Client::builder().tls_certs_only([ca(&server)]).no_proxy().timeout(TIMEOUT);
        let b = b.resolve(name, server.addr);
        let b = if http == Http::Three { b.http3_prior_knowledge() } else { b.http1_only() };
        Client { inner: b.build().unwrap(), http }
    };
    for http in [Http::One, Http::Three] {
        let c = named("bench-host.example", http);
        let resp = c.get(format!("https://bench-host.example:{port}/")).send().await.expect("verified");
        let version = if http == Http::Three { Version::HTTP_3 } else { Version::HTTP_11 };
        assert_eq!(resp.version(), version);
        assert_eq!(resp.text().await.unwrap(), HELLO);
        let c = named("other-host.example", http);
        let err = c.get(format!("https://other-host.example:{port}/")).send().await.expect_err("not its name");
        let text = format!("{err:?}");
        assert!(text.contains("NotValidForName") || text.contains("not valid for name"), "{http:?}: {text}");
    }
}
