//! `reqwest_client._core`: Python bindings of the clientbench reqwest client (rust-reqwest/).
//!
//! * `Client` — synchronous; each call runs on the client's own current-thread tokio runtime with the
//!   GIL released (`release_gil=False` runs the very same code with the GIL held, to show the effect);
//!   while it waits it re-attaches every 50 ms to run Python's signal handlers, so Ctrl-C interrupts a
//!   request promptly.
//! * `RawAsyncClient` — asyncio futures of requests running on a shared tokio runtime, resolved on the
//!   loop's thread through a per-loop `Completer` (see aio.rs). The methods create the future at call
//!   time, so they need a running event loop; the public `reqwest_client.AsyncClient`
//!   (python/reqwest_client/__init__.py) wraps them in real coroutines.
//!
//! Errors: invalid URL / method / header → `ValueError`; timeout → `TimeoutError`; connection failures →
//! `ConnectionError` (`ConnectionRefusedError` / `ConnectionResetError` where clear); malformed HTTP →
//! `reqwest_client.ProtocolError` (an `OSError`). Non-2xx statuses are returned, never raised.

mod aio;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use bytes::Bytes;
use pyo3::create_exception;
use pyo3::exceptions::{
    PyConnectionError, PyConnectionRefusedError, PyConnectionResetError, PyOSError, PyRuntimeError, PyTimeoutError,
    PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyTuple};
use reqwest_bench::{BlockingClient, ClientError, ConnectionKind};

create_exception!(
    reqwest_client,
    ProtocolError,
    PyOSError,
    "The server's response is not valid HTTP/1.1 (bad status line, headers or framing)."
);

pub(crate) fn to_py_err(e: ClientError) -> PyErr {
    let msg = e.message().to_string();
    match e {
        ClientError::InvalidUrl(_) | ClientError::InvalidRequest(_) => PyValueError::new_err(msg),
        ClientError::Timeout(_) => PyTimeoutError::new_err(msg),
        ClientError::Connection(ConnectionKind::Refused, _) => PyConnectionRefusedError::new_err(msg),
        ClientError::Connection(ConnectionKind::Reset, _) => PyConnectionResetError::new_err(msg),
        ClientError::Connection(..) => PyConnectionError::new_err(msg),
        ClientError::Protocol(_) => ProtocolError::new_err(msg),
        ClientError::Cancelled | ClientError::Usage(_) => PyRuntimeError::new_err(msg),
    }
}

pub(crate) fn timeout_duration(timeout: f64) -> PyResult<Duration> {
    match Duration::try_from_secs_f64(timeout) {
        Ok(d) if !d.is_zero() => Ok(d),
        _ => Err(PyValueError::new_err(format!("timeout must be a positive number of seconds, got {timeout}"))),
    }
}

/// `Mapping[str, str]` (anything with `.items()`) → header pairs.
pub(crate) fn extract_headers(headers: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let Some(h) = headers else { return Ok(Vec::new()) };
    if h.is_none() {
        return Ok(Vec::new());
    }
    let items = h.call_method0("items").map_err(|_| PyTypeError::new_err("headers must be a mapping of str to str"))?;
    let mut out = Vec::new();
    for item in items.try_iter()? {
        let pair: (String, String) =
            item?.extract().map_err(|_| PyTypeError::new_err("headers must be a mapping of str to str"))?;
        out.push(pair);
    }
    Ok(out)
}

/// `bytes | bytearray | None` → body.
pub(crate) fn extract_body(body: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Bytes>> {
    let Some(b) = body else { return Ok(None) };
    if b.is_none() {
        return Ok(None);
    }
    if let Ok(bytes) = b.cast::<PyBytes>() {
        return Ok(Some(Bytes::copy_from_slice(bytes.as_bytes())));
    }
    if let Ok(array) = b.cast::<PyByteArray>() {
        return Ok(Some(Bytes::from(array.to_vec())));
    }
    Err(PyTypeError::new_err(format!("body must be bytes, bytearray or None, not {}", b.get_type().name()?)))
}

/// A complete HTTP response.
#[pyclass(module = "reqwest_client", name = "Response", frozen)]
pub(crate) struct Response {
    /// The status code.
    #[pyo3(get)]
    status: u16,
    header_pairs: Vec<(String, String)>,
    body_bytes: Bytes,
    body_obj: PyOnceLock<Py<PyBytes>>,
}

impl Response {
    pub(crate) fn new(r: reqwest_bench::Response) -> Self {
        Response { status: r.status, header_pairs: r.headers, body_bytes: r.body, body_obj: PyOnceLock::new() }
    }
}

#[pymethods]
impl Response {
    /// Response headers as a new dict: lower-case names; repeated headers joined with ", ".
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.header_pairs {
            match d.get_item(k)? {
                Some(prev) => {
                    let joined = format!("{}, {}", prev.extract::<String>()?, v);
                    d.set_item(k, joined)?;
                }
                None => d.set_item(k, v)?,
            }
        }
        Ok(d)
    }

    /// The whole response body.
    #[getter]
    fn body(&self, py: Python<'_>) -> Py<PyBytes> {
        self.body_obj.get_or_init(py, || PyBytes::new(py, &self.body_bytes).unbind()).clone_ref(py)
    }

    fn __repr__(&self) -> String {
        format!("<Response [{}] {} bytes>", self.status, self.body_bytes.len())
    }
}

