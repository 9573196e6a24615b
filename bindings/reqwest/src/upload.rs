//! `RawUpload`: an `AsyncClient` request's body streamed from an iterable, an async iterable or a binary file.
//! The request's tokio task never calls Python: the Python side (bindings/common/_aio.py) iterates the source on
//! the event loop's thread and hands each chunk to `send`, which queues it for the request's body. At most
//! `QUEUED` chunks wait there; when it is full, `send` returns an asyncio future that resolves once `ROOM` chunks
//! have been taken: one hand-off back to the loop per `ROOM` chunks, not per chunk (an 8 MiB body in 64 KiB
//! chunks, W=1: 462 syscalls per request with one chunk queued, a wake-up of the loop and of the worker per
//! chunk), and hyper, finding several chunks ready, writes them with one `writev`. `finish` ends the body;
//! `fail` aborts the request (the Python side then raises the source's own exception).

use std::sync::Mutex;

use bytes::Bytes;
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use reqwest_bench::api;
use tokio::sync::mpsc;

use crate::aio::{spawn, Completer, Outcome};
use crate::request::buffer_bytes;

type Chunk = Result<Bytes, std::io::Error>;

/// The chunks that may wait for the request, and how many must have been taken before a full queue's `send`
/// resolves.
const QUEUED: usize = 4;
const ROOM: usize = 2;

/// Internal: the body of an `AsyncClient` request, fed from the event loop's thread (use
/// `reqwest_client.AsyncClient`).
#[pyclass(module = "reqwest_client._core", name = "RawUpload", frozen)]
pub(crate) struct RawUpload {
    /// `None` once finished or failed.
    tx: Mutex<Option<mpsc::Sender<Chunk>>>,
    /// Taken by the request that sends the body.
    rx: Mutex<Option<mpsc::Receiver<Chunk>>>,
}

impl RawUpload {
    /// The request's body (once: a second request with the same upload is a TypeError).
    pub(crate) fn take_body(&self) -> PyResult<api::Body> {
        match self.rx.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(rx) => Ok(api::Body::from_channel(rx)),
            None => Err(PyTypeError::new_err("this upload is already the body of another request")),
        }
    }

    fn sender(&self) -> Option<mpsc::Sender<Chunk>> {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

#[pymethods]
impl RawUpload {
    #[new]
    fn new() -> Self {
        let (tx, rx) = mpsc::channel(QUEUED);
        RawUpload { tx: Mutex::new(Some(tx)), rx: Mutex::new(Some(rx)) }
    }

    /// Queue `chunk` (bytes-like) for the body: `True` when queued now, `False` when the request no longer
    /// reads its body (it ended, failed or was closed), or, when `QUEUED` chunks wait, an asyncio future of one
    /// of those once `ROOM` of them have been taken. An empty chunk is skipped (`True`).
    fn send<'py>(
        &self,
        py: Python<'py>,
        chunk: &Bound<'py, PyAny>,
        completer: &Bound<'py, Completer>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let bytes = if chunk.is_instance_of::<PyString>() { None } else { buffer_bytes(chunk)? };
        let Some(bytes) = bytes else {
            let name = chunk.get_type().name().map(|n| n.to_string()).unwrap_or_default();
            return Err(PyTypeError::new_err(format!("body chunks must be bytes-like, not {name}")));
        };
        let Some(tx) = self.sender() else {
            return Err(PyRuntimeError::new_err("the upload is finished"));
        };
        if bytes.is_empty() {
            // an empty chunk would end a chunked body
            return Ok(pyo3::types::PyBool::new(py, true).to_owned().into_any());
        }
        let chunk = match tx.try_send(Ok(bytes)) {
            Ok(()) => return Ok(pyo3::types::PyBool::new(py, true).to_owned().into_any()),
            Err(mpsc::error::TrySendError::Closed(_)) => {
                return Ok(pyo3::types::PyBool::new(py, false).to_owned().into_any())
            }
            Err(mpsc::error::TrySendError::Full(chunk)) => chunk,
        };
        spawn(completer, async move {
            let sent = match tx.reserve_many(ROOM).await {
                Ok(mut permits) => permits.next().map(|permit| permit.send(chunk)).is_some(),
                Err(_) => false, // the request no longer reads its body
            };
            Ok(Outcome::Sent(sent))
        })
    }

    /// End the body (idempotent).
    fn finish(&self) {
        drop(self.tx.lock().unwrap_or_else(|e| e.into_inner()).take());
    }

    /// Abort the request: its body fails with `message` (the source raised). Idempotent; nothing after
    /// `finish`.
    fn fail(&self, message: &str) {
        if let Some(tx) = self.tx.lock().unwrap_or_else(|e| e.into_inner()).take() {
            // a chunk still waits: the error goes after it (closed: the request has ended anyway)
            let error = std::io::Error::other(format!("the body's source raised: {message}"));
            if let Err(mpsc::error::TrySendError::Full(error)) = tx.try_send(Err(error)) {
                drop(crate::aio::runtime().map(|rt| rt.spawn(async move { tx.send(error).await })));
            }
        }
    }
}
