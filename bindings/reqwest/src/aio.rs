//! The asyncio side: requests run as tasks on one shared multi-thread tokio runtime; their results go
//! back to the event loop *without any tokio thread touching Python*.
//!
//! Each event loop gets one [`Completer`] (python/reqwest_client/__init__.py keeps them, one per loop):
//! a queue of finished results plus a non-blocking pipe whose read end is registered with
//! `loop.add_reader(completer.fileno(), completer.drain)`. A finished task pushes `(id, outcome)` and
//! writes one byte if the queue was empty; `drain` runs on the loop's thread, with the GIL, and resolves
//! the asyncio futures.
//!
//! Why not pyo3-async-runtimes' `future_into_py`: it resolves futures from a tokio thread through
//! `loop.call_soon_threadsafe`, which releases and re-takes the GIL inside `socket.send`; when the
//! interpreter starts finalizing in between (a script that exits right after its last `await`),
//! CPython < 3.14 calls `pthread_exit` in that thread and the forced unwind through Rust frames aborts
//! the whole process (SIGABRT). It also costs a `spawn_blocking` hop and a thread-state creation per
//! request.
//!
//! In a child made by `fork()` the runtime (whose worker thread the child does not have) and every client's
//! pool are made anew at their first use there; the parent's are leaked, untouched (fork.rs).

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use pyo3::exceptions::PyRuntimeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyWeakrefReference};
use pyo3::IntoPyObjectExt;
use reqwest_bench::api::Head;
use reqwest_bench::{ClientError, ClientOptions};

use crate::config::{client_pymethods, tls_info_dict, ClientClass, Config};
use crate::errors::to_py_err;
use crate::fork::{self, ForkLocal};
use crate::request::{lean_body, next_chunk, open_streamed, prepare, read_whole, RequestArgs};
use crate::response::{phases_ns, Headers, Response};

/// The runtime of one process (fork generation).
struct ProcessRuntime {
    generation: u64,
    runtime: tokio::runtime::Runtime,
}

/// The shared tokio runtime of every `RawAsyncClient` in this process: built on first use, never shut down;
/// a forked child builds its own (one atomic load tells).
pub(crate) fn runtime() -> PyResult<&'static tokio::runtime::Runtime> {
    static CURRENT: AtomicPtr<ProcessRuntime> = AtomicPtr::new(std::ptr::null_mut());
    // SAFETY: a non-null pointer is a leaked Box, never freed.
    if let Some(rt) = unsafe { CURRENT.load(Ordering::Acquire).as_ref() } {
        if rt.generation == fork::generation() {
            return Ok(&rt.runtime);
        }
    }
    start_runtime(&CURRENT)
}

#[cold]
fn start_runtime(current: &AtomicPtr<ProcessRuntime>) -> PyResult<&'static tokio::runtime::Runtime> {
    static STARTING: Mutex<()> = Mutex::new(());
    let _one_at_a_time = STARTING.lock().unwrap_or_else(|e| e.into_inner());
    let generation = fork::generation();
    // SAFETY: as in runtime()
    if let Some(rt) = unsafe { current.load(Ordering::Acquire).as_ref() } {
        if rt.generation == generation {
            return Ok(&rt.runtime);
        }
    }
    // One I/O worker: requests are driven from one asyncio thread, and more workers only compete with it
    // (and with the server) for the cores; on 2 cores the default (one per core) makes the async row's
    // Bench bimodal from run to run (21 or 35 ms).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .thread_name("reqwest-client")
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the tokio runtime: {e}")))?;
    // A timer that always fires within TIMER_FLOOR: the worker then parks, between requests, with a deadline no
    // later than that, and a request's timeout (a timer of tokio's, registered when the request starts on the
    // worker) falls after it. A timer earlier than the parked worker's deadline makes tokio wake the driver
    // (an eventfd write, and an epoll_wait that returns at once): without this, every request whose timeout is
    // shorter than the pool's idle timer (90 s) paid those two syscalls.
    runtime.spawn(async {
        loop {
            tokio::time::sleep(TIMER_FLOOR).await;
        }
    });
    // the parent's runtime, if any, stays leaked: dropping it in a child would touch the parent's sockets
    let rt: &'static ProcessRuntime = Box::leak(Box::new(ProcessRuntime { generation, runtime }));
    current.store(std::ptr::from_ref(rt).cast_mut(), Ordering::Release);
    Ok(&rt.runtime)
}

