//! The workers with fake clients, continued (run_tests.rs has the loops): streamed bodies both ways and the
//! check of their answers (an upload's `/upload` line or its echo), a GET through the driver's own GET unless
//! its download streams, targets cycled from (w + k) mod T.

use super::tests::{co, plan, sent, Cli};
use super::*;

use clap::Parser;

use crate::body::{body_pattern, Answer, Outgoing};
use crate::options::upload_line;

/// A server that answers what each request carries: a GET of `.../N` answers N bytes (in one chunk, so a
/// streamed download takes it in pieces); an upload is answered with its body echoed back, in chunks of 1000
/// (the `corrupt`-th byte changed, if any), or with its `/upload` line; every streamed chunk is checked to be
/// at most `chunk` bytes.
struct Server {
    chunk: usize,
    echo: bool,
    corrupt: Option<usize>,
    /// Every request: (method, url, body length, whole body given as one buffer).
    seen: std::sync::Mutex<Vec<(Method, String, usize, bool)>>,
}

impl Server {
    fn new(chunk: usize, echo: bool, corrupt: Option<usize>) -> Server {
        Server { chunk, echo, corrupt, seen: Default::default() }
    }

    fn serve(&self, method: Method, url: &str, body: Outgoing, answer: &mut Answer) -> Result<u16, ClientError> {
        let whole = matches!(body, Outgoing::Whole(_));
        let mut sent = sent(body, self.chunk);
        self.seen.lock().unwrap().push((method, url.to_owned(), sent.len(), whole));
        if method == Method::Get {
            let n: usize = url.rsplit('/').next().unwrap().parse().unwrap();
            answer.feed(&vec![b'x'; n]);
            return Ok(200);
        }
        if let Some(i) = self.corrupt {
            sent[i] ^= 1;
        }
        match self.echo {
            true => sent.chunks(1000).for_each(|c| answer.feed(c)),
            false => answer.feed(&upload_line(&sent)),
        }
        Ok(200)
    }
}

impl Driver for Server {
    type Client = ();

    fn make_client(&self, _options: &ClientOptions) -> Result<(), ClientError> {
        Ok(())
    }

    fn get(&self, _client: &(), url: &str) -> impl Future<Output = Result<(u16, u64), ClientError>> + Send {
        self.seen.lock().unwrap().push((Method::Get, format!("get {url}"), 0, false));
        let n: u64 = url.rsplit('/').next().unwrap().parse().unwrap();
        std::future::ready(Ok((200, n)))
    }

    fn send(
        &self,
        _client: &(),
        method: Method,
        url: &str,
        body: Outgoing,
        answer: &mut Answer<'_>,
    ) -> impl Future<Output = Result<u16, ClientError>> + Send {
        std::future::ready(self.serve(method, url, body, answer))
    }
}

/// The records' (count, bytes, failures' reasons) per worker.
fn totals(group: Group) -> Vec<(u64, u64, Vec<String>)> {
    let json = group.records.into_iter().map(Record::into_json);
    json.map(|j| (j.count, j.bytes, j.failures.into_iter().map(|f| f.reason).collect())).collect()
}

#[test]
fn streamed_uploads_are_cut_in_chunks_and_echoes_are_right_too() {
    let size = 100_000;
    for upload in ["whole", "stream"] {
        let args = ["--workers", "2", "--requests", "3", "--method", "POST", "--body-size", "100000"];
        let plan = plan(&[&args[..], &["--upload", upload, "--chunk-size", "4096"]].concat());
        // a streamed body is never made whole
        assert_eq!(plan.body.len(), if upload == "whole" { size } else { 0 });
        for (echo, download) in [(true, None), (false, None), (true, Some(7))] {
            let mut plan = plan.clone();
            if download.is_some() {
                (plan.download, plan.chunk_size) = (Transfer::Stream, 7);
            }
            let server = Server::new(plan.chunk_size, echo, None);
            let answer = if echo { size as u64 } else { upload_line(&body_pattern(size)).len() as u64 };
            let ok = vec![(3, 3 * answer, vec![]); 2];
            assert_eq!(totals(run_threads(Server::new(4096, echo, None), &plan, &co()).unwrap()), ok, "{upload}");
            assert_eq!(totals(run_tasks(server, &plan, &co()).unwrap()), ok, "{upload} {echo}");
        }
        // an echo with a byte changed, anywhere, is a mismatch
        for corrupt in [0, 4095, 4096, size - 1] {
            let server = Server::new(4096, true, Some(corrupt));
            let got = totals(run_threads(server, &plan, &co()).unwrap());
            assert!(got.iter().all(|(_, _, f)| f.len() == 3), "{got:?}");
            let reason = &got[0].2[0];
            assert!(reason.starts_with("Error: upload digest mismatch: expected \"100000 "), "{reason}");
            assert!(reason.contains("(or the 100000 bytes sent, echoed), got 100000 bytes starting "), "{reason}");
        }
        let server = Server::new(4096, false, None);
        run_threads(server, &plan, &co()).unwrap();
    }
}

