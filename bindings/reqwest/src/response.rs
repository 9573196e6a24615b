//! The user-facing API shared by `Client` and `RawAsyncClient` (issue 12, /tmp/spec/api12.md): the client
//! options, turning `request(...)`'s arguments into a [`reqwest_bench::api::Request`], and the `Headers`,
//! `Response` and `StreamResponse` classes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use pyo3::exceptions::{PyKeyError, PyLookupError, PyRuntimeError, PyStopIteration, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use pyo3::IntoPyObjectExt;
use reqwest_bench::api::{self, Head};
use reqwest_bench::{BlockingClient, ClientError, ClientOptions, ProxyConfig};

use crate::to_py_err;

/// `timeout=`-like arguments: None, or a positive finite number of seconds.
pub(crate) fn seconds(name: &str, value: Option<f64>) -> PyResult<Option<Duration>> {
    match value {
        None => Ok(None),
        Some(v) => match Duration::try_from_secs_f64(v) {
            Ok(d) if !d.is_zero() => Ok(Some(d)),
            _ => Err(PyValueError::new_err(format!("{name} must be a positive number of seconds or None, got {v}"))),
        },
    }
}

/// What a client does to each `request` / `stream` besides its `ClientOptions`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    pub follow_redirects: bool,
    pub max_redirects: usize,
}

/// The keyword arguments of `Client(...)` / `RawAsyncClient(...)` (besides `verify`).
pub(crate) struct ClientArgs<'a, 'py> {
    pub timeout: Option<f64>,
    pub connect_timeout: Option<f64>,
    pub read_timeout: Option<f64>,
    pub follow_redirects: bool,
    pub max_redirects: i64,
    pub headers: Option<&'a Bound<'py, PyAny>>,
    pub decompress: bool,
    pub user_agent: Option<String>,
    pub trust_env: bool,
    pub proxy: Option<String>,
}

/// The default `User-Agent`.
pub(crate) fn default_user_agent() -> String {
    format!("reqwest-client/{}", env!("CARGO_PKG_VERSION"))
}

impl ClientArgs<'_, '_> {
    /// Check the arguments; `tls` is the parsed `verify`.
    pub(crate) fn options(&self, tls: reqwest_bench::TlsConfig) -> PyResult<(ClientOptions, Settings)> {
        let total = seconds("timeout", self.timeout)?;
        let max_redirects = usize::try_from(self.max_redirects)
            .map_err(|_| PyValueError::new_err(format!("max_redirects must be >= 0, got {}", self.max_redirects)))?;
        let mut pairs = extract_header_pairs(self.headers)?;
        if !pairs.iter().any(|(k, _)| k.eq_ignore_ascii_case("user-agent")) {
            let ua = self.user_agent.clone().unwrap_or_else(default_user_agent);
            pairs.insert(0, ("user-agent".to_owned(), ua));
        }
        let default_headers = api::headers(&pairs).map_err(to_py_err)?;
        let proxy = match (&self.proxy, self.trust_env) {
            (Some(url), _) => ProxyConfig::Url(url.clone()),
            (None, true) => ProxyConfig::Env,
            (None, false) => ProxyConfig::None,
        };
        let options = ClientOptions {
            timeout: total,
            connect_timeout: seconds("connect_timeout", self.connect_timeout)?,
            read_timeout: seconds("read_timeout", self.read_timeout)?,
            tls,
            tls_info: true,
            proxy,
            decompress: self.decompress,
            default_headers,
        };
        Ok((options, Settings { follow_redirects: self.follow_redirects, max_redirects }))
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()
}

/// `Mapping[str, str]` (anything with `.items()`) or a sequence of `(name, value)` pairs → pairs (a sequence
/// may repeat a name).
pub(crate) fn extract_header_pairs(headers: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let Some(h) = headers.filter(|h| !h.is_none()) else { return Ok(Vec::new()) };
    let bad = || PyTypeError::new_err("headers must be a mapping of str to str or a sequence of (str, str) pairs");
    let items = if h.hasattr("items")? { h.call_method0("items")? } else { h.clone() };
    if items.is_instance_of::<PyString>() || items.is_instance_of::<PyBytes>() {
        return Err(bad());
    }
    let mut out = Vec::new();
    for item in items.try_iter().map_err(|_| bad())? {
        let pair: (String, String) = item?.extract().map_err(|_| bad())?;
        out.push(pair);
    }
    Ok(out)
}

/// One `params` value as text (`None` → skipped).
fn param_text(v: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if v.is_none() {
        return Ok(None);
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(Some(s.to_cow()?.into_owned()));
    }
    if v.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err("params values must be str, int, float or a sequence of them, not bytes"));
    }
    Ok(Some(v.str()?.to_cow()?.into_owned()))
}

