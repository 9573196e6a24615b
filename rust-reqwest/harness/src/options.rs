//! The contract's flags, the same for every driver, their checks (bad usage is one line naming the flag,
//! exit status 2, in the wording of the contract's declaration, python/clientbench/schema/contract.json), and
//! what a run is made from them: the clients' options and the [`Plan`].

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
#[cfg(test)]
use crate::usage::clap_message;
use crate::usage::{
    at_least_one, at_least_zero, parse_body_size, parse_chunk_size, parse_rate, parse_seconds, parse_seed,
    parse_timeout,
};

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
    /// HTTP/3 over QUIC, https:// only
    #[value(name = "3")]
    Http3,
}

impl HttpVersion {
    pub fn as_str(self) -> &'static str {
        match self {
            HttpVersion::Http11 => "1.1",
            HttpVersion::Http2 => "2",
            HttpVersion::Http3 => "3",
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
    #[arg(long, default_value_t = 10, value_parser = at_least_one, allow_negative_numbers = true)]
    pub workers: u32,
    /// Timed sequential requests per worker [default: 100]
    #[arg(long, value_parser = at_least_one, allow_negative_numbers = true)]
    pub requests: Option<u32>,
    /// Open loop only (with --rate), instead of --requests: the schedule lasts this many seconds
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub duration: Option<f64>,
    /// Untimed requests per worker before the timed loop
    #[arg(long, default_value_t = 0, value_parser = at_least_zero, allow_negative_numbers = true)]
    pub warmup: u32,
    /// Bounds each whole request (connect to the body's last byte), seconds, at most 86400
    #[arg(long, default_value_t = 30.0, value_parser = parse_timeout, allow_negative_numbers = true)]
    pub timeout: f64,
    /// keep-alive: one connection per worker; new: a new client (and connection) for every timed request
    #[arg(long, value_enum, default_value_t = Connection::KeepAlive)]
    pub connection: Connection,
    /// https:// URLs: trust the CA certificates in this PEM file instead of the system's (not with --insecure)
    #[arg(long, value_name = "PATH")]
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
    #[arg(long, value_name = "S", value_parser = parse_seed, allow_negative_numbers = true)]
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
    /// 1.1; 2: HTTP/2 (ALPN h2 over https://, prior knowledge over http://); 3: HTTP/3 over QUIC (https:// only)
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
    /// Record each timed request's phases (client.phases, workers[i].phases; raw/4)
    #[arg(long)]
    pub phases: bool,
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
    /// `--phases`: record each timed request's phases (if the driver can see some: [`crate::Driver::phase_keys`]).
    pub phases: bool,
    /// `--http 3`.
    pub http3: bool,
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

    /// Every URL a request goes to: `--url`, or the targets.
    pub fn urls(&self) -> impl Iterator<Item = &str> {
        let url = self.targets.is_empty().then_some(self.url.as_str());
        url.into_iter().chain(self.targets.iter().map(|t| t.url.as_str()))
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

    /// The clients' options: the timeout, the trust (a CA file is read now), TLS info for `https://`, with
    /// `--http 2` HTTP/2 (ALPN over `https://`, prior knowledge over `http://`), with `--http 3` HTTP/3.
    pub fn client_options(&self) -> Result<ClientOptions, TlsSetupError> {
        let http2 = match (self.http, self.is_https()) {
            (HttpVersion::Http11 | HttpVersion::Http3, _) => Http2::Off,
            (HttpVersion::Http2, true) => Http2::Alpn,
            (HttpVersion::Http2, false) => Http2::PriorKnowledge,
        };
        Ok(ClientOptions {
            tls: TlsConfig::new(&self.trust())?,
            tls_info: self.is_https(),
            http2,
            http3: self.http == HttpVersion::Http3,
            // the connections' timing layer only when the phases are recorded: without --phases the client is
            // exactly what it was before the flag existed
            phases: self.phases,
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
                return Err("--arrival goes with --rate (an open loop)".into());
            }
            if self.seed.is_some() {
                return Err("--seed goes with --rate (an open loop)".into());
            }
        }
        if self.duration.is_some() && self.rate.is_none() {
            return Err("--duration goes with --rate (an open loop)".into());
        }
        if self.duration.is_some() && self.requests.is_some() {
            return Err("--duration and --requests exclude each other".into());
        }
        let open = match self.rate {
            Some(rate) if rate / f64::from(self.workers) > MAX_RATE_PER_WORKER => {
                return Err(format!(
                    "--rate: at most {MAX_RATE_PER_WORKER} requests/s per worker (a schedule finer than 1 µs), got \
                     {rate} over {} workers",
                    self.workers
                ))
            }
            Some(rate) => Some(Open { rate, arrival: self.arrival(), seed: self.seed() }),
            None => None,
        };
        let limit = match self.duration {
            Some(d) => Limit::Duration(duration_ns(d)),
            None => Limit::Requests(self.requests()),
        };
        if self.connection == Connection::New && self.client_scope == ClientScope::Shared {
            return Err("--connection new does not go with --client-scope shared (a shared client is made once)".into());
        }
        if self.targets.is_some() && self.method.is_some() {
            return Err("--method goes without --targets (each target names its method)".into());
        }
        if self.targets.is_some() && self.body_size.is_some() {
            return Err("--body-size goes without --targets (each target names its body)".into());
        }
        let method = self.method();
        // `--body-size 0` asks a GET for the body it sends anyway: accepted, as every harness does
        if method == Method::Get && self.body_size.is_some_and(|n| n > 0) {
            return Err("--body-size goes with --method POST or PUT (a GET sends no body)".into());
        }
        if method == Method::Get && self.upload == Transfer::Stream && self.targets.is_none() {
            return Err("--upload stream goes with --method POST or PUT, or --targets (a GET sends no body)".into());
        }
        if self.http == HttpVersion::Http3 && self.targets.is_none() && !self.is_https() {
            return Err(format!("--http: 3 is HTTP/3 over QUIC, which needs https:// URLs, got {:?}", self.url));
        }
        if self.ca_file.is_some() && self.insecure {
            return Err("--ca-file and --insecure exclude each other".into());
        }
        let targets = match &self.targets {
            None => Vec::new(),
            Some(file) => {
                let targets = crate::targets::read(file)?;
                let plain =
                    targets.iter().find(|t| !t.url.get(..8).is_some_and(|p| p.eq_ignore_ascii_case("https://")));
                if let (HttpVersion::Http3, Some(t)) = (self.http, plain) {
                    return Err(format!(
                        "--http: 3 is HTTP/3 over QUIC, which needs https:// URLs, got {:?} in {}",
                        t.url,
                        file.display()
                    ));
                }
                targets
            }
        };
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
            phases: self.phases,
            http3: self.http == HttpVersion::Http3,
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
    use url::{ParseError as UrlParseError, Url};
    if url.chars().any(|c| c <= ' ' || c == '\u{7f}') {
        return Some(format!("must not contain whitespace or control characters, got '{url}'"));
    }
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("http" | "https")) {
        return Some(format!("must be an http:// or https:// URL, got '{url}'"));
    }
    // the url crate's parser (reqwest's): the same one the requests use; an empty port is the scheme's
    let parsed = match Url::parse(url) {
        Ok(u) => u,
        Err(UrlParseError::EmptyHost) => return Some(format!("has no host, got '{url}'")),
        Err(UrlParseError::InvalidPort) => return Some(format!("the port must be from 1 to 65535, got '{url}'")),
        Err(e) => return Some(format!("is not a URL ({e}), got '{url}'")),
    };
    if parsed.host_str().is_none_or(str::is_empty) {
        return Some(format!("has no host, got '{url}'"));
    }
    if parsed.port() == Some(0) {
        return Some(format!("the port must be from 1 to 65535, got '{url}'"));
    }
    None
}

/// [`Options::client_options`] and [`Options::plan`], or the one-line usage error the binary exits with
/// (status 2).
pub fn prepare(prog: &str, o: &Options) -> Result<(ClientOptions, Plan), ExitCode> {
    let usage = |msg: String| {
        eprintln!("{prog}: error: {msg}");
        ExitCode::from(2)
    };
    let plan = o.plan().map_err(usage)?;
    let options = o.client_options().map_err(|e| {
        let path = o.ca_file.as_deref().unwrap_or(std::path::Path::new("")).display();
        usage(match e {
            TlsSetupError::Io(_, why) => format!("--ca-file: cannot read {path} ({why})"),
            TlsSetupError::Invalid(why) => format!("--ca-file: no PEM certificate in {path} ({why})"),
        })
    })?;
    Ok((options, plan))
}

/// `--duration` D in whole ns, rounded as the intended times are (halves away from zero): a request is due when
/// I(w, k) < D in ns (docs/raw-format.md, "Open loop").
fn duration_ns(d: f64) -> u64 {
    // f64's `as` saturates: a duration beyond u64's ns is "for ever"
    (d * 1e9).round() as u64
}

#[cfg(test)]
#[path = "options_tests.rs"]
mod tests;
