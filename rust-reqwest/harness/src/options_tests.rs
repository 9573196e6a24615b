//! The contract's flags (options.rs): what they parse to, the [`Plan`] and clients' options made from them,
//! and the one-line usage error of every bad command line.

use super::*;
use clap::Parser;

#[derive(clap::Parser, Debug)]
struct Cli {
    #[command(flatten)]
    o: Options,
}

fn parse(args: &[&str]) -> Result<Options, clap::Error> {
    Cli::try_parse_from([&["driver", "--url", "http://127.0.0.1:1/"][..], args].concat()).map(|c| c.o)
}

/// The one line a bad command line prints (without the program's name).
fn usage(args: &[&str]) -> String {
    match parse(args) {
        Err(e) => format!("error: {}", clap_message(&e)),
        Ok(o) => o.plan().map(|_| String::new()).unwrap_or_else(|e| format!("error: {e}")),
    }
}

#[test]
fn tls_flags() {
    let parse = |args: &[&str]| Cli::try_parse_from([&["driver", "--url", "https://127.0.0.1:1/"][..], args].concat());
    let o = parse(&[]).unwrap().o;
    assert_eq!((o.trust(), o.is_https()), (Trust::System, true));
    assert!(o.client_options().unwrap().tls_info);
    assert_eq!(parse(&["--insecure"]).unwrap().o.trust(), Trust::Insecure);
    assert_eq!(parse(&["--ca-file", "/x.pem"]).unwrap().o.trust(), Trust::CaFile("/x.pem".into()));
    let err = parse(&["--ca-file", "/x.pem", "--insecure"]).unwrap().o.plan().expect_err("mutually exclusive");
    assert_eq!(err, "--ca-file and --insecure exclude each other");
    let missing = parse(&["--ca-file", "/no/such/ca.pem"]).unwrap().o.client_options().unwrap_err();
    assert!(matches!(missing, TlsSetupError::Io(std::io::ErrorKind::NotFound, _)), "{missing:?}");
    let http = Cli::try_parse_from(["driver", "--url", "http://127.0.0.1:1/"]).unwrap().o;
    assert!(!http.is_https() && !http.client_options().unwrap().tls_info);
}

#[test]
fn defaults_are_a_closed_loop_of_gets() {
    let plan = parse(&[]).unwrap().plan().unwrap();
    assert_eq!(
        (plan.limit, plan.open, plan.method, plan.record),
        (Limit::Requests(100), None, Method::Get, RecordMode::Samples)
    );
    assert!(plan.body.is_empty() && plan.expect.is_none());
    assert_eq!(plan.scope, ClientScope::PerWorker);
    let o = parse(&[]).unwrap();
    assert_eq!((o.http, o.client_options().unwrap().http2), (HttpVersion::Http11, Http2::Off));
}

#[test]
fn scope_and_http_flags() {
    let o = parse(&["--client-scope", "shared", "--http", "2"]).unwrap();
    assert_eq!((o.plan().unwrap().scope, o.http), (ClientScope::Shared, HttpVersion::Http2));
    // HTTP/2 is prior knowledge over http:// and ALPN over https://
    assert_eq!(o.client_options().unwrap().http2, Http2::PriorKnowledge);
    let tls = Cli::try_parse_from(["driver", "--url", "https://127.0.0.1:1/", "--http", "2"]).unwrap().o;
    assert_eq!(tls.client_options().unwrap().http2, Http2::Alpn);
    assert_eq!((ClientScope::Shared.as_str(), HttpVersion::Http2.as_str()), ("shared", "2"));
    assert!(parse(&["--client-scope", "shared", "--connection", "keep-alive"]).unwrap().plan().is_ok());
}

