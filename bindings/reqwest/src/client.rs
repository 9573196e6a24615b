//! `Client`: the synchronous client. Each call runs on the client's own current-thread tokio runtime, driven
//! by the calling thread (reqwest-bench's `BlockingClient::run_owned`: no hand-off to another thread), with
//! the GIL released (`release_gil=False` runs the very same code with the GIL held, to show the effect);
//! while it waits it re-attaches every 50 ms to run Python's signal handlers, so Ctrl-C interrupts a
//! request promptly. In a child made by `fork()` the client builds a new runtime and pool at its first use
//! there (fork.rs).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use reqwest_bench::{BlockingClient, ClientError, ClientOptions, TlsSeen};

use crate::config::{client_pymethods, tls_info_dict, ClientClass, Config};
use crate::errors::to_py_err;
use crate::fork::ForkLocal;
use crate::request::{lean_body, open_streamed, prepare, read_whole, request_error, RequestArgs};
use crate::response::{phases_ns, Response};
use crate::stream::StreamResponse;

/// Poll Python's signal handlers from a thread that released the GIL (every 50 ms while waiting).
/// Returns true (cancel) when a handler raised; the error is kept in `slot`.
pub(crate) fn signal_check_detached(slot: &mut Option<PyErr>) -> bool {
    // (If the interpreter is finalizing, taking the GIL back would pthread_exit this thread in
    // CPython < 3.14; PyO3's PyEval_RestoreThread / attach park such a thread instead of unwinding.)
    match Python::try_attach(|py| py.check_signals()) {
        Some(Ok(())) => false,
        Some(Err(e)) => {
            *slot = Some(e);
            true
        }
        // The interpreter is shutting down: stop waiting.
        None => true,
    }
}

/// Synchronous HTTP/1.1 (and HTTP/2) client (http:// and https://) with a keep-alive connection pool.
///
/// `verify`: True (the system's roots), False (no certificate check: unsafe) or the path of a CA bundle
/// (PEM), as requests' `verify=`.
#[pyclass(module = "reqwest_client", name = "Client", frozen, dict, weakref)]
pub(crate) struct Client {
    inner: RwLock<Option<Arc<ForkLocal<BlockingClient>>>>,
    last_body_bytes: AtomicU64,
    config: Config,
    /// What the client is built from (again in a forked child).
    options: ClientOptions,
    /// The current client's (a forked child's client starts without).
    tls_seen: RwLock<TlsSeen>,
}

pub(crate) type Shared = Arc<ForkLocal<BlockingClient>>;

impl Client {
    fn handle(&self) -> PyResult<Shared> {
        {
            let guard = self.inner.read().unwrap_or_else(|e| e.into_inner());
            match &*guard {
                Some(c) if c.is_current() => return Ok(c.clone()),
                Some(_) => {}
                None => return Err(PyRuntimeError::new_err("Client is closed")),
            }
        }
        self.renew()
    }

    /// In a forked child: a new client (runtime, pool) in place of the parent's, which is leaked.
    #[cold]
    fn renew(&self) -> PyResult<Shared> {
        let mut guard = self.inner.write().unwrap_or_else(|e| e.into_inner());
        match &*guard {
            Some(c) if c.is_current() => return Ok(c.clone()),
            Some(_) => {}
            None => return Err(PyRuntimeError::new_err("Client is closed")),
        }
        let fresh = BlockingClient::with_options(&self.options).map_err(to_py_err)?;
        *self.tls_seen.write().unwrap_or_else(|e| e.into_inner()) = fresh.client().tls_seen().unwrap_or_default();
        let fresh = Arc::new(ForkLocal::new(fresh));
        *guard = Some(fresh.clone());
        Ok(fresh)
    }