/// The runtime's worker wakes at least this often (see [`start_runtime`]): a request whose timeout is at least
/// this long starts without waking the driver.
const TIMER_FLOOR: std::time::Duration = std::time::Duration::from_secs(1);

/// A finished request, still without any Python object in it.
pub(crate) enum Outcome {
    Status(u16),
    Len(u16, u64),
    Phases(u16, u64, reqwest_bench::Phases),
    Body(u16, bytes::Bytes),
    Response(Head, bytes::Bytes, reqwest_bench::Phases),
    Stream(Head, reqwest_bench::reqwest::Response),
    Chunk(Option<bytes::Bytes>),
    /// A `RawUpload` chunk queued (`true`), or the request no longer reads its body.
    Sent(bool),
}

struct Shared {
    queue: Mutex<Vec<(u64, Result<Outcome, ClientError>)>>,
    read_end: OwnedFd,
    write_end: OwnedFd,
}

impl Shared {
    /// Called on tokio threads: queue the result and wake the loop (once per batch).
    fn push(&self, id: u64, outcome: Result<Outcome, ClientError>) {
        let was_empty = {
            let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            q.push((id, outcome));
            q.len() == 1
        };
        if was_empty {
            let byte = [1u8];
            // SAFETY: writes one byte from a valid buffer to our own non-blocking pipe. EAGAIN (pipe
            // full) means a wake-up is pending anyway; nothing else can usefully be done on error.
            unsafe {
                libc::write(self.write_end.as_raw_fd(), byte.as_ptr().cast(), 1);
            }
        }
    }
}

fn set_nonblocking_cloexec(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl on a file descriptor we own.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl < 0 || libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let fd_flags = libc::fcntl(fd, libc::F_GETFD);
        if fd_flags < 0 || libc::fcntl(fd, libc::F_SETFD, fd_flags | libc::FD_CLOEXEC) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A request's future and, once spawned, its task (what `Completer.abandon` aborts).
type Pending = (Py<PyAny>, Option<tokio::task::AbortHandle>);

/// Resolves the asyncio futures of one event loop (see the module docs). Internal.
#[pyclass(module = "reqwest_client._core", name = "Completer", frozen)]
pub(crate) struct Completer {
    shared: Arc<Shared>,
    pending: Mutex<HashMap<u64, Pending>>,
    next_id: AtomicU64,
    /// Its loop, once known ([`Completer::event_loop`]).
    event_loop: PyOnceLock<Py<PyWeakrefReference>>,
}

impl Completer {
    /// A new asyncio future on the running loop, registered under a fresh id.
    fn register<'py>(slf: &Bound<'py, Self>) -> PyResult<(u64, Bound<'py, PyAny>)> {
        let me = slf.get();
        let fut = me.event_loop(slf.py())?.call_method0(intern!(slf.py(), "create_future"))?;
        let id = me.next_id.fetch_add(1, Ordering::Relaxed);
        me.pending.lock().unwrap_or_else(|e| e.into_inner()).insert(id, (fut.clone().unbind(), None));
        Ok((id, fut))
    }

    /// The completer's event loop: the running one at its first request, kept (weakly) after that, as a
    /// completer serves one loop (the Python side keeps one per loop). `asyncio.get_running_loop()` costs a
    /// `getpid()` on CPython < 3.12, the caller's lookup of the completer already paid one.
    fn event_loop<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        if let Some(event_loop) = self.event_loop.get(py).and_then(|weak| weak.bind(py).upgrade()) {
            return Ok(event_loop);
        }
        let event_loop = GET_RUNNING_LOOP.import(py, "asyncio", "get_running_loop")?.call0()?;
        let _ = self.event_loop.set(py, PyWeakrefReference::new(&event_loop)?.unbind());
        Ok(event_loop)
    }

    fn forget(&self, id: u64) -> Option<Py<PyAny>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).remove(&id).map(|(fut, _)| fut)
    }
}