#[test]
fn http3_is_https_only() {
    let tls = |args: &[&str]| Cli::try_parse_from([&["driver", "--url", "HTTPS://127.0.0.1:1/"][..], args].concat());
    let o = tls(&["--http", "3", "--client-scope", "shared"]).unwrap().o;
    assert!(o.plan().is_ok());
    let co = o.client_options().unwrap();
    assert_eq!((o.http.as_str(), co.http3, co.http2, co.tls_info), ("3", true, Http2::Off, true));
    assert!(!tls(&["--http", "2"]).unwrap().o.client_options().unwrap().http3);
    let err = parse(&["--http", "3"]).unwrap().plan().unwrap_err();
    assert!(err.starts_with("--http: 3 is HTTP/3 over QUIC, which needs https:// URLs"), "{err}");
    // targets replace the URL: each of them must be https://
    let dir = std::env::temp_dir().join(format!("harness-h3-targets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("targets.txt");
    std::fs::write(&file, "GET https://h/a\nGET Https://h/b\n").unwrap();
    let f = file.to_str().unwrap();
    assert_eq!(parse(&["--http", "3", "--targets", f]).unwrap().plan().unwrap().targets.len(), 2);
    std::fs::write(&file, "GET https://h/a\nGET http://h/b\n").unwrap();
    let err = parse(&["--http", "3", "--targets", f]).unwrap().plan().unwrap_err();
    assert!(err.starts_with("--http: 3 is HTTP/3 over QUIC") && err.contains("\"http://h/b\""), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn open_loop_flags() {
    let plan = parse(&["--rate", "250.5", "--duration", "1.5", "--arrival", "poisson", "--seed", "7"])
        .unwrap()
        .plan()
        .unwrap();
    assert_eq!(plan.open, Some(Open { rate: 250.5, arrival: Arrival::Poisson, seed: 7 }));
    assert_eq!(plan.limit, Limit::Duration(1_500_000_000));
    let plan = parse(&["--rate", "10", "--requests", "3"]).unwrap().plan().unwrap();
    assert_eq!(plan.limit, Limit::Requests(3));
    assert_eq!(plan.open.map(|o| (o.arrival, o.seed)), Some((Arrival::Uniform, 1)));
    // 1,000,000 requests/s per worker is the finest schedule
    assert!(parse(&["--rate", "2000000", "--workers", "2"]).unwrap().plan().is_ok());
}

#[test]
fn bodies_and_their_upload_line() {
    assert_eq!(&body_pattern(30)[..], b"abcdefghijklmnopqrstuvwxyzabcd");
    assert_eq!(&upload_line(b"abc")[..], b"3 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    let plan = parse(&["--method", "PUT", "--body-size", "3"]).unwrap().plan().unwrap();
    assert_eq!((&plan.body[..], plan.method), (&b"abc"[..], Method::Put));
    let line = |plan: &Plan| plan.expect.as_ref().map(|e| e.line.clone());
    assert_eq!(line(&plan).as_deref(), Some(&upload_line(b"abc")[..]));
    let plan = parse(&["--method", "POST"]).unwrap().plan().unwrap();
    let empty = "0 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    assert_eq!((plan.body.len(), line(&plan).as_deref()), (0, Some(empty.as_bytes())));
    assert!(matches!(plan.outgoing(), Outgoing::Whole(b) if b.is_empty()));
}

#[test]
fn streamed_bodies() {
    let o = parse(&[]).unwrap();
    assert_eq!((o.upload, o.download, o.chunk_size()), (Transfer::Whole, Transfer::Whole, 65536));
    let args = ["--method", "PUT", "--body-size", "100000", "--upload", "stream", "--chunk-size", "4096"];
    let plan = parse(&args).unwrap().plan().unwrap();
    assert_eq!(
        (plan.upload, plan.download, plan.chunk_size, plan.piece()),
        (Transfer::Stream, Transfer::Whole, 4096, None)
    );
    // the body is never made whole: chunks cut from the pattern, the line hashed from it
    assert!(plan.body.is_empty());
    let e = plan.expect.as_ref().unwrap();
    assert_eq!((e.line.clone(), e.body_len), (upload_line(&body_pattern(100_000)), 100_000));
    let Outgoing::Stream(chunks) = plan.outgoing() else { panic!("a stream") };
    let chunks: Vec<Bytes> = chunks.collect();
    assert_eq!((chunks.len(), chunks[0].len(), chunks[24].len()), (25, 4096, 100_000 - 24 * 4096));
    assert_eq!(chunks.concat(), body_pattern(100_000).to_vec());
    // a streamed download of a GET; the chunk size at its bounds
    let plan = parse(&["--download", "stream", "--chunk-size", "1"]).unwrap().plan().unwrap();
    assert_eq!((plan.piece(), plan.expect.is_none()), (Some(1), true));
    assert!(matches!(plan.outgoing(), Outgoing::None));
    assert_eq!(parse(&["--download", "stream", "--chunk-size", "16777216"]).unwrap().chunk_size(), 16 << 20);
    // --chunk-size with whole bodies is accepted (and unused)
    assert!(parse(&["--chunk-size", "10"]).unwrap().plan().is_ok());
}

/// `--phases` (raw/4): a switch, off by default; on, the plan records the phases and the clients time their
/// connections, whatever else is asked.
#[test]
fn phases_is_a_switch() {
    let o = parse(&[]).unwrap();
    assert!(!o.phases && !o.plan().unwrap().phases && !o.client_options().unwrap().phases);
    for more in [&[][..], &["--record", "histogram"], &["--http", "2", "--connection", "new"], &["--rate", "5"]] {
        let o = parse(&[&["--phases"][..], more].concat()).unwrap();
        assert!(o.phases && o.plan().unwrap().phases && o.client_options().unwrap().phases, "{more:?}");
    }
    assert_eq!(parse(&["--phases"]).unwrap().plan().unwrap().urls().collect::<Vec<_>>(), ["http://127.0.0.1:1/"]);
    assert!(parse(&["--phases", "yes"]).is_err(), "it takes no value");
}

#[test]
fn targets_replace_the_url() {
    let dir = std::env::temp_dir().join(format!("harness-options-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (file, body) = (dir.join("targets.txt"), dir.join("b.bin"));
    std::fs::write(&body, b"0123456789").unwrap();
    std::fs::write(&file, format!("GET http://h/a\nPOST http://h/b @{}\nPUT http://h/c\n", body.display())).unwrap();
    let f = file.to_str().unwrap();
    let plan = parse(&["--targets", f, "--upload", "stream", "--chunk-size", "4"]).unwrap().plan().unwrap();
    assert_eq!((plan.targets.len(), plan.method, plan.expect.is_none()), (3, Method::Get, true));
    // worker w's request k: target (w + k) mod 3
    let urls: Vec<&str> = (0..5).map(|k| plan.target(2, k).unwrap().url.as_str()).collect();
    assert_eq!(urls, ["http://h/c", "http://h/a", "http://h/b", "http://h/c", "http://h/a"]);
    let [a, b, c] = &plan.targets[..] else { panic!("three targets") };
    assert!(matches!(plan.target_outgoing(a), Outgoing::None));
    let Outgoing::Stream(chunks) = plan.target_outgoing(b) else { panic!("a stream") };
    assert_eq!(chunks.collect::<Vec<_>>(), [&b"0123"[..], b"4567", b"89"]);
    assert!(matches!(plan.target_outgoing(c), Outgoing::Stream(s) if s.is_empty()));
    let plan = parse(&["--targets", f]).unwrap().plan().unwrap();
    assert!(matches!(plan.target_outgoing(b), Outgoing::Whole(w) if &w[..] == b"0123456789"));
    assert!(matches!(plan.target_outgoing(c), Outgoing::Whole(w) if w.is_empty()));
    assert!(parse(&[]).unwrap().plan().unwrap().target(0, 0).is_none());
    // the URLs requests go to (the phases' keys are theirs): the targets', not --url's
    assert_eq!(plan.urls().collect::<Vec<_>>(), ["http://h/a", "http://h/b", "http://h/c"]);
    for (args, flag) in [
        (&["--method", "POST"][..], "--method"),
        (&["--method", "GET"], "--method"),
        (&["--body-size", "0"], "--body-size"),
    ] {
        let err = parse(&[&["--targets", f][..], args].concat()).unwrap().plan().unwrap_err();
        assert!(err.starts_with(flag) && err.contains("--targets"), "{args:?}: {err}");
    }
    std::fs::write(&file, "GET http://h/a\nGET http://h/b extra\n").unwrap();
    let err = parse(&["--targets", f]).unwrap().plan().unwrap_err();
    assert!(err.starts_with(&format!("--targets {f}, line 2: ")), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_usage_is_one_line_naming_the_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["--rate", "0"], "--rate"),
        (&["--rate", "-5"], "--rate"),
        (&["--rate", "abc"], "--rate"),
        (&["--rate", "nan"], "--rate"),
        (&["--rate", "inf"], "--rate"),
        (&["--rate", "1000001", "--workers", "1"], "--rate"),
        (&["--rate", "20000001", "--workers", "20"], "--rate"),
        (&["--duration", "5"], "--duration"),
        (&["--duration", "5", "--rate", "10", "--requests", "3"], "--duration"),
        (&["--duration", "-1", "--rate", "10"], "--duration"),
        (&["--duration", "0", "--rate", "10"], "--duration"),
        (&["--body-size", "-1", "--method", "POST"], "--body-size"),
        (&["--body-size", "1073741825", "--method", "POST"], "--body-size"),
        (&["--body-size", "1e3", "--method", "POST"], "--body-size"),
        (&["--body-size", "10"], "--body-size"),
        (&["--method", "DELETE"], "--method"),
        (&["--arrival", "bursty", "--rate", "1"], "--arrival"),
        (&["--record", "all"], "--record"),
        (&["--requests", "0"], "--requests"),
        (&["--seed", "-1"], "--seed"),
        (&["--workers", "-2"], "--workers"),
        (&["--workers", "0"], "--workers"),
        (&["--requests", "-2"], "--requests"),
        (&["--warmup", "-2"], "--warmup"),
        (&["--client-scope", "global"], "--client-scope"),
        // HTTP/3 is QUIC, always TLS: not over the http:// URL of these cases
        (&["--http", "3"], "--http"),
        (&["--http", "4"], "--http"),
        (&["--http", "1.0"], "--http"),
        (&["--connection", "new", "--client-scope", "shared"], "--connection"),
        // the contract's rules (docs/raw-format.md, "Command line")
        (&["--arrival", "poisson"], "--arrival"),
        (&["--seed", "3"], "--seed"),
        (&["--seed", "18446744073709551616", "--rate", "1"], "--seed"),
        (&["--timeout", "0"], "--timeout"),
        (&["--timeout", "-1"], "--timeout"),
        (&["--timeout", "86401"], "--timeout"),
        (&["--timeout", "nan"], "--timeout"),
        // streamed bodies and targets (docs/raw-format.md, "Command line")
        (&["--chunk-size", "0"], "--chunk-size"),
        (&["--chunk-size", "-1"], "--chunk-size"),
        (&["--chunk-size", "16777217"], "--chunk-size"),
        (&["--chunk-size", "64k"], "--chunk-size"),
        (&["--upload", "chunked"], "--upload"),
        (&["--download", "lazy"], "--download"),
        (&["--upload", "stream"], "--upload"),
        (&["--upload", "stream", "--method", "GET"], "--upload"),
        (&["--targets", "/no/such/targets.txt"], "--targets"),
    ];
    for (args, flag) in cases {
        let line = usage(args);
        assert!(line.starts_with("error: ") && line.contains(flag), "{args:?}: {line:?}");
        assert!(!line.contains('\n'), "{args:?}: {line:?}");
    }
    assert!(parse(&["--body-size", "1073741824", "--method", "POST"]).is_ok());
    // a GET with no body, said explicitly
    let plan = parse(&["--body-size", "0", "--method", "GET"]).unwrap().plan().unwrap();
    assert!(plan.body.is_empty() && plan.expect.is_none());
    let missing = clap_message(&Cli::try_parse_from(["driver"]).unwrap_err());
    assert_eq!(missing, "--url: required");
    assert!(parse(&["--timeout", "86400", "--rate", "1", "--seed", "18446744073709551615"]).unwrap().plan().is_ok());
}

#[test]
fn an_unusable_url_is_bad_usage() {
    let plan = |url: &str| Cli::try_parse_from(["driver", "--url", url]).unwrap().o.plan();
    for url in ["ftp://127.0.0.1/", "http://", "127.0.0.1:8080/", "http://h:0/", "http://h:99999/", "http://h /", ""] {
        let err = plan(url).expect_err(url);
        assert!(err.starts_with("--url: ") && !err.contains('\n'), "{url}: {err}");
    }
    for url in ["http://127.0.0.1:1/", "https://example.com", "HTTP://[::1]:8080/x?y", "http://h:/"] {
        assert!(plan(url).is_ok(), "{url}");
    }
}

/// clap's errors in the contract's wording (python/clientbench/schema/contract.json; every case of it runs against the
/// built driver in python/tests/test_contract.py).
#[test]
fn clap_errors_are_the_contracts_wording() {
    for (args, said) in [
        (&["--workers", "0"][..], "--workers: must be a whole number >= 1, got '0'"),
        (&["--warmup", "-1"], "--warmup: must be a whole number >= 0, got '-1'"),
        (&["--seed", "18446744073709551616"], "--seed: must be a whole number from 0 to 18446744073709551615, got"),
        (&["--timeout", "86401"], "--timeout: must be a positive number, at most 86400, got '86401'"),
        (&["--connection", "bogus"], "--connection: must be one of keep-alive, new, got 'bogus'"),
        (&["--http", "bogus"], "--http: must be one of 1.1, 2, 3, got 'bogus'"),
        (&["--no-such-flag"], "--no-such-flag: unknown flag"),
        (&["--warmup"], "--warmup: needs a value"),
    ] {
        let line = usage(args);
        assert!(line.starts_with(&format!("error: {said}")), "{args:?}: {line:?}");
    }
}
