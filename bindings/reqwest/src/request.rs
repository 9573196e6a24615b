//! The path of `request(...)` / `stream(...)`, shared by both clients. Their arguments (docs/binding-api.md)
//! → a [`reqwest_bench::api::Request`] ([`prepare`]): `params`, `headers`, a `body` (bytes-like, or streamed
//! from an iterable or a binary file) or `json`, the per-request `timeout` and `follow_redirects`; everything
//! is checked, with the GIL, before any I/O. Then the exchange: [`read_whole`] (`request`), [`open_streamed`]
//! and [`next_chunk`] (`stream`), futures that `Client` runs on its runtime, blocking (client.rs, stream.rs),
//! and `RawAsyncClient` spawns (aio.rs); both make a `Response` of `read_whole`'s result.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use pyo3::exceptions::{PyStopIteration, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use reqwest_bench::api::{self, Head};
use reqwest_bench::{reqwest, ClientError, Phases};

use crate::config::{seconds, Settings};
use crate::errors::to_py_err;
use crate::upload::RawUpload;

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

/// The body of the benchmark path (`fetch`): `None`, or a bytes-like object (see [`buffer_bytes`]); a
/// `str` or anything else is a TypeError (it never iterates or reads a file).
pub(crate) fn lean_body(body: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Bytes>> {
    let Some(body) = body else { return Ok(None) };
    if body.is_none() {
        return Ok(None);
    }
    let bytes = if body.is_instance_of::<PyString>() { None } else { buffer_bytes(body)? };
    match bytes {
        Some(b) => Ok(Some(b)),
        None => Err(PyTypeError::new_err(format!("body must be bytes-like or None, not {}", type_name(body)))),
    }
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
/// file body is streamed, read on the runtime's thread (sync client); otherwise a streamed body is a
/// `RawUpload` (upload.rs), which the async wrapper feeds from the loop's thread. The returned slot receives a
/// streamed body's Python exception (sync client).
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
                None => match b.cast::<RawUpload>() {
                    Ok(upload) => upload.get().take_body()?,
                    Err(_) => {
                        return Err(PyTypeError::new_err(format!(
                            "body must be bytes-like or a RawUpload, not {}",
                            type_name(b)
                        )));
                    }
                },
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

/// `request(...)`'s exchange: the final response's head and its (decoded) body, read whole within the
/// client's `max_body_size`.
pub(crate) async fn read_whole(
    client: &reqwest_bench::Client,
    req: api::Request,
) -> Result<(Head, Bytes, Phases), ClientError> {
    // the phases of every request(): `Response.phases` (a few clock reads; the benchmark's get/fetch_len do not)
    let (result, phases) = reqwest_bench::phases::record(async {
        let resp = client.open(req).await?;
        let head = Head::of(&resp);
        let body = api::read_body(resp, client.options().max_body_size).await?;
        Ok::<_, ClientError>((head, body))
    })
    .await;
    result.map(|(head, body)| (head, body, phases))
}

/// `stream(...)`'s: the final response's head, its body still to read ([`next_chunk`]).
pub(crate) async fn open_streamed(
    client: &reqwest_bench::Client,
    req: api::Request,
) -> Result<(Head, reqwest::Response), ClientError> {
    let resp = client.open(req).await?;
    Ok((Head::of(&resp), resp))
}

/// The next chunk of a streamed body (decoded when the client decompresses), `None` at its end.
pub(crate) async fn next_chunk(resp: &mut reqwest::Response) -> Result<Option<Bytes>, ClientError> {
    resp.chunk().await.map_err(|e| reqwest_bench::classify(&e))
}