#[pymethods]
impl Completer {
    #[new]
    fn new() -> PyResult<Self> {
        let mut fds = [0 as RawFd; 2];
        // SAFETY: pipe() fills the two-element array on success.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        // SAFETY: both descriptors were just created and are owned by nobody else.
        let (read_end, write_end) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        set_nonblocking_cloexec(read_end.as_raw_fd())?;
        set_nonblocking_cloexec(write_end.as_raw_fd())?;
        Ok(Completer {
            shared: Arc::new(Shared { queue: Mutex::new(Vec::new()), read_end, write_end }),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            event_loop: PyOnceLock::new(),
        })
    }

    /// The descriptor to register with `loop.add_reader`.
    fn fileno(&self) -> RawFd {
        self.shared.read_end.as_raw_fd()
    }

    /// Resolve every finished request's future (the `add_reader` callback; runs on the loop's thread).
    fn drain(&self, py: Python<'_>) -> PyResult<()> {
        // Empty the pipe *before* taking the queue: a push after the take then wakes us again. A read that
        // does not fill the buffer emptied it (no second read to see EAGAIN).
        let mut buf = [0u8; 256];
        // SAFETY: reads into a valid buffer from our own non-blocking pipe until it is empty.
        while unsafe { libc::read(self.shared.read_end.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) }
            == buf.len() as isize
        {}
        let done = std::mem::take(&mut *self.shared.queue.lock().unwrap_or_else(|e| e.into_inner()));
        for (id, outcome) in done {
            let Some(fut) = self.forget(id) else { continue }; // cancelled meanwhile
            let fut = fut.bind(py);
            if fut.call_method0(intern!(py, "done"))?.is_truthy()? {
                continue;
            }
            let value: PyResult<Bound<'_, PyAny>> = match outcome {
                Ok(Outcome::Status(s)) => s.into_bound_py_any(py),
                Ok(Outcome::Len(s, n)) => (s, n).into_bound_py_any(py),
                Ok(Outcome::Phases(s, n, p)) => phases_ns(py, &p).and_then(|d| (s, n, d).into_bound_py_any(py)),
                Ok(Outcome::Body(s, b)) => (s, PyBytes::new(py, &b)).into_bound_py_any(py),
                Ok(Outcome::Response(head, body, phases)) => {
                    Bound::new(py, Response::new(head, body, phases)).map(Bound::into_any)
                }
                Ok(Outcome::Stream(head, resp)) => Bound::new(py, RawStream::new(head, resp)).map(Bound::into_any),
                Ok(Outcome::Chunk(Some(c))) => Ok(PyBytes::new(py, &c).into_any()),
                Ok(Outcome::Chunk(None)) => Ok(py.None().into_bound(py)),
                Ok(Outcome::Sent(queued)) => queued.into_bound_py_any(py),
                Err(e) => Err(to_py_err(e)),
            };
            match value {
                Ok(v) => fut.call_method1(intern!(py, "set_result"), (v,))?,
                Err(e) => fut.call_method1(intern!(py, "set_exception"), (e.into_value(py),))?,
            };
        }
        Ok(())
    }

    /// The task awaiting `future` (one of this completer's) was cancelled: its request's task is aborted (its
    /// connection closed). False when the request had already ended.
    fn abandon(&self, future: &Bound<'_, PyAny>) -> bool {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let Some(id) = pending.iter().find(|(_, (fut, _))| fut.as_ptr() == future.as_ptr()).map(|(id, _)| *id) else {
            return false;
        };
        if let Some((_, Some(abort))) = pending.remove(&id) {
            abort.abort();
        }
        true
    }

    fn __repr__(&self) -> String {
        let n = self.pending.lock().unwrap_or_else(|e| e.into_inner()).len();
        format!("<reqwest_client._core.Completer fd={} pending={n}>", self.fileno())
    }
}