    /// Run `f` on the client with the GIL released (or held), checking for signals every 50 ms.
    fn call<T, F>(&self, py: Python<'_>, release_gil: bool, f: F) -> PyResult<T>
    where
        T: Send,
        F: FnOnce(&BlockingClient, &mut dyn FnMut() -> bool) -> Result<T, ClientError> + Send,
    {
        self.call_with(py, release_gil, f, to_py_err)
    }

    /// [`Client::call`] with the client error mapped by `map_err`.
    fn call_with<T, F, M>(&self, py: Python<'_>, release_gil: bool, f: F, map_err: M) -> PyResult<T>
    where
        T: Send,
        F: FnOnce(&BlockingClient, &mut dyn FnMut() -> bool) -> Result<T, ClientError> + Send,
        M: FnOnce(ClientError) -> PyErr,
    {
        let client = self.handle()?;
        let (result, signal) = if release_gil {
            py.detach(move || {
                let mut signal = None;
                let result = f(&client, &mut || signal_check_detached(&mut signal));
                drop(client);
                (result, signal)
            })
        } else {
            let mut signal = None;
            let result = f(&client, &mut || match py.check_signals() {
                Ok(()) => false,
                Err(e) => {
                    signal = Some(e);
                    true
                }
            });
            (result, signal)
        };
        if let Some(e) = signal {
            return Err(e);
        }
        result.map_err(map_err)
    }
}

impl ClientClass for Client {
    fn build(py: Python<'_>, options: ClientOptions, config: Config) -> PyResult<Self> {
        let client = py.detach(|| BlockingClient::with_options(&options)).map_err(to_py_err)?;
        Ok(Client {
            tls_seen: RwLock::new(client.client().tls_seen().unwrap_or_default()),
            inner: RwLock::new(Some(Arc::new(ForkLocal::new(client)))),
            last_body_bytes: AtomicU64::new(0),
            config,
            options,
        })
    }

    fn config(&self) -> &Config {
        &self.config
    }
}

client_pymethods! {
    impl Client {
        /// GET `url`, read the whole body, return the status. The body size is in `last_body_bytes`.
        #[pyo3(signature = (url, *, release_gil = true))]
        fn get(&self, py: Python<'_>, url: &str, release_gil: bool) -> PyResult<u16> {
            let (status, n) = self.call(py, release_gil, |c, cancel| c.get(url, cancel))?;
            self.last_body_bytes.store(n, Ordering::Relaxed);
            Ok(status)
        }

        /// GET `url`, read the whole body, return `(status, body bytes)`.
        #[pyo3(signature = (url, *, release_gil = true))]
        fn fetch_len(&self, py: Python<'_>, url: &str, release_gil: bool) -> PyResult<(u16, u64)> {
            let (status, n) = self.call(py, release_gil, |c, cancel| c.get(url, cancel))?;
            self.last_body_bytes.store(n, Ordering::Relaxed);
            Ok((status, n))
        }

        /// `fetch_len` recording the request's phases: `(status, body bytes, {phase key: ns})` (the keys of
        /// `Response.phases`), the GIL released (or held) as `fetch_len` does.
        #[pyo3(signature = (url, *, release_gil = true))]
        fn fetch_phases<'py>(
            &self,
            py: Python<'py>,
            url: &str,
            release_gil: bool,
        ) -> PyResult<(u16, u64, Bound<'py, PyDict>)> {
            let (status, n, phases) = self.call(py, release_gil, |c, cancel| c.get_phases(url, cancel))?;
            self.last_body_bytes.store(n, Ordering::Relaxed);
            Ok((status, n, phases_ns(py, &phases)?))
        }

        /// `method` `url` exactly as given, with `body` (bytes-like, sent with Content-Length) if any; read the
        /// whole body and return `(status, body)`. The benchmark path of uploads: no redirects, no decoding,
        /// no default headers.
        #[pyo3(signature = (url, *, method = "GET", body = None, release_gil = true))]
        fn fetch<'py>(
            &self,
            py: Python<'py>,
            url: &str,
            method: &str,
            body: Option<&Bound<'py, PyAny>>,
            release_gil: bool,
        ) -> PyResult<(u16, Bound<'py, PyBytes>)> {
            let body = lean_body(body)?;
            let resp = self.call(py, release_gil, |c, cancel| c.fetch(method, url, &[], body, cancel))?;
            self.last_body_bytes.store(resp.body.len() as u64, Ordering::Relaxed);
            Ok((resp.status, PyBytes::new(py, &resp.body)))
        }

        /// Any method: `params` appended to the query, `headers`, a `body` (bytes-like, an iterable of
        /// bytes-like chunks or a binary file: streamed with chunked encoding) or `json`; redirects followed as
        /// the client says unless `follow_redirects` is given; `timeout` (total, seconds) overrides the
        /// client's. Returns a `Response` with the whole (decoded) body.
        #[pyo3(signature = (method, url, *, params = None, headers = None, body = None, json = None, timeout = None,
                            follow_redirects = None, release_gil = true))]
        #[allow(clippy::too_many_arguments)]
        fn request(
            &self,
            py: Python<'_>,
            method: &str,
            url: &str,
            params: Option<&Bound<'_, PyAny>>,
            headers: Option<&Bound<'_, PyAny>>,
            body: Option<&Bound<'_, PyAny>>,
            json: Option<&Bound<'_, PyAny>>,
            timeout: Option<f64>,
            follow_redirects: Option<bool>,
            release_gil: bool,
        ) -> PyResult<Response> {
            let args = RequestArgs { params, headers, body, json, timeout, follow_redirects };
            let (req, slot) = prepare(py, method, url, &args, self.config.settings, true)?;
            let (head, body, phases) = self.call_with(
                py,
                release_gil,
                |c, cancel| {
                    let client = c.client_arc();
                    c.run_owned(async move { read_whole(&client, req).await }, cancel)
                },
                |e| request_error(e, &slot),
            )?;
            self.last_body_bytes.store(body.len() as u64, Ordering::Relaxed);
            Ok(Response::new(head, body, phases))
        }

        /// Like `request`, but the body is read as it arrives: a `StreamResponse` (a context manager) whose
        /// `iter_bytes()` yields the chunks, waiting for each with the GIL released.
        #[pyo3(signature = (method, url, *, params = None, headers = None, body = None, json = None, timeout = None,
                            follow_redirects = None))]
        #[allow(clippy::too_many_arguments)]
        fn stream(
            &self,
            py: Python<'_>,
            method: &str,
            url: &str,
            params: Option<&Bound<'_, PyAny>>,
            headers: Option<&Bound<'_, PyAny>>,
            body: Option<&Bound<'_, PyAny>>,
            json: Option<&Bound<'_, PyAny>>,
            timeout: Option<f64>,
            follow_redirects: Option<bool>,
        ) -> PyResult<StreamResponse> {
            let args = RequestArgs { params, headers, body, json, timeout, follow_redirects };
            let (req, slot) = prepare(py, method, url, &args, self.config.settings, true)?;
            let client = self.handle()?;
            let (head, resp) = self.call_with(
                py,
                true,
                |c, cancel| {
                    let client = c.client_arc();
                    c.run_owned(async move { open_streamed(&client, req).await }, cancel)
                },
                |e| request_error(e, &slot),
            )?;
            Ok(StreamResponse::new(head, resp, client))
        }

        /// Body bytes read by the last completed `get` / `fetch_len` / `fetch_phases` / `fetch` / `request` (0 before
        /// the first).
        #[getter]
        fn last_body_bytes(&self) -> u64 {
            self.last_body_bytes.load(Ordering::Relaxed)
        }

        /// `{"version": "TLSv1.3", "cipher": None}` of the connection of the most recent response (OpenSSL's
        /// version names; reqwest does not tell the cipher suite); `None` before the first response and when
        /// it came over plain `http://`. Kept after `close()`.
        #[getter]
        fn tls_info<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
            let seen = self.tls_seen.read().unwrap_or_else(|e| e.into_inner()).clone();
            tls_info_dict(py, &seen)
        }

        #[getter]
        fn closed(&self) -> bool {
            self.inner.read().unwrap_or_else(|e| e.into_inner()).is_none()
        }

        /// Close the connection pool. Idempotent; later requests raise RuntimeError. A request running in
        /// another thread finishes first.
        fn close(&self, py: Python<'_>) {
            let taken = self.inner.write().unwrap_or_else(|e| e.into_inner()).take();
            py.detach(move || drop(taken));
        }

        fn __enter__(slf: Py<Self>) -> Py<Self> {
            slf
        }

        #[pyo3(signature = (*_args))]
        fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> bool {
            self.close(py);
            false
        }

        fn __repr__(&self) -> String {
            let state = if self.closed() { " closed" } else { "" };
            let timeout = self.config.timeout.map_or("None".to_owned(), |t| t.to_string());
            format!("<reqwest_client.Client timeout={timeout}{state}>")
        }
    }
}