/// `params` → `(name, value)` pairs: a mapping or a sequence of pairs; a list/tuple value repeats the name.
pub(crate) fn extract_params(params: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let Some(p) = params.filter(|p| !p.is_none()) else { return Ok(Vec::new()) };
    let bad = || PyTypeError::new_err("params must be a mapping or a sequence of (name, value) pairs");
    let items = if p.hasattr("items")? { p.call_method0("items")? } else { p.clone() };
    if items.is_instance_of::<PyString>() || items.is_instance_of::<PyBytes>() {
        return Err(bad());
    }
    let mut out = Vec::new();
    for item in items.try_iter().map_err(|_| bad())? {
        let (name, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract().map_err(|_| bad())?;
        let name: String = name.extract().map_err(|_| PyTypeError::new_err("params names must be str"))?;
        if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
            for v in value.try_iter()? {
                if let Some(text) = param_text(&v?)? {
                    out.push((name.clone(), text));
                }
            }
        } else if let Some(text) = param_text(&value)? {
            out.push((name, text));
        }
    }
    Ok(out)
}

/// A bytes-like object (the buffer protocol) → Bytes: `bytes` without a copy, anything else (bytearray,
/// memoryview, array, ...) copied once (the caller may change it while it is sent). `None` when `obj` does
/// not support the buffer protocol.
pub(crate) fn buffer_bytes(obj: &Bound<'_, PyAny>) -> PyResult<Option<Bytes>> {
    static MEMORYVIEW: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    if let Ok(b) = obj.cast::<PyBytes>() {
        let backed = PyBackedBytes::from(b.clone());
        return Ok(Some(Bytes::from_owner(backed)));
    }
    let memoryview = MEMORYVIEW.import(obj.py(), "builtins", "memoryview")?;
    let Ok(view) = memoryview.call1((obj,)) else { return Ok(None) };
    let copy = view.call_method0("tobytes")?.cast_into::<PyBytes>()?;
    Ok(Some(Bytes::from_owner(PyBackedBytes::from(copy))))
}

/// Where a streamed upload keeps the Python exception its source raised (re-raised instead of the
/// transport error it caused).
pub(crate) type UploadError = Arc<Mutex<Option<PyErr>>>;

/// An upload read from a binary file object (`.read(65536)`) or an iterable of bytes-like chunks, pulled
/// as the connection wants more. It takes the GIL for each chunk: only for the synchronous client, whose
/// runtime runs on the calling (Python) thread.
fn upload_stream(py: Python<'_>, body: &Bound<'_, PyAny>, slot: UploadError) -> PyResult<api::Body> {
    let is_file = body.hasattr("read")?;
    let source: Py<PyAny> = if is_file {
        body.clone().unbind()
    } else {
        body.try_iter()
            .map_err(|_| {
                PyTypeError::new_err(format!(
                    "body must be bytes-like, an iterable of bytes-like chunks or a binary file, not {}",
                    type_name(body)
                ))
            })?
            .into_any()
            .unbind()
    };
    let _ = py;
    let mut done = false;
    Ok(api::Body::from_fn(move || {
        if done {
            return Ok(None);
        }
        let next = Python::try_attach(|py| -> PyResult<Option<Bytes>> {
            let src = source.bind(py);
            loop {
                let chunk = if is_file {
                    src.call_method1("read", (65536,))?
                } else {
                    match src.call_method0("__next__") {
                        Ok(c) => c,
                        Err(e) if e.is_instance_of::<PyStopIteration>(py) => return Ok(None),
                        Err(e) => return Err(e),
                    }
                };
                if chunk.is_none() && is_file {
                    return Ok(None); // a non-blocking file with nothing now: treat as the end
                }
                let Some(bytes) = buffer_bytes(&chunk)? else {
                    return Err(PyTypeError::new_err(format!(
                        "body chunks must be bytes-like, not {}",
                        type_name(&chunk)
                    )));
                };
                if bytes.is_empty() {
                    if is_file {
                        return Ok(None); // EOF
                    }
                    continue; // an empty chunk would end a chunked body: skip it
                }
                return Ok(Some(bytes));
            }
        });
        match next {
            Some(Ok(Some(b))) => Ok(Some(b)),
            Some(Ok(None)) => {
                done = true;
                Ok(None)
            }
            Some(Err(e)) => {
                let msg = e.to_string();
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                done = true;
                Err(std::io::Error::other(format!("the body's source raised: {msg}")))
            }
            None => Err(std::io::Error::other("the interpreter is shutting down")),
        }
    }))
}