/// Spawn `work` on the runtime; its outcome resolves the returned asyncio future. A task that stops awaiting the
/// future (cancelled) calls `Completer.abandon(future)`, which aborts `work` (python/reqwest_client/_aio.py): a done
/// callback on every future would cost each request a callback the loop schedules and runs.
pub(crate) fn spawn<'py, F>(completer: &Bound<'py, Completer>, work: F) -> PyResult<Bound<'py, PyAny>>
where
    F: std::future::Future<Output = Result<Outcome, ClientError>> + Send + 'static,
{
    let rt = runtime()?;
    let (id, fut) = Completer::register(completer)?;
    let shared = completer.get().shared.clone();
    let handle = rt.spawn(async move { shared.push(id, work.await) });
    // the loop's thread (with the GIL) drains results, so the entry is still there
    if let Some(entry) = completer.get().pending.lock().unwrap_or_else(|e| e.into_inner()).get_mut(&id) {
        entry.1 = Some(handle.abort_handle());
    }
    Ok(fut)
}

/// asyncio HTTP/1.1 (and HTTP/2) client with a keep-alive connection pool. Each method returns an asyncio future
/// of the running loop, resolved through `completer` (use `reqwest_client.AsyncClient`).
#[pyclass(module = "reqwest_client._core", name = "RawAsyncClient", frozen)]
pub(crate) struct RawAsyncClient {
    inner: RwLock<Option<ForkLocal<reqwest_bench::Client>>>,
    config: Config,
    /// What the client is built from (again in a forked child).
    options: ClientOptions,
    /// The current client's (a forked child's client starts without).
    tls_seen: RwLock<reqwest_bench::TlsSeen>,
}

fn build_client(options: &ClientOptions) -> PyResult<reqwest_bench::Client> {
    let rt = runtime()?;
    let _guard = rt.enter();
    reqwest_bench::Client::with_options(options).map_err(to_py_err)
}

impl RawAsyncClient {
    fn handle(&self) -> PyResult<reqwest_bench::Client> {
        {
            let guard = self.inner.read().unwrap_or_else(|e| e.into_inner());
            match &*guard {
                Some(c) if c.is_current() => return Ok((**c).clone()),
                Some(_) => {}
                None => return Err(PyRuntimeError::new_err("AsyncClient is closed")),
            }
        }
        self.renew()
    }

    /// In a forked child: a new client (on the child's runtime) in place of the parent's, which is leaked.
    #[cold]
    fn renew(&self) -> PyResult<reqwest_bench::Client> {
        let mut guard = self.inner.write().unwrap_or_else(|e| e.into_inner());
        match &*guard {
            Some(c) if c.is_current() => return Ok((**c).clone()),
            Some(_) => {}
            None => return Err(PyRuntimeError::new_err("AsyncClient is closed")),
        }
        let fresh = build_client(&self.options)?;
        *self.tls_seen.write().unwrap_or_else(|e| e.into_inner()) = fresh.tls_seen().unwrap_or_default();
        *guard = Some(ForkLocal::new(fresh.clone()));
        Ok(fresh)
    }
}

impl ClientClass for RawAsyncClient {
    fn build(py: Python<'_>, options: ClientOptions, config: Config) -> PyResult<Self> {
        let client = py.detach(|| build_client(&options))?;
        Ok(RawAsyncClient {
            tls_seen: RwLock::new(client.tls_seen().unwrap_or_default()),
            inner: RwLock::new(Some(ForkLocal::new(client))),
            config,
            options,
        })
    }

    fn config(&self) -> &Config {
        &self.config
    }
}