/// Poll Python's signal handlers from a thread that released the GIL (every 50 ms while waiting).
/// Returns true (cancel) when a handler raised; the error is kept in `slot`.
fn signal_check_detached(slot: &mut Option<PyErr>) -> bool {
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

/// Synchronous HTTP/1.1 client with a keep-alive connection pool.
#[pyclass(module = "reqwest_client", name = "Client", frozen, dict, weakref)]
struct Client {
    inner: RwLock<Option<Arc<BlockingClient>>>,
    last_body_bytes: AtomicU64,
    timeout: f64,
}

impl Client {
    fn handle(&self) -> PyResult<Arc<BlockingClient>> {
        let guard = self.inner.read().unwrap_or_else(|e| e.into_inner());
        guard.clone().ok_or_else(|| PyRuntimeError::new_err("Client is closed"))
    }

    /// Run `f` on the client with the GIL released (or held), checking for signals every 50 ms.
    fn call<T, F>(&self, py: Python<'_>, release_gil: bool, f: F) -> PyResult<T>
    where
        T: Send,
        F: FnOnce(&BlockingClient, &mut dyn FnMut() -> bool) -> Result<T, ClientError> + Send,
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
        result.map_err(to_py_err)
    }
}

#[pymethods]
impl Client {
    #[new]
    #[pyo3(signature = (timeout = 30.0))]
    fn new(py: Python<'_>, timeout: f64) -> PyResult<Self> {
        let d = timeout_duration(timeout)?;
        let client = py.detach(|| BlockingClient::new(d)).map_err(to_py_err)?;
        Ok(Client { inner: RwLock::new(Some(Arc::new(client))), last_body_bytes: AtomicU64::new(0), timeout })
    }

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

    /// Any method with optional headers and body; returns a `Response` with the whole body.
    #[pyo3(signature = (method, url, *, headers = None, body = None, release_gil = true))]
    fn request(
        &self,
        py: Python<'_>,
        method: &str,
        url: &str,
        headers: Option<&Bound<'_, PyAny>>,
        body: Option<&Bound<'_, PyAny>>,
        release_gil: bool,
    ) -> PyResult<Response> {
        let headers = extract_headers(headers)?;
        let body = extract_body(body)?;
        let resp = self.call(py, release_gil, |c, cancel| c.fetch(method, url, &headers, body, cancel))?;
        self.last_body_bytes.store(resp.body.len() as u64, Ordering::Relaxed);
        Ok(Response::new(resp))
    }

    /// Body bytes read by the last completed `get` / `fetch_len` / `request` (0 before the first).
    #[getter]
    fn last_body_bytes(&self) -> u64 {
        self.last_body_bytes.load(Ordering::Relaxed)
    }

    /// The per-request timeout, seconds.
    #[getter]
    fn timeout(&self) -> f64 {
        self.timeout
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
        format!("<reqwest_client.Client timeout={}{}>", self.timeout, state)
    }
}

/// Python bindings of the clientbench reqwest client (HTTP/1.1, http:// only).
#[pymodule(name = "_core", gil_used = false)]
fn reqwest_client_core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Client>()?;
    m.add_class::<aio::RawAsyncClient>()?;
    m.add_class::<aio::Completer>()?;
    m.add_class::<Response>()?;
    m.add("ProtocolError", m.py().get_type::<ProtocolError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("reqwest_version", reqwest_bench::REQWEST_VERSION)?;
    Ok(())
}