/// `request(...)`'s keyword arguments.
pub(crate) struct RequestArgs<'a, 'py> {
    pub params: Option<&'a Bound<'py, PyAny>>,
    pub headers: Option<&'a Bound<'py, PyAny>>,
    pub body: Option<&'a Bound<'py, PyAny>>,
    pub json: Option<&'a Bound<'py, PyAny>>,
    pub timeout: Option<f64>,
    pub follow_redirects: Option<bool>,
}

/// Build the request (with the GIL: everything is checked before any I/O). `allow_stream`: an iterable or
/// file body is streamed (sync client); otherwise such a body is a TypeError (the async wrapper reads it
/// first). The returned slot receives a streamed body's Python exception.
pub(crate) fn prepare(
    py: Python<'_>,
    method: &str,
    url: &str,
    args: &RequestArgs<'_, '_>,
    settings: Settings,
    allow_stream: bool,
) -> PyResult<(api::Request, UploadError)> {
    static DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let mut parsed = reqwest_bench::parse_url(url).map_err(to_py_err)?;
    api::append_params(&mut parsed, &extract_params(args.params)?);
    let method = reqwest_bench::reqwest::Method::from_bytes(method.as_bytes())
        .map_err(|_| PyValueError::new_err(format!("invalid HTTP method {method:?}")))?;
    let mut pairs = extract_header_pairs(args.headers)?;
    let slot: UploadError = Arc::new(Mutex::new(None));
    let body_given = args.body.filter(|b| !b.is_none());
    let json_given = args.json.filter(|j| !j.is_none());
    let body = match (body_given, json_given) {
        (Some(_), Some(_)) => return Err(PyTypeError::new_err("pass either body or json, not both")),
        (None, Some(value)) => {
            let text = DUMPS.import(py, "json", "dumps")?.call1((value,))?;
            let text: String = text.extract()?;
            if !pairs.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type")) {
                pairs.push(("content-type".to_owned(), "application/json".to_owned()));
            }
            api::Body::Bytes(Bytes::from(text))
        }
        (Some(b), None) => {
            if b.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err("body must be bytes-like, not str (encode it first)"));
            }
            match buffer_bytes(b)? {
                Some(bytes) => api::Body::Bytes(bytes),
                None if allow_stream => upload_stream(py, b, slot.clone())?,
                None => {
                    return Err(PyTypeError::new_err(format!("body must be bytes-like, not {}", type_name(b))));
                }
            }
        }
        (None, None) => api::Body::Empty,
    };
    let headers = api::headers(&pairs).map_err(to_py_err)?;
    let request = api::Request {
        method,
        url: parsed,
        headers,
        body,
        timeout: seconds("timeout", args.timeout)?,
        follow_redirects: args.follow_redirects.unwrap_or(settings.follow_redirects),
        max_redirects: settings.max_redirects,
    };
    Ok((request, slot))
}

/// The error to raise: the upload source's own exception when it caused the failure.
pub(crate) fn request_error(e: ClientError, slot: &UploadError) -> PyErr {
    match slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
        Some(py_err) => py_err,
        None => to_py_err(e),
    }
}

// -- Headers ---------------------------------------------------------------------------------------

