//! `StreamResponse`: the synchronous client's response whose body is read as it arrives, each chunk
//! awaited with the GIL released (the asyncio client's counterpart is `RawStream`, in aio.rs).

use std::sync::Mutex;

use bytes::Bytes;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyTuple};
use reqwest_bench::api::Head;

use crate::client::{signal_check_detached, Shared};
use crate::errors::to_py_err;
use crate::fork;
use crate::request::next_chunk;
use crate::response::{headers_once, Headers};

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
    #[pyo3(get)]
    http_version: &'static str,
    header_pairs: Mutex<Option<Vec<(String, String)>>>,
    headers_obj: PyOnceLock<Py<Headers>>,
    client: Shared,
    /// The body still to read: `None` once read to the end or closed; taken out while a chunk is awaited.
    body: Mutex<BodyState>,
}

pub(crate) enum BodyState {
    Open(reqwest_bench::reqwest::Response),
    Busy,
    Done,
}

impl StreamResponse {
    pub(crate) fn new(head: Head, resp: reqwest_bench::reqwest::Response, client: Shared) -> Self {
        StreamResponse {
            status: head.status,
            url: head.url,
            reason: head.reason,
            http_version: head.http_version,
            header_pairs: Mutex::new(Some(head.headers)),
            headers_obj: PyOnceLock::new(),
            client,
            body: Mutex::new(BodyState::Open(resp)),
        }
    }

    /// The next chunk (`None` at the end), waiting with the GIL released (signals checked every 50 ms).
    fn next_chunk(&self, py: Python<'_>) -> PyResult<Option<Bytes>> {
        if !self.client.is_current() {
            return Err(fork::inherited_stream());
        }
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
            let out = client.run(next_chunk(&mut resp), || signal_check_detached(&mut signal));
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

impl Drop for StreamResponse {
    fn drop(&mut self) {
        if !self.client.is_current() {
            let body = self.body.get_mut().unwrap_or_else(|p| p.into_inner());
            std::mem::forget(std::mem::replace(body, BodyState::Done));
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
        if self.client.is_current() {
            py.detach(move || drop(old));
        } else {
            std::mem::forget(old); // the parent's connection: left alone (fork.rs)
        }
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
