//! reqwest-driver's POST and PUT (`--method`, `--body-size`): the server's `/upload` line (or the body
//! echoed) is checked on every response, a wrong one is a counted failure, in both modes and both loops.

use crate::common;

use common::{document, fixed_server, server, total};

/// What `/upload` answers for the body of `--body-size n` (`abcd...`), computed here from its definition.
fn upload_line(n: usize) -> String {
    use sha2::{Digest, Sha256};
    let body: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
    let hex: String = Sha256::digest(&body).iter().map(|b| format!("{b:02x}")).collect();
    format!("{n} {hex}")
}

#[test]
fn uploads_match_the_servers_digest() {
    let url = format!("{}/upload", server());
    for (mode, method, size) in
        [("async", "POST", "0"), ("sync", "PUT", "3"), ("async", "PUT", "1000003"), ("sync", "POST", "65536")]
    {
        let args = ["--url", &url, "--mode", mode, "--method", method, "--body-size", size, "--workers", "2"];
        let doc = document(&[&args[..], &["--requests", "3", "--warmup", "1"]].concat());
        let wl = &doc["workload"];
        assert_eq!((wl["method"].as_str(), wl["body_size"].to_string()), (Some(method), size.to_string()));
        assert_eq!(total(&doc, "failure_count"), 0, "{mode} {method} {size}: {doc}");
        let line = upload_line(size.parse().unwrap());
        assert_eq!(total(&doc, "bytes"), 6 * line.len() as u64, "every response is the line");
    }
    // the open loop uploads too
    let args = ["--url", &url, "--method", "PUT", "--body-size", "100", "--rate", "100", "--duration", "0.3"];
    let doc = document(&[&args[..], &["--workers", "2"]].concat());
    assert!(total(&doc, "count") >= 25 && total(&doc, "failure_count") == 0, "{doc}");
}

/// A 200 answer that is the body sent is right too: the server's `/echo` answers the body itself
/// (docs/raw-format.md, "Request bodies").
#[test]
fn an_echo_of_the_body_is_right() {
    let echo = format!("{}/echo", server());
    for (mode, size) in [("async", "3"), ("sync", "3"), ("async", "200000"), ("sync", "67")] {
        let args = ["--url", &echo, "--mode", mode, "--method", "POST", "--body-size", size, "--workers", "2"];
        let doc = document(&[&args[..], &["--requests", "3"]].concat());
        assert_eq!(total(&doc, "failure_count"), 0, "{mode} {size}: {doc}");
        assert_eq!(total(&doc, "bytes"), 6 * size.parse::<u64>().unwrap(), "{mode} {size}");
    }
}

/// A 200 with another body is a failure `Error: upload digest mismatch: ...`: a server that answers a line
/// with a wrong digest, and one that answers as many bytes as were sent, but not them.
#[test]
fn a_wrong_answer_is_a_counted_failure() {
    let wrong = fixed_server("3 0000000000000000000000000000000000000000000000000000000000000000");
    let not_echo = fixed_server("abd");
    let expected = format!("expected {:?} (or the 3 bytes sent, echoed)", upload_line(3));
    for (url, got) in [(wrong.as_str(), "got \"3 00000000"), (not_echo.as_str(), "got \"abd\"")] {
        for mode in ["async", "sync"] {
            let args = ["--url", url, "--mode", mode, "--method", "POST", "--body-size", "3", "--workers", "1"];
            let doc = document(&[&args[..], &["--requests", "4"]].concat());
            let w = &doc["workers"][0];
            assert_eq!(w["failure_count"], 4, "{url} {mode}");
            for (k, f) in w["failures"].as_array().unwrap().iter().enumerate() {
                // `status` only for a `status <code>` failure (docs/raw-format.md, "Failure reasons")
                assert_eq!((f["index"].as_u64(), f["status"].is_null()), (Some(k as u64), true));
                let reason = f["reason"].as_str().unwrap();
                assert!(reason.starts_with("Error: upload digest mismatch: "), "{reason}");
                assert!(reason.contains(&expected) && reason.contains(got), "{reason}");
            }
        }
    }
    // a GET is not checked: the same server's answer is a success
    let doc = document(&["--url", &wrong, "--workers", "1", "--requests", "2"]);
    assert_eq!(total(&doc, "failure_count"), 0);
}

/// A POST to an endpoint that does not take one is a `status 405` failure, not a digest mismatch.
#[test]
fn another_status_is_reported_as_such() {
    let url = format!("{}/", server());
    let doc = document(&["--url", &url, "--method", "POST", "--body-size", "5", "--workers", "1", "--requests", "2"]);
    let f = &doc["workers"][0]["failures"][0];
    assert_eq!((f["reason"].as_str(), f["status"].as_u64()), (Some("status 405"), Some(405)));
}
