//! The contract's flags, the same for every driver, their checks (bad usage is one line naming the flag,
//! exit status 2), and what a run is made from them: the clients' options and the [`Plan`].

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use bytes::Bytes;
use clap::ValueEnum;
use reqwest_bench::{ClientOptions, Http2, TlsConfig, TlsSetupError, Trust};

pub use crate::body::{body_pattern, upload_line, DEFAULT_CHUNK_SIZE, MAX_CHUNK_SIZE};
use crate::body::{Chunks, Expected, Outgoing, Pattern};
use crate::schedule::{Limit, Open};
use crate::targets::Target;

/// Largest `--body-size` (1 GiB).
pub const MAX_BODY_SIZE: u64 = 1 << 30;
/// Largest rate per worker: a schedule finer than 1 µs cannot be kept by any clock here.
pub const MAX_RATE_PER_WORKER: f64 = 1_000_000.0;
/// Default `--requests`.
pub const DEFAULT_REQUESTS: u32 = 100;
/// Largest `--timeout` (a day): a longer latency does not fit the runner's histograms.
pub const MAX_TIMEOUT_S: f64 = 86_400.0;

/// `--connection`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Connection {
    /// One client (and keep-alive connection) per worker
    KeepAlive,
    /// A new client (and connection) for every timed request
    New,
}

impl Connection {
    pub fn as_str(self) -> &'static str {
        match self {
            Connection::KeepAlive => "keep-alive",
            Connection::New => "new",
        }
    }
}

/// `--arrival`: the open loop's intervals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Arrival {
    /// A fixed interval, W/R s per worker, the W phases spread evenly
    Uniform,
    /// Exponential intervals of mean W/R s, worker w seeded with S + w
    Poisson,
}

impl Arrival {
    pub fn as_str(self) -> &'static str {
        match self {
            Arrival::Uniform => "uniform",
            Arrival::Poisson => "poisson",
        }
    }
}

/// `--method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Method {
    #[value(name = "GET")]
    Get,
    #[value(name = "POST")]
    Post,
    #[value(name = "PUT")]
    Put,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
        }
    }
}

/// `--client-scope`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ClientScope {
    /// Every worker makes its own client
    PerWorker,
    /// One client, made before the gate, serves every worker (its own pool)
    Shared,
}

impl ClientScope {
    pub fn as_str(self) -> &'static str {
        match self {
            ClientScope::PerWorker => "per-worker",
            ClientScope::Shared => "shared",
        }
    }
}

/// `--http`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum HttpVersion {
    /// HTTP/1.1 only
    #[value(name = "1.1")]
    Http11,
    /// HTTP/2: ALPN h2 over https://, prior knowledge (h2c) over http://
    #[value(name = "2")]
    Http2,
}

impl HttpVersion {
    pub fn as_str(self) -> &'static str {
        match self {
            HttpVersion::Http11 => "1.1",
            HttpVersion::Http2 => "2",
        }
    }
}

/// `--record`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RecordMode {
    /// Per-request arrays
    Samples,
    /// Latency histograms (HdrHistogram buckets, 3 significant digits)
    Histogram,
}

impl RecordMode {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordMode::Samples => "samples",
            RecordMode::Histogram => "histogram",
        }
    }
}

/// `--upload`, `--download`: how a body goes between the driver and its client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Transfer {
    /// In one buffer
    Whole,
    /// In chunks of --chunk-size bytes
    Stream,
}

impl Transfer {
    pub fn as_str(self) -> &'static str {
        match self {
            Transfer::Whole => "whole",
            Transfer::Stream => "stream",
        }
    }
}