client_pymethods! {
    impl RawAsyncClient {
        /// Future of the status: GET, read the whole body.
        fn get<'py>(&self, url: String, completer: &Bound<'py, Completer>) -> PyResult<Bound<'py, PyAny>> {
            let client = self.handle()?;
            spawn(completer, async move { client.get(&url).await.map(|(s, _)| Outcome::Status(s)) })
        }

        /// Future of `(status, body bytes)`.
        fn fetch_len<'py>(&self, url: String, completer: &Bound<'py, Completer>) -> PyResult<Bound<'py, PyAny>> {
            let client = self.handle()?;
            spawn(completer, async move { client.get(&url).await.map(|(s, n)| Outcome::Len(s, n)) })
        }

        /// Future of `(status, body bytes, {phase key: ns})` (see `Client.fetch_phases`).
        fn fetch_phases<'py>(&self, url: String, completer: &Bound<'py, Completer>) -> PyResult<Bound<'py, PyAny>> {
            let client = self.handle()?;
            spawn(completer, async move { client.get_phases(&url).await.map(|(s, n, p)| Outcome::Phases(s, n, p)) })
        }

        /// Future of `(status, body)`: `method` with `body` (bytes-like) if any, the whole body read (see
        /// `Client.fetch`).
        #[pyo3(signature = (url, completer, *, method = "GET", body = None))]
        fn fetch<'py>(
            &self,
            url: String,
            completer: &Bound<'py, Completer>,
            method: &str,
            body: Option<&Bound<'py, PyAny>>,
        ) -> PyResult<Bound<'py, PyAny>> {
            let body = lean_body(body)?;
            let method = method.to_owned();
            let client = self.handle()?;
            spawn(completer, async move {
                let resp = client.fetch(&method, &url, &[], body).await?;
                Ok(Outcome::Body(resp.status, resp.body))
            })
        }

        /// Future of a `Response` (see `Client.request`; a streamed body is a `RawUpload`, which the Python
        /// wrapper feeds from the iterable or file).
        #[pyo3(signature = (method, url, completer, *, params = None, headers = None, body = None, json = None,
                            timeout = None, follow_redirects = None))]
        #[allow(clippy::too_many_arguments)]
        fn request<'py>(
            &self,
            py: Python<'py>,
            method: &str,
            url: &str,
            completer: &Bound<'py, Completer>,
            params: Option<&Bound<'py, PyAny>>,
            headers: Option<&Bound<'py, PyAny>>,
            body: Option<&Bound<'py, PyAny>>,
            json: Option<&Bound<'py, PyAny>>,
            timeout: Option<f64>,
            follow_redirects: Option<bool>,
        ) -> PyResult<Bound<'py, PyAny>> {
            let args = RequestArgs { params, headers, body, json, timeout, follow_redirects };
            let (req, _) = prepare(py, method, url, &args, self.config.settings, false)?;
            let client = self.handle()?;
            spawn(completer, async move {
                let (head, body, phases) = read_whole(&client, req).await?;
                Ok(Outcome::Response(head, body, phases))
            })
        }

        /// Future of a `RawStream`: the response with its body not read yet.
        #[pyo3(signature = (method, url, completer, *, params = None, headers = None, body = None, json = None,
                            timeout = None, follow_redirects = None))]
        #[allow(clippy::too_many_arguments)]
        fn stream<'py>(
            &self,
            py: Python<'py>,
            method: &str,
            url: &str,
            completer: &Bound<'py, Completer>,
            params: Option<&Bound<'py, PyAny>>,
            headers: Option<&Bound<'py, PyAny>>,
            body: Option<&Bound<'py, PyAny>>,
            json: Option<&Bound<'py, PyAny>>,
            timeout: Option<f64>,
            follow_redirects: Option<bool>,
        ) -> PyResult<Bound<'py, PyAny>> {
            let args = RequestArgs { params, headers, body, json, timeout, follow_redirects };
            let (req, _) = prepare(py, method, url, &args, self.config.settings, false)?;
            let client = self.handle()?;
            spawn(completer, async move {
                let (head, resp) = open_streamed(&client, req).await?;
                Ok(Outcome::Stream(head, resp))
            })
        }

        /// `{"version": "TLSv1.3", "cipher": None}` of the connection of the most recent response; `None`
        /// before the first one and for plain `http://`.
        #[getter]
        fn tls_info<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
            let seen = self.tls_seen.read().unwrap_or_else(|e| e.into_inner()).clone();
            tls_info_dict(py, &seen)
        }

        #[getter]
        fn closed(&self) -> bool {
            self.inner.read().unwrap_or_else(|e| e.into_inner()).is_none()
        }

        /// Close the connection pool (requests already running finish first). Idempotent.
        fn close(&self) {
            let taken = self.inner.write().unwrap_or_else(|e| e.into_inner()).take();
            drop(taken);
        }

        fn __repr__(&self) -> String {
            let state = if self.closed() { " closed" } else { "" };
            let timeout = self.config.timeout.map_or("None".to_owned(), |t| t.to_string());
            format!("<reqwest_client._core.RawAsyncClient timeout={timeout}{state}>")
        }
    }
}