/// Response headers: a case-insensitive, multi-value mapping in received order (registered as a
/// `collections.abc.Mapping[str, str]`). `h[name]` joins a repeated name's values with ", ";
/// `get_all(name)` gives each value (two `Set-Cookie` fields stay two strings).
#[pyclass(module = "reqwest_client", name = "Headers", frozen, mapping)]
pub(crate) struct Headers {
    /// Lower-case names, in received order.
    pairs: Vec<(String, String)>,
}

impl Headers {
    pub(crate) fn new(pairs: Vec<(String, String)>) -> Self {
        Headers { pairs: pairs.into_iter().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect() }
    }

    fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for (k, _) in &self.pairs {
            if !names.contains(&k.as_str()) {
                names.push(k);
            }
        }
        names
    }

    fn joined(&self, name: &str) -> Option<String> {
        let name = name.to_ascii_lowercase();
        let values: Vec<&str> = self.pairs.iter().filter(|(k, _)| *k == name).map(|(_, v)| v.as_str()).collect();
        (!values.is_empty()).then(|| values.join(", "))
    }

    fn as_dict(&self) -> Vec<(String, String)> {
        self.names().into_iter().map(|n| (n.to_owned(), self.joined(n).unwrap_or_default())).collect()
    }
}

fn abc<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("collections.abc")?.getattr(name)
}

#[pymethods]
impl Headers {
    /// Headers from a mapping or a sequence of `(name, value)` pairs (names are lower-cased).
    #[new]
    #[pyo3(signature = (items = None))]
    fn py_new(items: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        Ok(Headers::new(extract_header_pairs(items)?))
    }

    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<String> {
        let name = key.extract::<String>().ok();
        name.as_deref().and_then(|k| self.joined(k)).ok_or_else(|| PyKeyError::new_err(key.clone().unbind()))
    }

    /// All values of `key` joined with ", ", or `default` when absent.
    #[pyo3(signature = (key, default = None))]
    fn get(&self, py: Python<'_>, key: &Bound<'_, PyAny>, default: Option<Py<PyAny>>) -> PyResult<Py<PyAny>> {
        match key.extract::<String>().ok().and_then(|k| self.joined(&k)) {
            Some(v) => v.into_py_any(py),
            None => Ok(default.unwrap_or_else(|| py.None())),
        }
    }

    /// Every value of `key`, in received order, never joined (an empty list when absent).
    fn get_all(&self, key: &str) -> Vec<String> {
        let name = key.to_ascii_lowercase();
        self.pairs.iter().filter(|(k, _)| *k == name).map(|(_, v)| v.clone()).collect()
    }

    /// Every field as `(lower-case name, value)`, in received order.
    fn multi_items(&self) -> Vec<(String, String)> {
        self.pairs.clone()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyList::new(py, self.names())?.try_iter().map(Bound::into_any)
    }

    fn __len__(&self) -> usize {
        self.names().len()
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> bool {
        key.extract::<String>().is_ok_and(|k| self.joined(&k).is_some())
    }

    fn keys<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        abc(slf.py(), "KeysView")?.call1((slf,))
    }

    fn values<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        abc(slf.py(), "ValuesView")?.call1((slf,))
    }

    fn items<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        abc(slf.py(), "ItemsView")?.call1((slf,))
    }

    /// Equal to a mapping with the same names (compared case-insensitively) and (joined) values.
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(h) = other.cast::<Headers>() {
            let mut a = self.as_dict();
            let mut b = h.get().as_dict();
            a.sort();
            b.sort();
            return (a == b).into_py_any(py);
        }
        if !other.is_instance(&abc(py, "Mapping")?)? {
            return Ok(py.NotImplemented());
        }
        let mut b = Vec::new();
        for item in other.call_method0("items")?.try_iter()? {
            let Ok((k, v)) = item?.extract::<(String, String)>() else { return false.into_py_any(py) };
            b.push((k.to_ascii_lowercase(), v));
        }
        let mut a = self.as_dict();
        a.sort();
        b.sort();
        (a == b).into_py_any(py)
    }

    fn __repr__(&self) -> String {
        let fields: Vec<String> = self.pairs.iter().map(|(k, v)| format!("({k:?}, {v:?})")).collect();
        format!("Headers([{}])", fields.join(", "))
    }
}