/// The contract's flags, identical for every driver (`#[command(flatten)]` them into the driver's own).
#[derive(clap::Args, Debug, Clone)]
pub struct Options {
    /// URL every request goes to (http://host:port/path)
    #[arg(long)]
    pub url: String,
    /// Workers, each with its own client and keep-alive connection
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..), allow_negative_numbers = true)]
    pub workers: u32,
    /// Timed sequential requests per worker [default: 100]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..), allow_negative_numbers = true)]
    pub requests: Option<u32>,
    /// Open loop only (with --rate), instead of --requests: the schedule lasts this many seconds
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub duration: Option<f64>,
    /// Untimed requests per worker before the timed loop
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub warmup: u32,
    /// Bounds each whole request (connect to the body's last byte), seconds, at most 86400
    #[arg(long, default_value_t = 30.0, value_parser = parse_timeout, allow_negative_numbers = true)]
    pub timeout: f64,
    /// keep-alive: one connection per worker; new: a new client (and connection) for every timed request
    #[arg(long, value_enum, default_value_t = Connection::KeepAlive)]
    pub connection: Connection,
    /// https:// URLs: trust the CA certificates in this PEM file instead of the system's
    #[arg(long, value_name = "PATH", conflicts_with = "insecure")]
    pub ca_file: Option<PathBuf>,
    /// https:// URLs: do not verify the server's certificate (unsafe: for measurements only)
    #[arg(long)]
    pub insecure: bool,
    /// Open loop: R requests/s over all workers, each on a schedule of R/W requests/s
    #[arg(long, value_name = "R", value_parser = parse_rate, allow_negative_numbers = true)]
    pub rate: Option<f64>,
    /// Open loop: uniform (a fixed interval) or poisson (exponential intervals, seeded) [default: uniform]
    #[arg(long, value_enum)]
    pub arrival: Option<Arrival>,
    /// Open loop, poisson: worker w draws its intervals from SplitMix64 seeded with S + w [default: 1]
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    pub seed: Option<u64>,
    /// GET, or POST/PUT with a body of --body-size bytes [default: GET]
    #[arg(long, value_enum)]
    pub method: Option<Method>,
    /// POST/PUT: the request body's length in bytes (abcd...xyzabc...) [default: 0]
    #[arg(long, value_name = "BYTES", value_parser = parse_body_size, allow_negative_numbers = true)]
    pub body_size: Option<u64>,
    /// samples: per-request arrays; histogram: latency histograms (for long runs)
    #[arg(long, value_enum, default_value_t = RecordMode::Samples)]
    pub record: RecordMode,
    /// per-worker: every worker makes its own client; shared: one client serves every worker
    #[arg(long, value_enum, default_value_t = ClientScope::PerWorker)]
    pub client_scope: ClientScope,
    /// 1.1, or 2: HTTP/2 (ALPN h2 over https://, prior knowledge over http://)
    #[arg(long, value_enum, default_value_t = HttpVersion::Http11)]
    pub http: HttpVersion,
    /// whole: the request body in one buffer; stream: in chunks of --chunk-size bytes made as they are sent
    #[arg(long, value_enum, default_value_t = Transfer::Whole)]
    pub upload: Transfer,
    /// whole: the response body as the client reads it; stream: in chunks of at most --chunk-size bytes
    #[arg(long, value_enum, default_value_t = Transfer::Whole)]
    pub download: Transfer,
    /// A streamed body's chunk, 1 to 16777216 bytes [default: 65536]
    #[arg(long, value_name = "BYTES", value_parser = parse_chunk_size, allow_negative_numbers = true)]
    pub chunk_size: Option<usize>,
    /// A file of targets (`METHOD URL [@BODYFILE]` per line) every worker cycles through instead of --url
    #[arg(long, value_name = "FILE")]
    pub targets: Option<PathBuf>,
}

/// What the workers run, made from [`Options`] once they are checked ([`Options::plan`]).
#[derive(Debug, Clone)]
pub struct Plan {
    pub url: String,
    pub workers: u32,
    pub warmup: u32,
    pub connection: Connection,
    /// N requests per worker, or (open loop) the schedule's length.
    pub limit: Limit,
    /// The open loop's schedule (`None`: closed loop).
    pub open: Option<Open>,
    pub method: Method,
    /// `--timeout` in ns: a request that took longer failed (`TimeoutError`), whatever it returned.
    pub timeout_ns: u64,
    /// The body of every POST/PUT with `--upload whole` (empty otherwise: a streamed body is never whole).
    pub body: Bytes,
    /// POST/PUT: what every 200 answer must be (the body's `/upload` line, or the body echoed), and the
    /// pattern a streamed body is cut from.
    pub expect: Option<Expected>,
    pub record: RecordMode,
    pub scope: ClientScope,
    pub upload: Transfer,
    pub download: Transfer,
    /// `--chunk-size`.
    pub chunk_size: usize,
    /// `--targets`: worker w's request k goes to target (w + k) mod T (empty: every request to `url`).
    pub targets: Vec<Target>,
}