/// The response of `RawAsyncClient.stream` (use `reqwest_client.AsyncClient.stream`): head now, body chunk by
/// chunk through `next_chunk`.
#[pyclass(module = "reqwest_client._core", name = "RawStream", frozen)]
pub(crate) struct RawStream {
    #[pyo3(get)]
    status: u16,
    #[pyo3(get)]
    url: String,
    #[pyo3(get)]
    reason: String,
    #[pyo3(get)]
    http_version: &'static str,
    headers: Py<Headers>,
    /// The body still to read; `None` once closed. A tokio mutex: a chunk is awaited while holding it.
    body: Arc<tokio::sync::Mutex<Option<reqwest_bench::reqwest::Response>>>,
    /// The fork generation it was opened in (fork.rs).
    generation: u64,
}

impl Drop for RawStream {
    fn drop(&mut self) {
        if self.generation != fork::generation() {
            std::mem::forget(self.body.clone()); // the parent's connection: never dropped here
        }
    }
}

impl RawStream {
    fn new(head: Head, resp: reqwest_bench::reqwest::Response) -> Self {
        let headers = Python::attach(|py| Py::new(py, Headers::new(head.headers)));
        RawStream {
            status: head.status,
            url: head.url,
            reason: head.reason,
            http_version: head.http_version,
            headers: headers.expect("allocating Headers"),
            body: Arc::new(tokio::sync::Mutex::new(Some(resp))),
            generation: fork::generation(),
        }
    }
}

#[pymethods]
impl RawStream {
    #[getter]
    fn headers(&self, py: Python<'_>) -> Py<Headers> {
        self.headers.clone_ref(py)
    }

    /// Future of the next chunk, `None` at the end (or once closed).
    fn next_chunk<'py>(&self, completer: &Bound<'py, Completer>) -> PyResult<Bound<'py, PyAny>> {
        if self.generation != fork::generation() {
            return Err(fork::inherited_stream());
        }
        let body = self.body.clone();
        spawn(completer, async move {
            let mut guard = body.lock().await;
            let Some(resp) = guard.as_mut() else { return Ok(Outcome::Chunk(None)) };
            match next_chunk(resp).await {
                Ok(Some(c)) => Ok(Outcome::Chunk(Some(c))),
                Ok(None) => {
                    *guard = None;
                    Ok(Outcome::Chunk(None))
                }
                Err(e) => {
                    *guard = None;
                    Err(e)
                }
            }
        })
    }

    /// Drop the rest of the body (and its connection). Idempotent; a chunk being awaited finishes first.
    fn close(&self) -> PyResult<()> {
        if self.generation != fork::generation() {
            return Ok(());
        }
        let body = self.body.clone();
        runtime()?.spawn(async move { body.lock().await.take() });
        Ok(())
    }
}
