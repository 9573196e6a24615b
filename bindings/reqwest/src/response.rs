//! The response types every client returns (docs/binding-api.md): `Headers`, a case-insensitive
//! multi-value mapping, and `Response`, a complete response (its Python objects made at first access).

use std::sync::Mutex;

use bytes::Bytes;
use pyo3::exceptions::{PyKeyError, PyLookupError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList};
use pyo3::IntoPyObjectExt;
use reqwest_bench::api::Head;
use reqwest_bench::Phases;

use crate::request::extract_header_pairs;

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
    /// The HTTP version of the response: `"HTTP/1.1"`, `"HTTP/2"`, `"HTTP/3"` (of the last hop after redirects).
    #[pyo3(get)]
    http_version: &'static str,
    header_pairs: Mutex<Option<Vec<(String, String)>>>,
    headers_obj: PyOnceLock<Py<Headers>>,
    body_bytes: Bytes,
    body_obj: PyOnceLock<Py<PyBytes>>,
    phases: Phases,
}

/// `{phase key: ns}` of `phases`, in the contract's order (`fetch_phases`).
pub(crate) fn phases_ns<'py>(py: Python<'py>, phases: &Phases) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, ns) in phases.entries() {
        dict.set_item(key, ns)?;
    }
    Ok(dict)
}

impl Response {
    pub(crate) fn new(head: Head, body: Bytes, phases: Phases) -> Self {
        Response {
            phases,
            status: head.status,
            url: head.url,
            reason: head.reason,
            http_version: head.http_version,
            header_pairs: Mutex::new(Some(head.headers)),
            headers_obj: PyOnceLock::new(),
            body_bytes: body,
            body_obj: PyOnceLock::new(),
        }
    }
}

pub(crate) fn headers_once<'py>(
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

    /// The phases of the exchange that made this response, in seconds, by key in the contract's order:
    /// `connect+tls` (TCP connect and TLS handshake of a connection the request opened: 0 on a reused one;
    /// `dns+connect+tls` when the host is a name, whose resolution is in it), `send+wait` (the request handed to
    /// reqwest until the response head, without that connection), `receive` (the head to the body's end); over
    /// HTTP/3 `connect+tls+send+wait` (the QUIC handshake is inside the exchange) and `receive`. After redirects,
    /// every hop's connections and exchanges are summed, and `receive` is the final body's.
    #[getter]
    fn phases<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (key, ns) in self.phases.entries() {
            dict.set_item(key, ns as f64 / 1e9)?;
        }
        Ok(dict)
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