impl Plan {
    /// The body of a request to `url`, as the client is given it.
    pub fn outgoing(&self) -> Outgoing {
        match (&self.expect, self.upload) {
            (None, _) => Outgoing::None,
            (Some(_), Transfer::Whole) => Outgoing::Whole(self.body.clone()),
            (Some(e), Transfer::Stream) => Outgoing::Stream(Chunks::pattern(&e.pattern, e.body_len, self.chunk_size)),
        }
    }

    /// The body of a request to `target`.
    pub fn target_outgoing(&self, target: &Target) -> Outgoing {
        match (&target.body, self.upload) {
            (None, _) if target.method == Method::Get => Outgoing::None,
            (None, Transfer::Whole) => Outgoing::Whole(Bytes::new()),
            (None, Transfer::Stream) => Outgoing::Stream(Chunks::bytes(&Bytes::new(), self.chunk_size)),
            (Some(b), Transfer::Whole) => Outgoing::Whole(b.clone()),
            (Some(b), Transfer::Stream) => Outgoing::Stream(Chunks::bytes(b, self.chunk_size)),
        }
    }

    /// Worker `w`'s request `k` (warm-up and timed requests each counted from 0): its target, with `--targets`.
    pub fn target(&self, w: u32, k: u64) -> Option<&Target> {
        match self.targets.len() as u64 {
            0 => None,
            t => Some(&self.targets[((u64::from(w) + k) % t) as usize]),
        }
    }

    /// `--download stream`: the most a piece of the response is taken in.
    pub fn piece(&self) -> Option<usize> {
        (self.download == Transfer::Stream).then_some(self.chunk_size)
    }
}

impl Options {
    /// `--requests`, or its default.
    pub fn requests(&self) -> u32 {
        self.requests.unwrap_or(DEFAULT_REQUESTS)
    }

    /// `--method`, or its default.
    pub fn method(&self) -> Method {
        self.method.unwrap_or(Method::Get)
    }

    /// `--chunk-size`, or its default.
    pub fn chunk_size(&self) -> usize {
        self.chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE)
    }

    /// `--arrival`, or its default.
    pub fn arrival(&self) -> Arrival {
        self.arrival.unwrap_or(Arrival::Uniform)
    }

    /// `--seed`, or its default.
    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or(1)
    }

    /// `--ca-file` / `--insecure` / the system's roots.
    pub fn trust(&self) -> Trust {
        match (&self.ca_file, self.insecure) {
            (_, true) => Trust::Insecure,
            (Some(path), false) => Trust::CaFile(path.clone()),
            (None, false) => Trust::System,
        }
    }

    /// The URL is `https://`.
    pub fn is_https(&self) -> bool {
        self.url.trim_start().get(..8).is_some_and(|p| p.eq_ignore_ascii_case("https://"))
    }

    /// The clients' options: the timeout, the trust (a CA file is read now), TLS info for `https://`, and
    /// with `--http 2` HTTP/2 (ALPN over `https://`, prior knowledge over `http://`).
    pub fn client_options(&self) -> Result<ClientOptions, TlsSetupError> {
        let http2 = match (self.http, self.is_https()) {
            (HttpVersion::Http11, _) => Http2::Off,
            (HttpVersion::Http2, true) => Http2::Alpn,
            (HttpVersion::Http2, false) => Http2::PriorKnowledge,
        };
        Ok(ClientOptions {
            tls: TlsConfig::new(&self.trust())?,
            tls_info: self.is_https(),
            http2,
            ..ClientOptions::new(Duration::from_secs_f64(self.timeout))
        })
    }

    /// Check the flags that clap cannot check alone, and make the run's [`Plan`] (the body and its
    /// expected `/upload` line are made here, before any worker starts). The error is one line that starts
    /// with the flag.
    pub fn plan(&self) -> Result<Plan, String> {
        check_url(&self.url)?;
        if self.rate.is_none() {
            if self.arrival.is_some() {
                return Err("--arrival: goes with --rate (an open loop)".into());
            }
            if self.seed.is_some() {
                return Err("--seed: goes with --rate (an open loop)".into());
            }
        }
        let open = match self.rate {
            Some(rate) if rate / f64::from(self.workers) > MAX_RATE_PER_WORKER => {
                return Err(format!(
                    "--rate: {rate} requests/s over {} workers is a schedule finer than 1 µs per worker (at most \
                     {MAX_RATE_PER_WORKER} requests/s per worker)",
                    self.workers
                ))
            }
            Some(rate) => Some(Open { rate, arrival: self.arrival(), seed: self.seed() }),
            None => None,
        };
        let limit = match (self.duration, self.requests) {
            (Some(_), Some(_)) => return Err("--duration: cannot be used with --requests".into()),
            (Some(_), None) if open.is_none() => return Err("--duration: needs --rate (an open loop)".into()),
            (Some(d), None) => {
                Limit::Duration(u64::try_from(Duration::from_secs_f64(d).as_nanos()).unwrap_or(u64::MAX))
            }
            (None, _) => Limit::Requests(self.requests()),
        };
        if self.connection == Connection::New && self.client_scope == ClientScope::Shared {
            return Err(
                "--connection new: cannot be used with --client-scope shared (a shared client is made once)".into()
            );
        }
        let targets = match &self.targets {
            None => Vec::new(),
            Some(file) => {
                if self.method.is_some() {
                    return Err("--method: not with --targets (each target has its own method)".into());
                }
                if self.body_size.is_some() {
                    return Err("--body-size: not with --targets (each target has its own body)".into());
                }
                crate::targets::read(file)?
            }
        };
        let method = self.method();
        // `--body-size 0` asks a GET for the body it sends anyway: accepted, as the C++ harness and the runner do
        if method == Method::Get && self.body_size.is_some_and(|n| n > 0) {
            return Err("--body-size: a GET sends no body (use --method POST or PUT)".into());
        }
        if method == Method::Get && self.upload == Transfer::Stream && targets.is_empty() {
            return Err("--upload: stream needs a body to stream (--method POST or PUT, or --targets)".into());
        }
        let chunk_size = self.chunk_size();
        let (body, expect) = match method {
            Method::Get => (Bytes::new(), None),
            Method::Post | Method::Put => {
                let len = self.body_size.unwrap_or(0);
                let pattern = Pattern::for_body(len, chunk_size);
                let body = match self.upload {
                    Transfer::Whole => body_pattern(len as usize),
                    Transfer::Stream => Bytes::new(),
                };
                (body, Some(Expected::of_pattern(&pattern, len)))
            }
        };
        Ok(Plan {
            url: self.url.clone(),
            workers: self.workers,
            warmup: self.warmup,
            connection: self.connection,
            limit,
            open,
            timeout_ns: u64::try_from(Duration::from_secs_f64(self.timeout).as_nanos()).unwrap_or(u64::MAX),
            method,
            body,
            expect,
            record: self.record,
            scope: self.client_scope,
            upload: self.upload,
            download: self.download,
            chunk_size,
            targets,
        })
    }
}

