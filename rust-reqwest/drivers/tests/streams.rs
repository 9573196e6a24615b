//! reqwest-driver's streamed bodies (`--upload stream`, `--download stream`, `--chunk-size`) and targets
//! (`--targets`) against the benchmark server (docs/raw-format.md, "Streamed bodies", "Targets"), in both
//! modes: the answers checked as a whole body's are, the bytes counted, the memory bounded by the chunks.

use crate::common;

use common::{document, fixed_server, server, total};
use serde_json::Value;

/// What `/upload` answers for the body of `--body-size n` (`abcd...`), computed here from its definition.
fn upload_line(body: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let hex: String = Sha256::digest(body).iter().map(|b| format!("{b:02x}")).collect();
    format!("{} {hex}", body.len())
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| b'a' + (i % 26) as u8).collect()
}

fn workload_of(doc: &Value) -> (String, String, u64, Value) {
    let wl = &doc["workload"];
    let s = |k: &str| wl[k].as_str().unwrap().to_owned();
    (s("upload"), s("download"), wl["chunk_size"].as_u64().unwrap(), wl["targets"].clone())
}

#[test]
fn streamed_uploads_and_downloads_are_checked_and_counted() {
    let base = server();
    let size = 1_000_003;
    let line = upload_line(&pattern(size)).len() as u64;
    for mode in ["async", "sync"] {
        // (path, upload, download, chunk, the answer's length)
        for (path, upload, download, chunk, answer) in [
            ("/upload", "stream", "whole", "16384", line),
            ("/upload", "stream", "stream", "7", line),
            ("/echo", "stream", "stream", "65536", size as u64),
            ("/echo", "whole", "stream", "1000", size as u64),
            ("/echo", "stream", "whole", "1000", size as u64),
        ] {
            let url = format!("{base}{path}");
            let args = ["--url", &url, "--mode", mode, "--method", "PUT", "--body-size", "1000003"];
            let flags = ["--upload", upload, "--download", download, "--chunk-size", chunk];
            let doc = document(&[&args[..], &flags, &["--workers", "2", "--requests", "2", "--warmup", "1"]].concat());
            let what = format!("{mode} {path} {upload} {download} {chunk}");
            assert_eq!(total(&doc, "failure_count"), 0, "{what}: {doc}");
            assert_eq!(total(&doc, "bytes"), 4 * answer, "{what}");
            let wl = workload_of(&doc);
            assert_eq!(wl, (upload.into(), download.into(), chunk.parse().unwrap(), Value::Null), "{what}");
            assert_eq!(
                (doc["workload"]["method"].as_str(), doc["workload"]["body_size"].as_u64()),
                (Some("PUT"), Some(size as u64))
            );
        }
        // the smallest chunk, both ways
        let url = format!("{base}/echo");
        let args = ["--url", &url, "--mode", mode, "--method", "POST", "--body-size", "1000", "--chunk-size", "1"];
        let flags = ["--upload", "stream", "--download", "stream", "--workers", "1", "--requests", "2"];
        let doc = document(&[&args[..], &flags].concat());
        assert_eq!((total(&doc, "failure_count"), total(&doc, "bytes")), (0, 2000), "{mode}: {doc}");
        // a streamed GET
        let url = format!("{base}/bytes/300000");
        let args = ["--url", &url, "--mode", mode, "--download", "stream", "--chunk-size", "4096", "--workers", "2"];
        let doc = document(&[&args[..], &["--requests", "3"]].concat());
        assert_eq!((total(&doc, "failure_count"), total(&doc, "bytes")), (0, 6 * 300_000), "{mode}");
        // the flags left out are recorded as their defaults
        let doc = document(&["--url", &url, "--mode", mode, "--workers", "1", "--requests", "1"]);
        assert_eq!(workload_of(&doc), ("whole".into(), "whole".into(), 65536, Value::Null));
    }
}

/// A wrong answer read in chunks is still a mismatch.
#[test]
fn a_wrong_answer_read_in_chunks_is_a_counted_failure() {
    let wrong = fixed_server("30 0000000000000000000000000000000000000000000000000000000000000000");
    for mode in ["async", "sync"] {
        let args = ["--url", &wrong, "--mode", mode, "--method", "POST", "--body-size", "30", "--download", "stream"];
        let doc = document(&[&args[..], &["--chunk-size", "4", "--workers", "2", "--requests", "2"]].concat());
        assert_eq!(total(&doc, "failure_count"), 4, "{mode}");
        let f = &doc["workers"][0]["failures"][0];
        let reason = f["reason"].as_str().unwrap();
        assert!(reason.starts_with("Error: upload digest mismatch: ") && f["status"].is_null(), "{reason}");
        assert!(reason.contains("got \"30 000000"), "{reason}");
    }
    // a streamed upload to an endpoint that takes none: its status is the reason, its body not compared
    let url = format!("{}/bytes/30", server());
    let args = ["--url", &url, "--method", "POST", "--body-size", "30", "--upload", "stream", "--workers", "1"];
    let doc = document(&[&args[..], &["--requests", "1"]].concat());
    let f = &doc["workers"][0]["failures"][0];
    assert_eq!((f["reason"].as_str(), f["status"].as_u64()), (Some("status 405"), Some(405)));
}

