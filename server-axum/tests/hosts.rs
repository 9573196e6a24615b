//! `--host` repeated: one port on several loopback addresses (what `clientbench run --hosts N` reaches as N
//! origins), over TCP and, with `--tls`, UDP for HTTP/3; the listening line's `urls`; `/stats`' `origins` and
//! `origin_requests` (HTTP/1.1's Host, HTTP/2 and 3's :authority); `--tls-name` for the extra addresses; an
//! address whose port is taken, a repeated or unknown `--host`. The real binary; every wait is bounded.

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpListener, UdpSocket};

use clientbench_server::{StatsSnapshot, HELLO};
use common::clients::{client, Http};
use common::{connect, read_response, run_to_completion, spawn_server, RawResponse, Server};
use reqwest::Version;

/// `--host 127.0.0.1 --host 127.0.0.2 ...` for the first `n` loopback addresses.
fn hosts(n: usize) -> Vec<String> {
    (1..=n).flat_map(|k| ["--host".to_owned(), format!("127.0.0.{k}")]).collect()
}

fn spawn(args: &[String]) -> Server {
    spawn_server(&args.iter().map(String::as_str).collect::<Vec<_>>(), None)
}

/// One HTTP/1.1 `GET` on a new connection to `addr`, naming it in `Host` as a client does.
fn get_at(addr: SocketAddr, path: &str) -> RawResponse {
    let stream = connect(addr);
    write!(&stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    read_response(&mut BufReader::new(&stream)).expect("a response").expect("not closed")
}

fn stats_at(addr: SocketAddr) -> StatsSnapshot {
    serde_json::from_slice(&get_at(addr, "/stats").body).expect("/stats is JSON")
}

/// Two addresses, one port: each answers, the listening line lists both (the first is `url`), `/stats` is one
/// set of counters for both and tells their authorities apart; SIGTERM stops both.
#[test]
fn two_addresses_share_one_port() {
    let server = spawn(&hosts(2));
    let port = server.addr.port();
    let want: Vec<SocketAddr> = vec![([127, 0, 0, 1], port).into(), ([127, 0, 0, 2], port).into()];
    assert_eq!(server.addrs, want, "{}", server.line);
    assert!(
        server.line.contains(&format!(r#""urls":["http://127.0.0.1:{port}","http://127.0.0.2:{port}"]"#)),
        "{}",
        server.line
    );
    for addr in &server.addrs {
        let resp = get_at(*addr, "/");
        assert_eq!((resp.status, &resp.body[..]), (200, HELLO.as_bytes()), "{addr}");
    }
    assert_eq!(get_at(want[1], "/bytes/10").body, b"abcdefghij");
    let s = stats_at(want[0]);
    assert_eq!((s.connections, s.requests, s.origins), (4, 4, 2), "{s:?}");
    let by_origin = BTreeMap::from([(format!("127.0.0.1:{port}"), 2), (format!("127.0.0.2:{port}"), 2)]);
    assert_eq!(s.origin_requests, by_origin);
    let (status, stderr) = server.terminate();
    assert!(status.success(), "{status:?}: {stderr}");
}

/// Four addresses: each answers HTTP/1.1 and HTTP/2 (h2c); `origins` counts four authorities whatever the
/// protocol that named them, and only grows (a second round adds requests, not origins).
#[tokio::test]
async fn four_addresses_count_four_origins() {
    let server = spawn(&hosts(4));
    assert_eq!(server.addrs.len(), 4, "{}", server.line);
    let h2c = reqwest::Client::builder().no_proxy().http2_prior_knowledge().build().unwrap();
    for addr in &server.addrs {
        assert_eq!(get_at(*addr, "/").status, 200, "{addr}");
        let resp = h2c.get(format!("http://{addr}/")).send().await.unwrap();
        assert_eq!(resp.version(), Version::HTTP_2);
        assert_eq!(resp.text().await.unwrap(), HELLO);
    }
    let s = stats_at(server.addrs[3]);
    assert_eq!((s.origins, s.requests, s.h2_requests), (4, 9, 4), "{s:?}");
    let port = server.addr.port();
    let by_origin: BTreeMap<String, u64> =
        (1..=4).map(|k| (format!("127.0.0.{k}:{port}"), if k == 4 { 3 } else { 2 })).collect();
    assert_eq!(s.origin_requests, by_origin);
    for addr in &server.addrs {
        assert_eq!(get_at(*addr, "/").status, 200);
    }
    let s = stats_at(server.addrs[0]);
    assert_eq!((s.origins, s.requests), (4, 14), "{s:?}");
}

/// With `--tls`, each address serves HTTPS and HTTP/3 at the one port, under the one certificate: the extra
/// addresses verify when `--tls-name` names them (as the runner passes), and an address it does not name fails
/// verification. `/stats` counts the HTTP/3 requests' origins too.
#[tokio::test]
async fn tls_names_the_extra_addresses() {
    let mut args = hosts(4);
    args.extend(["--tls", "--tls-name", "127.0.0.2", "--tls-name", "127.0.0.3"].map(str::to_owned));
    let server = spawn(&args);
    let h3_line = server.http3.expect("HTTP/3 on");
    assert_eq!(h3_line.addr, server.addr, "udp_addr is the first address's");
    let port = server.addr.port();
    for k in 1..=4 {
        let addr = format!("127.0.0.{k}:{port}");
        assert!(UdpSocket::bind(&addr).is_err(), "the server holds UDP {addr}");
    }
    let (h1, h2, h3) = (client(&server, Http::One), client(&server, Http::Two), client(&server, Http::Three));
    for k in 1..=3 {
        let url = format!("https://127.0.0.{k}:{port}/");
        for (c, version) in [(&h1, Version::HTTP_11), (&h2, Version::HTTP_2), (&h3, Version::HTTP_3)] {
            let resp = c.get(&url).send().await.unwrap_or_else(|e| panic!("{url} over {version:?}: {e:?}"));
            assert_eq!(resp.version(), version, "{url}");
            assert_eq!(resp.text().await.unwrap(), HELLO, "{url}");
        }
    }
    // 127.0.0.4 is served, but the certificate does not name it
    for c in [&h1, &h3] {
        let err = c.get(format!("https://127.0.0.4:{port}/")).send().await.expect_err("not its name");
        let text = format!("{err:?}");
        assert!(text.contains("NotValidForName") || text.contains("not valid for name"), "{text}");
    }
    let resp = h3.get(format!("https://127.0.0.1:{port}/stats")).send().await.unwrap();
    let s: StatsSnapshot = serde_json::from_slice(&resp.bytes().await.unwrap()).unwrap();
    assert_eq!((s.origins, s.h3_requests, s.requests), (3, 4, 10), "{s:?}");
    let by_origin: BTreeMap<String, u64> =
        (1..=3).map(|k| (format!("127.0.0.{k}:{port}"), if k == 1 { 4 } else { 3 })).collect();
    assert_eq!(s.origin_requests, by_origin);
}

/// The port is taken on one of the addresses (TCP; UDP with HTTP/3): one line naming that address, exit 1,
/// nothing on stdout, and the addresses bound before it let go.
#[test]
fn a_port_taken_on_one_address_is_one_line() {
    // a port whose 127.0.0.2 TCP is held and whose 127.0.0.1 is free
    let (holder, port) = (0..50)
        .find_map(|_| {
            let held = TcpListener::bind("127.0.0.2:0").unwrap();
            let port = held.local_addr().unwrap().port();
            TcpListener::bind(("127.0.0.1", port)).ok().map(|_| (held, port))
        })
        .expect("a port free on 127.0.0.1");
    let port_arg = port.to_string();
    let (status, out, err) = run_to_completion(&["--host", "127.0.0.1", "--host", "127.0.0.2", "--port", &port_arg]);
    assert_eq!(status.code(), Some(1), "{err}");
    assert_eq!(out, "");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with(&format!("clientbench-server: failed to bind 127.0.0.2:{port}: ")), "{err}");
    assert!(TcpListener::bind(("127.0.0.1", port)).is_ok(), "127.0.0.1:{port} let go");
    drop(holder);

    // HTTP/3: the UDP twin on the second address
    let (holder, port) = (0..50)
        .find_map(|_| {
            let held = UdpSocket::bind("127.0.0.2:0").unwrap();
            let port = held.local_addr().unwrap().port();
            let free = ["127.0.0.1", "127.0.0.2"].iter().all(|a| TcpListener::bind((*a, port)).is_ok());
            (free && UdpSocket::bind(("127.0.0.1", port)).is_ok()).then_some((held, port))
        })
        .expect("a port free but for UDP on 127.0.0.2");
    let port_arg = port.to_string();
    let (status, out, err) =
        run_to_completion(&["--tls", "--host", "127.0.0.1", "--host", "127.0.0.2", "--port", &port_arg]);
    assert_eq!(status.code(), Some(1), "{err}");
    assert_eq!(out, "");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with(&format!("clientbench-server: failed to bind UDP 127.0.0.2:{port} for HTTP/3")), "{err}");
    drop(holder);
}

/// With `--port 0`, an address that can never take the first one's port (the wildcard covers 127.0.0.1) is
/// tried with a few ports, then is one line saying so.
#[test]
fn a_port_never_free_on_every_address_gives_up_in_one_line() {
    let (status, out, err) = run_to_completion(&["--host", "127.0.0.1", "--host", "0.0.0.0", "--port", "0"]);
    assert_eq!(status.code(), Some(1), "{err}");
    assert_eq!(out, "");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("clientbench-server: failed to bind 0.0.0.0:") && err.contains("ports tried"), "{err}");
}

/// A `--host` given twice (as written, or as another spelling of one address) is refused before anything is
/// bound (exit 2); a name that does not resolve is one line (exit 1). Never a panic.
#[test]
fn a_repeated_or_unknown_host_is_one_line() {
    for args in [
        &["--host", "127.0.0.1", "--host", "127.0.0.1"][..],
        &["--host", "::1", "--host", "0:0:0:0:0:0:0:1"],
        &["--host", "localhost", "--host", "LOCALHOST"],
    ] {
        let (status, out, err) = run_to_completion(&[args, &["--port", "0"]].concat());
        assert_eq!(status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(out, "");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("is given twice"), "{args:?}: {err}");
    }
    let (status, out, err) = run_to_completion(&["--host", "127.0.0.1", "--host", "nowhere.invalid", "--port", "0"]);
    assert_eq!(status.code(), Some(1), "{err}");
    assert_eq!(out, "");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains("nowhere.invalid") && !err.contains("panicked"), "{err}");
}