/// `--url`: an absolute `http://` or `https://` URL with a host, and a port from 1 to 65535 if it has one
/// (docs/raw-format.md); what the client refuses beyond that is a counted failure (`InvalidUrl`).
fn check_url(url: &str) -> Result<(), String> {
    url_problem(url).map_or(Ok(()), |why| Err(format!("--url: {why}")))
}

/// Why `url` is not usable as `--url` (or a target's URL), if it is not.
pub(crate) fn url_problem(url: &str) -> Option<String> {
    if url.chars().any(|c| c <= ' ' || c == '\u{7f}') {
        return Some(format!("must not contain whitespace or control characters, got {url:?}"));
    }
    // the url crate's parser (reqwest's): the same one the requests use
    let parsed = match reqwest_bench::reqwest::Url::parse(url) {
        Ok(u) => u,
        Err(e) => return Some(format!("{url:?} is not a URL: {e}")),
    };
    if !matches!(parsed.scheme(), "http" | "https") {
        return Some(format!("must be an http:// or https:// URL, got {url:?}"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Some(format!("has no host: {url:?}"));
    }
    if parsed.port() == Some(0) {
        return Some(format!("the port must be from 1 to 65535, got {url:?}"));
    }
    None
}

/// Parse the driver's arguments; bad usage is one line on stderr (clap's error without its usage
/// block) and exit status 2, `--help` / `--version` print and exit 0.
pub fn parse_args<A: clap::Parser>(prog: &str) -> Result<A, ExitCode> {
    A::try_parse().map_err(|e| usage_error(prog, &e))
}

fn usage_error(prog: &str, e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    eprintln!("{prog}: {}", one_line(&e.render().to_string()));
    ExitCode::from(2)
}

/// clap's message up to its usage block, on one line.
fn one_line(rendered: &str) -> String {
    let lines = rendered.lines().map(str::trim).take_while(|l| !l.is_empty() && !l.starts_with("Usage:"));
    lines.collect::<Vec<_>>().join(" ")
}

/// [`Options::client_options`] and [`Options::plan`], or the one-line usage error the binary exits with
/// (status 2).
pub fn prepare(prog: &str, o: &Options) -> Result<(ClientOptions, Plan), ExitCode> {
    let usage = |msg: String| {
        eprintln!("{prog}: error: {msg}");
        ExitCode::from(2)
    };
    let plan = o.plan().map_err(usage)?;
    let options = o.client_options().map_err(|e| usage(format!("--ca-file: {e}")))?;
    Ok((options, plan))
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    let v: f64 = text.parse().map_err(|e| format!("{e}"))?;
    if v <= 0.0 || Duration::try_from_secs_f64(v).is_err() {
        return Err(format!("must be a positive number of seconds, got {text}"));
    }
    Ok(v)
}

fn parse_timeout(text: &str) -> Result<f64, String> {
    match parse_seconds(text)? {
        v if v <= MAX_TIMEOUT_S => Ok(v),
        _ => Err(format!("must be at most {MAX_TIMEOUT_S} s (a day), got {text}")),
    }
}

fn parse_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("must be a positive number of requests/s, got {text}")),
    }
}

