//! reqwest-driver: the clientbench driver for reqwest (docs/raw-format.md).
//!
//! `--mode async` (default): W tokio tasks on the multi-thread runtime, each with its own `Client`.
//! `--mode sync`: W OS threads, each with its own `BlockingClient` (own current-thread runtime).
//! `--client-scope shared`: one of those for all W (a `Client` is a handle on one pool; a `BlockingClient`
//! is `Sync`: its threads take turns driving its runtime, each request on a connection of the one pool).
//! `--http 2`: HTTP/2 over ALPN (`https://`) or with prior knowledge (`http://`), both modes.
//! `--http 3`: HTTP/3 over QUIC (`https://` only), both modes: one QUIC connection per client and origin (a
//! new client per request with `--connection new`: a QUIC handshake per request, on a UDP socket of its own).
//! Everything else (flags, warm-up, the start gate and t0, the timed loop closed or open, the upload check,
//! targets, failures, the document) is the harness's (the `reqwest-harness` crate); this file only says how
//! to make a client, do one GET (the benchmark's hot loop: `Client::get`, which counts the body's chunks),
//! and send any other request ([`transfer`]: a whole body's bytes shared by every request, not copied; a
//! streamed one as `reqwest::Body::wrap_stream` of the harness's chunks, sent chunked; the answer's chunks
//! handed to the harness as reqwest yields them, never kept). `--mode sync` runs the same future on the
//! blocking client's own runtime: reqwest-bench's `BlockingClient` is the async client on a private
//! current-thread runtime, not `reqwest::blocking`, so both modes stream through the same calls.
//! `--phases`: the clients time their connections (reqwest-bench's `ClientOptions::phases`) and every timed
//! request records its phases (reqwest-bench's `phases`): `connect+tls`, `send+wait`, `receive` (`dns+connect+tls`
//! when the host is a name; over HTTP/3 `connect+tls+send+wait` and `receive`: the QUIC handshake is inside the
//! exchange), in both modes ([`phase_keys`]).

use std::future::Future;
use std::process::ExitCode;

use clap::Parser;
use reqwest_bench::api::{Body, Request};
use reqwest_bench::phases::{self, Layout, Phases};
use reqwest_bench::reqwest::header::HeaderMap;
use reqwest_bench::reqwest::Method as HttpMethod;
use reqwest_bench::reqwest::Url;
use reqwest_bench::{classify, parse_url, BlockingClient, Client, ClientError, ClientOptions, REQWEST_VERSION};
use reqwest_harness::{self as harness, Answer, ClientInfo, Driver, Method, Mode, Outgoing, Plan};

/// Benchmark driver for the reqwest HTTP client (prints one clientbench.raw/4 JSON document).
#[derive(Parser, Debug)]
#[command(name = "reqwest-driver", version)]
struct Args {
    #[command(flatten)]
    contract: harness::Options,
    /// async: W tasks on the tokio multi-thread runtime; sync: W OS threads with blocking clients
    #[arg(long, value_enum, default_value_t = Mode::Async)]
    mode: Mode,
}

/// `--mode async`: the async client, on the harness's tokio runtime; with `--phases` their keys are the run's
/// [`Layout`]'s.
struct Tasks(Layout);

impl Driver for Tasks {
    type Client = Client;

    fn make_client(&self, options: &ClientOptions) -> Result<Client, ClientError> {
        Client::with_options(options)
    }

    fn get(&self, client: &Client, url: &str) -> impl Future<Output = Result<(u16, u64), ClientError>> + Send {
        client.get(url)
    }

    fn send(
        &self,
        client: &Client,
        method: Method,
        url: &str,
        body: Outgoing,
        answer: &mut Answer<'_>,
    ) -> impl Future<Output = Result<u16, ClientError>> + Send {
        transfer(client, method, url, body, answer)
    }

    fn phase_keys(&self, plan: &Plan) -> Vec<&'static str> {
        phase_keys(plan)
    }

    fn get_phases(
        &self,
        client: &Client,
        url: &str,
    ) -> impl Future<Output = Result<(u16, u64, Phases), ClientError>> + Send {
        let (get, layout) = (client.get_phases(url), self.0);
        async move { get.await.map(|(status, n, phases)| (status, n, phases.within(layout))) }
    }

    fn send_phases(
        &self,
        client: &Client,
        method: Method,
        url: &str,
        body: Outgoing,
        answer: &mut Answer<'_>,
    ) -> impl Future<Output = Result<(u16, Phases), ClientError>> + Send {
        transfer_phases(client, method, url, body, answer, self.0)
    }

    fn tls_version(&self, client: &Client) -> Option<&'static str> {
        client.tls_version()
    }

    fn protocol(&self, client: &Client) -> Option<&'static str> {
        client.http_version()
    }
}

fn http_method(method: Method) -> HttpMethod {
    match method {
        Method::Get => HttpMethod::GET,
        Method::Post => HttpMethod::POST,
        Method::Put => HttpMethod::PUT,
    }
}

