//! `reqwest_client._core`: Python bindings of the clientbench reqwest client (rust-reqwest/). The API,
//! shared with the Beast binding, is docs/binding-api.md; this file only registers the module.
//!
//! * `Client` (client.rs) — synchronous; each call runs on the client's own tokio runtime with the GIL
//!   released, re-attaching every 50 ms to run Python's signal handlers.
//! * `RawAsyncClient` (aio.rs) — asyncio futures of requests running on a shared tokio runtime, resolved on
//!   the loop's thread through a per-loop `Completer`. The methods create the future at call time, so they
//!   need a running event loop; the public `reqwest_client.AsyncClient` (python/reqwest_client/__init__.py)
//!   wraps them in real coroutines.
//! * Both take the same constructor arguments, listed once: config.rs's `client_pymethods!` writes both
//!   classes' `__new__` and option getters, and config.rs parses them. `request` / `stream` are the
//!   user-facing API: params, default headers, redirects, decompression, streamed bodies both ways. Their
//!   path is request.rs's for both (over `reqwest_bench::api`): the arguments checked into a request, and
//!   the exchange futures that `Client` blocks on and `RawAsyncClient` spawns; they return `Response` /
//!   `Headers` (response.rs) and `StreamResponse` (stream.rs). `get` / `fetch_len` are the bare benchmark
//!   path.
//! * `RawUpload` (upload.rs) — an `AsyncClient` request's streamed body, fed chunk by chunk from the loop's thread.
//! * Errors (errors.rs): the module's exception classes and which exception each failure raises.
//! * Fork safety (fork.rs): a forked child's clients get their own runtime and pool at first use.

mod aio;
mod client;
mod config;
mod errors;
mod fork;
mod request;
mod response;
mod stream;
mod upload;

use pyo3::prelude::*;

/// Python bindings of the clientbench reqwest client (HTTP/1.1 over http:// and https://).
#[pymodule(name = "_core", gil_used = false)]
fn reqwest_client_core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    fork::install()?;
    m.add_class::<client::Client>()?;
    m.add_class::<aio::RawAsyncClient>()?;
    m.add_class::<aio::Completer>()?;
    m.add_class::<response::Response>()?;
    m.add_class::<response::Headers>()?;
    m.add_class::<stream::StreamResponse>()?;
    m.add_class::<aio::RawStream>()?;
    m.add_class::<upload::RawUpload>()?;
    m.add("TooManyRedirects", m.py().get_type::<errors::TooManyRedirects>())?;
    m.add("ProtocolError", m.py().get_type::<errors::ProtocolError>())?;
    m.add("BodyTooLarge", m.py().get_type::<errors::BodyTooLarge>())?;
    m.add("TLSError", m.py().get_type::<errors::TLSError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("reqwest_version", reqwest_bench::REQWEST_VERSION)?;
    Ok(())
}
