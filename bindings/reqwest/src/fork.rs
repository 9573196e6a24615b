//! Fork safety. A child made by `fork()` (multiprocessing's fork start method, gunicorn with preload,
//! celery's prefork pool, a bare `os.fork()`) inherits the parent's clients as they are in memory: a tokio
//! runtime whose worker threads do not exist in the child (a request would wait forever), an epoll instance
//! and pooled sockets that are the parent's own (shared, not copied). Touching them from the child breaks the
//! parent: dropping a runtime deregisters its sockets from the epoll set both processes share, and a request
//! on a pooled connection interleaves with the parent's.
//!
//! So each process has a generation, bumped in the child by a `pthread_atfork` handler (it runs for every
//! `fork()`, not for `vfork()`/`posix_spawn()`, whose children exec at once). A client made in an earlier
//! generation builds a new runtime and pool, lazily, at its first use in the child, and the inherited ones
//! are leaked there, never used nor dropped ([`ForkLocal`]): the parent's connections stay the parent's. The
//! check costs one atomic load per request.

use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

static GENERATION: AtomicU64 = AtomicU64::new(0);

extern "C" fn in_child() {
    // async-signal-safe: one atomic add, no allocation, no lock
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// Register the child handler (once per process; the module's initialisation calls it).
pub(crate) fn install() -> PyResult<()> {
    static ONCE: Once = Once::new();
    let mut rc = 0;
    // SAFETY: registers a plain function that only touches an atomic; nothing else runs in the child
    // before it.
    ONCE.call_once(|| rc = unsafe { libc::pthread_atfork(None, None, Some(in_child)) });
    if rc != 0 {
        return Err(PyRuntimeError::new_err(format!(
            "pthread_atfork failed: {}",
            std::io::Error::from_raw_os_error(rc)
        )));
    }
    Ok(())
}

/// This process's generation: 0 in the process that imported the module, one more in each forked child.
pub(crate) fn generation() -> u64 {
    GENERATION.load(Ordering::Relaxed)
}

/// A value that belongs to the process (generation) that made it: dropped there as usual, leaked in a
/// forked child (see the module docs).
pub(crate) struct ForkLocal<T> {
    value: ManuallyDrop<T>,
    generation: u64,
}

impl<T> ForkLocal<T> {
    pub(crate) fn new(value: T) -> Self {
        ForkLocal { value: ManuallyDrop::new(value), generation: generation() }
    }

    /// Whether it was made in this process (false in a forked child).
    pub(crate) fn is_current(&self) -> bool {
        self.generation == generation()
    }
}

impl<T> Deref for ForkLocal<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> Drop for ForkLocal<T> {
    fn drop(&mut self) {
        if self.is_current() {
            // SAFETY: dropped once, here; the value is never used again.
            unsafe { ManuallyDrop::drop(&mut self.value) }
        }
    }
}

/// The error of a response opened before `fork()` and read in the child.
pub(crate) fn inherited_stream() -> PyErr {
    PyRuntimeError::new_err(
        "this response was opened by the parent process before fork(); its connection is the parent's: \
         request it again in the child",
    )
}