/// Any request but the hot GET's, through reqwest-bench's `Client::open` with redirects off: the same pool,
/// limits, idle-connection check and total timeout as `Client::get`, and a body that may be a stream. The
/// response's chunks go to `answer` as reqwest yields them (each the bytes hyper read; none kept).
async fn transfer(
    client: &Client,
    method: Method,
    url: &str,
    body: Outgoing,
    answer: &mut Answer<'_>,
) -> Result<u16, ClientError> {
    let url = parse_url(url)?;
    let body = match body {
        Outgoing::None => Body::Empty,
        Outgoing::Whole(bytes) => Body::Bytes(bytes),
        // each chunk is cut when hyper asks for the next one
        Outgoing::Stream(mut chunks) => Body::from_fn(move || Ok(chunks.next())),
    };
    let request = Request {
        method: http_method(method),
        url,
        headers: HeaderMap::new(),
        body,
        timeout: None, // the client's: the whole request, body included
        follow_redirects: false,
        max_redirects: 0,
    };
    let mut resp = client.open(request).await?;
    let status = resp.status().as_u16();
    while let Some(chunk) = resp.chunk().await.map_err(|e| classify(&e))? {
        answer.feed(&chunk);
    }
    Ok(status)
}

/// [`transfer`], recording its phases, under the run's `layout` (`receive` ends when the last chunk has been
/// handed to `answer`, which counts it and checks an upload's answer as it goes).
async fn transfer_phases(
    client: &Client,
    method: Method,
    url: &str,
    body: Outgoing,
    answer: &mut Answer<'_>,
    layout: Layout,
) -> Result<(u16, Phases), ClientError> {
    let (result, phases) = phases::record(transfer(client, method, url, body, answer)).await;
    result.map(|status| (status, phases.within(layout)))
}

/// The [`Layout`] of `plan`'s requests, both modes: the one covering every URL's (a name's resolution is in the
/// connection's time: `dns+connect+tls`, for every request when some URLs are names; HTTP/3's handshake in the
/// exchange's: `connect+tls+send+wait`).
fn layout(plan: &Plan) -> Option<Layout> {
    Layout::covering(plan.urls().filter_map(|u| Url::parse(u).ok()).map(|u| Layout::of(&u, plan.http3)))
}

fn phase_keys(plan: &Plan) -> Vec<&'static str> {
    layout(plan).map_or_else(Vec::new, |l| l.keys().to_vec())
}

/// `--mode sync`: the blocking client (its own current-thread runtime), one per thread; with `--phases` their keys
/// are the run's [`Layout`]'s.
struct Threads(Layout);

impl Driver for Threads {
    type Client = BlockingClient;

    fn make_client(&self, options: &ClientOptions) -> Result<BlockingClient, ClientError> {
        BlockingClient::with_options(options)
    }

    fn get(&self, client: &BlockingClient, url: &str) -> impl Future<Output = Result<(u16, u64), ClientError>> + Send {
        std::future::ready(client.get(url, || false))
    }

    fn send(
        &self,
        client: &BlockingClient,
        method: Method,
        url: &str,
        body: Outgoing,
        answer: &mut Answer<'_>,
    ) -> impl Future<Output = Result<u16, ClientError>> + Send {
        std::future::ready(client.run(transfer(client.client(), method, url, body, answer), || false))
    }

    fn phase_keys(&self, plan: &Plan) -> Vec<&'static str> {
        phase_keys(plan)
    }

    fn get_phases(
        &self,
        client: &BlockingClient,
        url: &str,
    ) -> impl Future<Output = Result<(u16, u64, Phases), ClientError>> + Send {
        let got = client.get_phases(url, || false);
        std::future::ready(got.map(|(status, n, phases)| (status, n, phases.within(self.0))))
    }

    fn send_phases(
        &self,
        client: &BlockingClient,
        method: Method,
        url: &str,
        body: Outgoing,
        answer: &mut Answer<'_>,
    ) -> impl Future<Output = Result<(u16, Phases), ClientError>> + Send {
        let send = transfer_phases(client.client(), method, url, body, answer, self.0);
        std::future::ready(client.run(send, || false))
    }

    fn tls_version(&self, client: &BlockingClient) -> Option<&'static str> {
        client.client().tls_version()
    }

    fn protocol(&self, client: &BlockingClient) -> Option<&'static str> {
        client.client().http_version()
    }
}

fn main() -> ExitCode {
    const PROG: &str = "reqwest-driver";
    let args: Args = match harness::parse_args(PROG) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let info = ClientInfo { language: "Rust", library: "reqwest", library_version: REQWEST_VERSION };
    let (options, plan) = match harness::prepare(PROG, &args.contract) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let outcome = match args.mode {
        Mode::Async => {
            let tasks = Tasks(layout(&plan).unwrap_or_default());
            harness::unsupported(&tasks, &args.contract).map(|()| harness::run_tasks(tasks, &plan, &options))
        }
        Mode::Sync => {
            let threads = Threads(layout(&plan).unwrap_or_default());
            harness::unsupported(&threads, &args.contract).map(|()| harness::run_threads(threads, &plan, &options))
        }
    };
    let outcome = match outcome {
        Ok(o) => o,
        Err(code) => return code,
    };
    harness::finish(PROG, info, args.mode, &args.contract, outcome)
}