// -- Response --------------------------------------------------------------------------------------

/// The charset of a Content-Type (`text/plain; charset="latin-1"` → `latin-1`).
fn charset_of(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (k, v) = param.split_once('=')?;
        k.trim().eq_ignore_ascii_case("charset").then(|| v.trim().trim_matches('"').to_owned())
    })
}

/// `body` decoded with the Content-Type's charset (UTF-8 when none or unknown), errors replaced.
fn decode_text<'py>(py: Python<'py>, headers: &Headers, body: &Bound<'py, PyBytes>) -> PyResult<Bound<'py, PyAny>> {
    let charset = headers.joined("content-type").as_deref().and_then(charset_of);
    if let Some(cs) = charset {
        match body.call_method1("decode", (cs.as_str(), "replace")) {
            Ok(text) => return Ok(text),
            Err(e) if e.is_instance_of::<PyLookupError>(py) => {}
            Err(e) => return Err(e),
        }
    }
    body.call_method1("decode", ("utf-8", "replace"))
}

/// A complete HTTP response.
#[pyclass(module = "reqwest_client", name = "Response", frozen)]
pub(crate) struct Response {
    /// The status code.
    #[pyo3(get)]
    status: u16,
    /// The final URL (after redirects).
    #[pyo3(get)]
    url: String,
    /// The status line's reason phrase ("" when unknown).
    #[pyo3(get)]
    reason: String,
    header_pairs: Mutex<Option<Vec<(String, String)>>>,
    headers_obj: PyOnceLock<Py<Headers>>,
    body_bytes: Bytes,
    body_obj: PyOnceLock<Py<PyBytes>>,
}

impl Response {
    pub(crate) fn new(head: Head, body: Bytes) -> Self {
        Response {
            status: head.status,
            url: head.url,
            reason: head.reason,
            header_pairs: Mutex::new(Some(head.headers)),
            headers_obj: PyOnceLock::new(),
            body_bytes: body,
            body_obj: PyOnceLock::new(),
        }
    }
}

fn headers_once<'py>(
    py: Python<'py>,
    once: &PyOnceLock<Py<Headers>>,
    pairs: &Mutex<Option<Vec<(String, String)>>>,
) -> PyResult<Bound<'py, Headers>> {
    let h = once.get_or_try_init(py, || {
        let pairs = pairs.lock().unwrap_or_else(|p| p.into_inner()).take().unwrap_or_default();
        Py::new(py, Headers::new(pairs))
    })?;
    Ok(h.bind(py).clone())
}

#[pymethods]
impl Response {
    /// The headers (the same `Headers` object on every access).
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, Headers>> {
        headers_once(py, &self.headers_obj, &self.header_pairs)
    }

    /// The whole response body (decoded when the client decompresses).
    #[getter]
    fn body(&self, py: Python<'_>) -> Py<PyBytes> {
        self.body_obj.get_or_init(py, || PyBytes::new(py, &self.body_bytes).unbind()).clone_ref(py)
    }

    /// The body as text: the Content-Type's charset (UTF-8 when none or unknown), errors replaced.
    fn text<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let headers = self.headers(py)?;
        let body = self.body(py).into_bound(py);
        decode_text(py, headers.get(), &body)
    }

    /// `json.loads(body)` (its `json.JSONDecodeError` propagates).
    fn json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        LOADS.import(py, "json", "loads")?.call1((self.body(py),))
    }

    fn __repr__(&self) -> String {
        format!("<Response [{}]>", self.status)
    }
}

// -- StreamResponse (sync) -------------------------------------------------------------------------

/// A response whose body is read as it arrives (`Client.stream(...)`): a context manager; leaving it
/// closes the response (its connection is reused only when the body was read to the end).
#[pyclass(module = "reqwest_client", name = "StreamResponse", frozen)]
pub(crate) struct StreamResponse {
    #[pyo3(get)]
    status: u16,
    #[pyo3(get)]
    url: String,
    #[pyo3(get)]
    reason: String,
    header_pairs: Mutex<Option<Vec<(String, String)>>>,
    headers_obj: PyOnceLock<Py<Headers>>,
    client: Arc<BlockingClient>,
    /// The body still to read: `None` once read to the end or closed; taken out while a chunk is awaited.
    body: Mutex<BodyState>,
}

