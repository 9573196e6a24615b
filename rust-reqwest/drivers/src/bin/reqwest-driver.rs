//! reqwest-driver: the clientbench driver for reqwest (docs/raw-format.md).
//!
//! `--mode async` (default): W tokio tasks on the multi-thread runtime, each with its own `Client`.
//! `--mode sync`: W OS threads, each with its own `BlockingClient` (own current-thread runtime).
//! `--client-scope shared`: one of those for all W (a `Client` is a handle on one pool; a `BlockingClient`
//! is `Sync`: its threads take turns driving its runtime, each request on a connection of the one pool).
//! `--http 2`: HTTP/2 over ALPN (`https://`) or with prior knowledge (`http://`), both modes.
//! Everything else (flags, warm-up, the start gate and t0, the timed loop closed or open, the upload check,
//! failures, the document) is the harness's (the `reqwest-harness` crate); this file only says how to make
//! a client and do one GET or one POST/PUT (the body's bytes are shared by every request, not copied).

use std::future::Future;
use std::process::ExitCode;

use clap::Parser;
use reqwest_bench::reqwest::Method as HttpMethod;
use reqwest_bench::{BlockingClient, Client, ClientError, ClientOptions, REQWEST_VERSION};
use reqwest_harness::{self as harness, Bytes, ClientInfo, Driver, Method, Mode};

/// Benchmark driver for the reqwest HTTP client (prints one clientbench.raw/2 JSON document).
#[derive(Parser, Debug)]
#[command(name = "reqwest-driver", version)]
struct Args {
    #[command(flatten)]
    contract: harness::Options,
    /// async: W tasks on the tokio multi-thread runtime; sync: W OS threads with blocking clients
    #[arg(long, value_enum, default_value_t = Mode::Async)]
    mode: Mode,
}

/// `--mode async`: the async client, on the harness's tokio runtime.
struct Tasks;

impl Driver for Tasks {
    type Client = Client;

    fn make_client(&self, options: &ClientOptions) -> Result<Client, ClientError> {
        Client::with_options(options)
    }

    fn get(&self, client: &Client, url: &str) -> impl Future<Output = Result<(u16, u64), ClientError>> + Send {
        client.get(url)
    }

    fn upload(
        &self,
        client: &Client,
        method: Method,
        url: &str,
        body: &Bytes,
        keep: usize,
    ) -> impl Future<Output = Result<(u16, u64, Bytes), ClientError>> + Send {
        client.send_body(http_method(method), url, body.clone(), keep)
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

/// `--mode sync`: the blocking client (its own current-thread runtime), one per thread.
struct Threads;

impl Driver for Threads {
    type Client = BlockingClient;

    fn make_client(&self, options: &ClientOptions) -> Result<BlockingClient, ClientError> {
        BlockingClient::with_options(options)
    }

    fn get(&self, client: &BlockingClient, url: &str) -> impl Future<Output = Result<(u16, u64), ClientError>> + Send {
        std::future::ready(client.get(url, || false))
    }

    fn upload(
        &self,
        client: &BlockingClient,
        method: Method,
        url: &str,
        body: &Bytes,
        keep: usize,
    ) -> impl Future<Output = Result<(u16, u64, Bytes), ClientError>> + Send {
        std::future::ready(client.send_body(http_method(method), url, body.clone(), keep, || false))
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
            harness::unsupported(&Tasks, &args.contract).map(|()| harness::run_tasks(Tasks, &plan, &options))
        }
        Mode::Sync => {
            harness::unsupported(&Threads, &args.contract).map(|()| harness::run_threads(Threads, &plan, &options))
        }
    };
    let outcome = match outcome {
        Ok(o) => o,
        Err(code) => return code,
    };
    harness::finish(PROG, info, args.mode, &args.contract, outcome)
}