/// A targets file in a folder of its own (removed on drop).
struct Targets(std::path::PathBuf);

impl Targets {
    fn new(name: &str, base: &str) -> Targets {
        let dir = std::env::temp_dir().join(format!("reqwest-driver-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let body = dir.join("body.bin");
        std::fs::write(&body, b"seven b").unwrap();
        let text = format!(
            "# three targets of distinct sizes\nGET {base}/bytes/10\n\nGET {base}/bytes/2000\nPOST {base}/upload @{}\n",
            body.display()
        );
        std::fs::write(dir.join("targets.txt"), text).unwrap();
        Targets(dir)
    }

    fn path(&self) -> String {
        self.0.join("targets.txt").to_string_lossy().into_owned()
    }
}

impl Drop for Targets {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Each worker cycles through the file from target w: worker w's timed request k (counted from 0 after
/// the warm-up) is target (w + k) mod T, so its bytes are the sum of those targets' answers.
#[test]
fn targets_are_cycled_per_worker() {
    let base = server();
    let targets = Targets::new("targets", &base);
    let answers = [10, 2000, upload_line(b"seven b").len() as u64];
    for mode in ["async", "sync"] {
        for (upload, download) in [("whole", "whole"), ("stream", "stream"), ("stream", "whole")] {
            let path = targets.path();
            let args = ["--url", &base, "--mode", mode, "--targets", &path, "--upload", upload, "--download", download];
            let doc = document(
                &[&args[..], &["--chunk-size", "3", "--workers", "3", "--requests", "7", "--warmup", "2"]].concat(),
            );
            let what = format!("{mode} {upload} {download}");
            assert_eq!(total(&doc, "failure_count"), 0, "{what}: {doc}");
            for (w, worker) in doc["workers"].as_array().unwrap().iter().enumerate() {
                let want: u64 = (0..7).map(|k| answers[(w + k) % 3]).sum();
                assert_eq!(worker["bytes"].as_u64(), Some(want), "{what}: worker {w}");
            }
            assert_eq!(workload_of(&doc).3, Value::String(path.clone()), "{what}");
            assert_eq!(
                (doc["workload"]["method"].as_str(), doc["workload"]["body_size"].as_u64()),
                (Some("GET"), Some(0))
            );
        }
    }
}

/// A streamed 8 MiB body both ways (`POST /echo`) grows the driver's peak resident set by a few chunks, not
/// by the body: compared with the same driver's GET of one byte, and with the whole forms of the same run.
#[test]
fn a_streamed_body_is_never_held_whole() {
    let base = server();
    let peak = |args: &[&str]| -> u64 {
        let doc = document(&[args, &["--workers", "1", "--requests", "3", "--warmup", "1"]].concat());
        assert_eq!(total(&doc, "failure_count"), 0, "{args:?}: {doc}");
        doc["peak_rss_kib"].as_u64().expect("peak_rss_kib")
    };
    let (echo, one) = (format!("{base}/echo"), format!("{base}/bytes/1"));
    let body = ["--method", "POST", "--body-size", "8388608"];
    for mode in ["async", "sync"] {
        let floor = peak(&["--url", &one, "--mode", mode]);
        let streamed = peak(
            &[&["--url", &echo, "--mode", mode][..], &body, &["--upload", "stream", "--download", "stream"]].concat(),
        );
        let whole = peak(&[&["--url", &echo, "--mode", mode][..], &body].concat());
        eprintln!(
            "{mode}: peak RSS GET /bytes/1 {floor} KiB, 8 MiB streamed both ways {streamed} KiB, whole {whole} KiB"
        );
        // 8 MiB is 8,192 KiB: the streamed run grows by less than half of it (what it does grow by is the
        // client's read buffers, as much for a GET of 8 MiB; the upload's side is a 64 KiB pattern)
        assert!(streamed < floor + 4096, "{mode}: streamed {streamed} KiB against {floor} KiB");
        assert!(
            whole > streamed + 4096,
            "{mode}: the whole body ({whole} KiB) is held, the stream ({streamed} KiB) is not"
        );
    }
}