fn parse_chunk_size(text: &str) -> Result<usize, String> {
    match text.parse::<i128>() {
        Ok(v) if (1..=MAX_CHUNK_SIZE as i128).contains(&v) => Ok(v as usize),
        _ => Err(format!("must be a number of bytes from 1 to {MAX_CHUNK_SIZE} (16 MiB), got {text}")),
    }
}

fn parse_body_size(text: &str) -> Result<u64, String> {
    match text.parse::<i128>() {
        Ok(v) if (0..=i128::from(MAX_BODY_SIZE)).contains(&v) => Ok(v as u64),
        _ => Err(format!("must be a number of bytes from 0 to {MAX_BODY_SIZE} (1 GiB), got {text}")),
    }
}

#[cfg(test)]
mod tests {
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
            Err(e) => one_line(&e.render().to_string()),
            Ok(o) => o.plan().map(|_| String::new()).unwrap_or_else(|e| format!("error: {e}")),
        }
    }

    #[test]
    fn tls_flags() {
        let parse =
            |args: &[&str]| Cli::try_parse_from([&["driver", "--url", "https://127.0.0.1:1/"][..], args].concat());
        let o = parse(&[]).unwrap().o;
        assert_eq!((o.trust(), o.is_https()), (Trust::System, true));
        assert!(o.client_options().unwrap().tls_info);
        assert_eq!(parse(&["--insecure"]).unwrap().o.trust(), Trust::Insecure);
        assert_eq!(parse(&["--ca-file", "/x.pem"]).unwrap().o.trust(), Trust::CaFile("/x.pem".into()));
        let err = parse(&["--ca-file", "/x.pem", "--insecure"]).expect_err("mutually exclusive");
        assert_eq!(err.kind(), clap::error::ErrorKind::ArgumentConflict);
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

    #[test]
    fn targets_replace_the_url() {
        let dir = std::env::temp_dir().join(format!("harness-options-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (file, body) = (dir.join("targets.txt"), dir.join("b.bin"));
        std::fs::write(&body, b"0123456789").unwrap();
        std::fs::write(&file, format!("GET http://h/a\nPOST http://h/b @{}\nPUT http://h/c\n", body.display()))
            .unwrap();
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
            (&["--http", "3"], "--http"),
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
        let missing = one_line(&Cli::try_parse_from(["driver"]).unwrap_err().render().to_string());
        assert!(missing.contains("--url"), "{missing}");
        assert!(parse(&["--timeout", "86400", "--rate", "1", "--seed", "18446744073709551615"])
            .unwrap()
            .plan()
            .is_ok());
    }

    #[test]
    fn an_unusable_url_is_bad_usage() {
        let plan = |url: &str| Cli::try_parse_from(["driver", "--url", url]).unwrap().o.plan();
        for url in
            ["ftp://127.0.0.1/", "http://", "127.0.0.1:8080/", "http://h:0/", "http://h:99999/", "http://h /", ""]
        {
            let err = plan(url).expect_err(url);
            assert!(err.starts_with("--url: ") && !err.contains('\n'), "{url}: {err}");
        }
        for url in ["http://127.0.0.1:1/", "https://example.com", "HTTP://[::1]:8080/x?y", "http://h:/"] {
            assert!(plan(url).is_ok(), "{url}");
        }
    }
}