#[test]
fn a_get_goes_through_the_drivers_get_unless_its_download_is_streamed() {
    for (download, through_get) in [("whole", true), ("stream", false)] {
        let args = ["--workers", "1", "--requests", "2", "--chunk-size", "100", "--download", download];
        let cli = Cli::try_parse_from([&["driver", "--url", "http://127.0.0.1:9/bytes/1000"][..], &args].concat());
        let plan = cli.unwrap().o.plan().unwrap();
        let server = Arc::new(Server::new(100, false, None));
        struct Shared(Arc<Server>);
        impl Driver for Shared {
            type Client = ();
            fn make_client(&self, _o: &ClientOptions) -> Result<(), ClientError> {
                Ok(())
            }
            fn get(&self, c: &(), url: &str) -> impl Future<Output = Result<(u16, u64), ClientError>> + Send {
                self.0.get(c, url)
            }
            fn send(
                &self,
                c: &(),
                m: Method,
                url: &str,
                body: Outgoing,
                answer: &mut Answer<'_>,
            ) -> impl Future<Output = Result<u16, ClientError>> + Send {
                self.0.send(c, m, url, body, answer)
            }
        }
        assert_eq!(totals(run_threads(Shared(server.clone()), &plan, &co()).unwrap()), [(2, 2000, vec![])]);
        let seen = server.seen.lock().unwrap();
        assert_eq!(seen.len(), 2);
        assert!(seen.iter().all(|(_, url, _, _)| url.starts_with("get ") == through_get), "{download}: {seen:?}");
    }
}

/// A targets file in a folder of its own (removed on drop), with a 7-byte body.
struct TargetsFile(std::path::PathBuf);

impl TargetsFile {
    fn new(name: &str) -> TargetsFile {
        let dir = std::env::temp_dir().join(format!("harness-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let body = dir.join("body.bin");
        std::fs::write(&body, b"seven b").unwrap();
        let text = format!(
            "# T = 3\nGET http://127.0.0.1:9/bytes/10\n\nGET http://127.0.0.1:9/bytes/2000\nPOST http://127.0.0.1:9/upload @{}\n",
            body.display()
        );
        std::fs::write(dir.join("targets.txt"), text).unwrap();
        TargetsFile(dir)
    }

    fn path(&self) -> String {
        self.0.join("targets.txt").to_string_lossy().into_owned()
    }
}

impl Drop for TargetsFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn targets_are_cycled_from_w_plus_k() {
    let file = TargetsFile::new("cycle");
    // what each target answers: 10 bytes, 2,000 bytes, the /upload line of "seven b"
    let answers = [10, 2000, upload_line(b"seven b").len() as u64];
    for upload in ["whole", "stream"] {
        let path = file.path();
        let args = ["--requests", "5", "--warmup", "2", "--targets", &path, "--upload", upload, "--chunk-size", "3"];
        let plan = plan(&[&args[..], &["--workers", "4"]].concat());
        assert_eq!(plan.targets.len(), 3);
        for threads in [true, false] {
            let server = Server::new(3, false, None);
            let group = match threads {
                true => run_threads(server, &plan, &co()).unwrap(),
                false => run_tasks(server, &plan, &co()).unwrap(),
            };
            for (w, (count, bytes, failures)) in totals(group).into_iter().enumerate() {
                // the timed requests are counted from 0 again after the warm-up
                let want: u64 = (0..5).map(|k| answers[(w + k) % 3]).sum();
                assert_eq!((count, bytes, failures), (5, want, vec![]), "{upload} worker {w}");
            }
        }
        // one worker's requests in order: warm-up k = 0, 1, then timed k = 0..4, from target (1 + k) mod 3
        let plan = self::plan(&[&args[..], &["--workers", "2"]].concat());
        let server = Arc::new(Server::new(3, false, None));
        block_on(worker_of(&server, &plan, 1));
        let seen: Vec<(Method, String, usize, bool)> = server.seen.lock().unwrap().clone();
        let urls: Vec<&str> = seen.iter().map(|s| s.1.rsplit('/').next().unwrap()).collect();
        assert_eq!(urls, ["2000", "upload", "2000", "upload", "10", "2000", "upload"]);
        // a GET target is the driver's GET; the upload's body is the file's, whole or in 3-byte chunks
        assert!(seen[0].1.starts_with("get "));
        assert_eq!((seen[1].0, seen[1].2, seen[1].3), (Method::Post, 7, upload == "whole"));
    }
}

/// Worker `w`'s warm-up and closed timed loop with `server` (no gate).
async fn worker_of(server: &Arc<Server>, plan: &Plan, w: u32) {
    for k in 0..u64::from(plan.warmup) {
        request(&**server, &Ok(()), plan, w, k).await;
    }
    let clock = ThreadClock(Instant::now());
    timed(&**server, &mut Held::Own(Ok(())), plan, &co(), w, &clock).await;
}