pub(crate) enum BodyState {
    Open(reqwest_bench::reqwest::Response),
    Busy,
    Done,
}

impl StreamResponse {
    pub(crate) fn new(head: Head, resp: reqwest_bench::reqwest::Response, client: Arc<BlockingClient>) -> Self {
        StreamResponse {
            status: head.status,
            url: head.url,
            reason: head.reason,
            header_pairs: Mutex::new(Some(head.headers)),
            headers_obj: PyOnceLock::new(),
            client,
            body: Mutex::new(BodyState::Open(resp)),
        }
    }

    /// The next chunk (`None` at the end), waiting with the GIL released (signals checked every 50 ms).
    fn next_chunk(&self, py: Python<'_>) -> PyResult<Option<Bytes>> {
        let mut resp = {
            let mut state = self.body.lock().unwrap_or_else(|p| p.into_inner());
            match std::mem::replace(&mut *state, BodyState::Busy) {
                BodyState::Open(r) => r,
                BodyState::Busy => {
                    return Err(PyRuntimeError::new_err("the stream is being read by another thread"));
                }
                BodyState::Done => {
                    *state = BodyState::Done;
                    return Ok(None);
                }
            }
        };
        let client = self.client.clone();
        let (out, signal, resp) = py.detach(move || {
            let mut signal = None;
            let out = client.run(
                async {
                    match resp.chunk().await {
                        Ok(c) => Ok(c),
                        Err(e) => Err(reqwest_bench::classify(&e)),
                    }
                },
                || crate::signal_check_detached(&mut signal),
            );
            (out, signal, resp)
        });
        let mut state = self.body.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = signal {
            *state = BodyState::Done;
            return Err(e);
        }
        match out {
            Ok(Some(chunk)) => {
                // closed by another thread meanwhile: stay closed
                if matches!(*state, BodyState::Busy) {
                    *state = BodyState::Open(resp);
                }
                Ok(Some(chunk))
            }
            Ok(None) => {
                *state = BodyState::Done;
                Ok(None)
            }
            Err(e) => {
                *state = BodyState::Done;
                Err(to_py_err(e))
            }
        }
    }
}

#[pymethods]
impl StreamResponse {
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, Headers>> {
        headers_once(py, &self.headers_obj, &self.header_pairs)
    }

    /// The body's chunks as they arrive (decoded when the client decompresses).
    fn iter_bytes(slf: Py<Self>) -> ByteIterator {
        ByteIterator { stream: slf }
    }

    /// The rest of the body.
    fn read<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let mut out = Vec::new();
        while let Some(chunk) = self.next_chunk(py)? {
            out.extend_from_slice(&chunk);
        }
        Ok(PyBytes::new(py, &out))
    }

    /// Stop reading: the rest of the body is dropped with its connection. Idempotent.
    fn close(&self, py: Python<'_>) {
        let old = std::mem::replace(&mut *self.body.lock().unwrap_or_else(|p| p.into_inner()), BodyState::Done);
        py.detach(move || drop(old));
    }

    #[getter]
    fn closed(&self) -> bool {
        matches!(*self.body.lock().unwrap_or_else(|p| p.into_inner()), BodyState::Done)
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
        format!("<StreamResponse [{}]>", self.status)
    }
}

/// `StreamResponse.iter_bytes()`.
#[pyclass(module = "reqwest_client._core", name = "_BytesIterator", frozen)]
pub(crate) struct ByteIterator {
    stream: Py<StreamResponse>,
}

#[pymethods]
impl ByteIterator {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        Ok(self.stream.get().next_chunk(py)?.map(|c| PyBytes::new(py, &c)))
    }
}

#[cfg(test)]
mod unit {
    use super::charset_of;

    #[test]
    fn charset_param() {
        assert_eq!(charset_of("text/plain; charset=latin-1").as_deref(), Some("latin-1"));
        assert_eq!(charset_of("text/plain;CHARSET=\"utf-8\" ; x=y").as_deref(), Some("utf-8"));
        assert_eq!(charset_of("application/json"), None);
    }
}
