//! The `clientbench.raw/4` document (docs/raw-format.md): what a run measured, printed as one JSON line.

use std::process::ExitCode;

use serde::Serialize;

use crate::{Arrival, ClientInfo, Group, HttpVersion, Mode, Options};

/// The `schema` of the document.
pub const SCHEMA: &str = "clientbench.raw/4";

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    client: ClientJson,
    workload: Workload<'a>,
    wall_ns: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    peak_rss_kib: Option<u64>,
    workers: Vec<WorkerJson>,
}

#[derive(Serialize)]
struct ClientJson {
    language: &'static str,
    library: &'static str,
    library_version: &'static str,
    mode: &'static str,
    gil: Option<&'static str>,
    /// `https://`: what worker 0 negotiated (absent for `http://`, or when no TLS connection succeeded: the
    /// field is optional).
    #[serde(skip_serializing_if = "Option::is_none")]
    tls: Option<TlsJson>,
    /// The HTTP version of worker 0's client's most recent response (another worker's when worker 0 has
    /// none); with `--http 2` or `3` always present, `null` when no request got a response.
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol: Option<Option<&'static str>>,
    /// With `--phases`: the keys of the phases the driver records, in the contract's order (absent without the
    /// flag, and when the driver records none).
    #[serde(skip_serializing_if = "Option::is_none")]
    phases: Option<Vec<&'static str>>,
}

#[derive(Serialize)]
struct TlsJson {
    version: &'static str,
    /// Not available from reqwest (its `TlsInfo` has the version and the certificate only).
    cipher: Option<&'static str>,
}

#[derive(Serialize)]
struct Workload<'a> {
    url: &'a str,
    workers: u32,
    /// `null` with `--duration`.
    requests: Option<u32>,
    duration_s: Option<f64>,
    warmup: u32,
    timeout_s: f64,
    connection: &'static str,
    #[serde(rename = "loop")]
    loop_: &'static str,
    rate: Option<f64>,
    arrival: Option<&'static str>,
    seed: Option<u64>,
    method: &'static str,
    body_size: u64,
    record: &'static str,
    client_scope: &'static str,
    http: &'static str,
    upload: &'static str,
    download: &'static str,
    chunk_size: usize,
    /// The targets file as given (`null`: none).
    targets: Option<String>,
}

impl<'a> Workload<'a> {
    fn of(o: &'a Options) -> Self {
        let open = o.rate.is_some();
        Workload {
            url: &o.url,
            workers: o.workers,
            requests: o.duration.is_none().then(|| o.requests()),
            duration_s: o.duration,
            warmup: o.warmup,
            timeout_s: o.timeout,
            connection: o.connection.as_str(),
            loop_: if open { "open" } else { "closed" },
            rate: o.rate,
            arrival: open.then(|| o.arrival().as_str()),
            // the schedule's seed only with poisson arrivals: uniform ones draw nothing
            seed: (open && o.arrival() == Arrival::Poisson).then(|| o.seed()),
            method: o.method().as_str(),
            body_size: o.body_size.unwrap_or(0),
            record: o.record.as_str(),
            client_scope: o.client_scope.as_str(),
            http: o.http.as_str(),
            upload: o.upload.as_str(),
            download: o.download.as_str(),
            chunk_size: o.chunk_size(),
            targets: o.targets.as_ref().map(|p| p.to_string_lossy().into_owned()),
        }
    }
}

#[derive(Serialize)]
pub(crate) struct WorkerJson {
    pub(crate) elapsed_ns: u64,
    pub(crate) count: u64,
    pub(crate) late: u64,
    pub(crate) missed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) start_ns: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) latencies_ns: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) intended_ns: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) histograms: Option<Histograms>,
    pub(crate) bytes: u64,
    pub(crate) failure_count: u64,
    pub(crate) failures: Vec<Failure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) phases: Option<PhasesJson>,
}

/// `workers[i].phases`: `{"count": n, "latency_ns": L, "sum_ns": {"connect+tls": c, ...}}` over the worker's
/// successful timed requests (every key of `client.phases` in `sum_ns`, in its order).
#[derive(Serialize, Debug)]
pub(crate) struct PhasesJson {
    pub(crate) count: u64,
    pub(crate) latency_ns: u64,
    #[serde(serialize_with = "ordered_map")]
    pub(crate) sum_ns: Vec<(&'static str, u64)>,
}

/// `(key, value)` pairs as a JSON object, in their order.
fn ordered_map<S: serde::Serializer>(pairs: &[(&'static str, u64)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

/// `workers[i].histograms` of `--record histogram`.
#[derive(Serialize)]
pub(crate) struct Histograms {
    pub(crate) service: HistogramJson,
    /// Open loop only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) corrected: Option<HistogramJson>,
}

/// `{"significant_digits": 3, "counts": [[value_ns, count], ...]}`.
#[derive(Serialize)]
pub struct HistogramJson {
    pub significant_digits: u8,
    pub counts: Vec<(u64, u64)>,
}

#[derive(Serialize, Debug)]
pub(crate) struct Failure {
    pub(crate) index: u32,
    pub(crate) reason: String,
    pub(crate) status: Option<u16>,
}

/// Peak resident set of this process image (VmHWM: reset at exec, unlike getrusage's ru_maxrss, which
/// also counts the forked parent's pages before exec).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Print the document of a run (or the error that stopped it) and return the exit status:
/// 0 when the document was printed, whatever the requests did; 1 on an internal error.
pub fn finish(prog: &str, info: ClientInfo, mode: Mode, o: &Options, outcome: Result<Group, String>) -> ExitCode {
    let Group { wall_ns, cpu_ns, records, phase_keys } = match outcome {
        Ok(v) => v,
        Err(e) => {
            eprintln!("{prog}: {e}");
            return ExitCode::from(1);
        }
    };
    let doc = Document {
        schema: SCHEMA,
        client: ClientJson {
            language: info.language,
            library: info.library,
            library_version: info.library_version,
            mode: mode.as_str(),
            gil: None,
            tls: records.iter().find_map(|r| r.tls_version).map(|version| TlsJson { version, cipher: None }),
            protocol: match (records.iter().find_map(|r| r.protocol), o.http) {
                (Some(p), _) => Some(Some(p)),
                (None, HttpVersion::Http2 | HttpVersion::Http3) => Some(None),
                (None, HttpVersion::Http11) => None,
            },
            phases: phase_keys,
        },
        workload: Workload::of(o),
        wall_ns,
        cpu_ns,
        peak_rss_kib: peak_rss_kib(),
        workers: records.into_iter().map(|r| r.into_json()).collect(),
    };
    match serde_json::to_string(&doc) {
        Ok(text) => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            if let Err(e) = writeln!(out, "{text}").and_then(|_| out.flush()) {
                eprintln!("{prog}: cannot write the result: {e}");
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{prog}: cannot serialise the result: {e}");
            ExitCode::from(1)
        }
    }
}
