//! The constructor arguments of `Client` and `RawAsyncClient` (docs/binding-api.md: both take the same
//! ones): their one list ([`client_pymethods!`], which writes both classes' `__new__` and the getters that
//! read options back), parsed here into the [`ClientOptions`] the client is built with and the [`Config`] it
//! keeps.
//!
//! `verify`, as requests' `verify=`: `True` (or `None`) checks `https://` servers against the system's
//! roots, a `str` / `os.PathLike` against only the CA certificates in that PEM file (read at construction:
//! `FileNotFoundError` / `PermissionError` / `OSError` when it cannot be read, `ValueError` when it holds
//! no usable certificate), `False` not at all (unsafe).
//!
//! `max_connections`: `None` or an `int` >= 1, the bound on the connections (requests in flight) per origin
//! (reqwest_bench's limiter). `http2`: `False` (HTTP/1.1 only), `"alpn"` (offer `h2` over TLS) or
//! `"prior_knowledge"` (HTTP/2 only: h2c over `http://`). `http3`: `True` speaks HTTP/3 only, over QUIC, with
//! prior knowledge (`https://` URLs only; not with `http2`: `ValueError`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyString};
use reqwest_bench::{api, cookies, ClientOptions, Http2, ProxyConfig, TlsConfig, TlsSeen, TlsSetupError};

use crate::errors::to_py_err;
use crate::request::extract_header_pairs;

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

/// A client class whose `#[pymethods]` block is [`client_pymethods!`]'s.
pub(crate) trait ClientClass: Sized {
    /// The client, made from its checked arguments (`__new__`).
    fn build(py: Python<'_>, options: ClientOptions, config: Config) -> PyResult<Self>;
    /// What it keeps of its arguments (the getters read it).
    fn config(&self) -> &Config;
}

/// The `#[pymethods]` block of a client class (`client_pymethods! { impl Client { ... } }`, the class a
/// [`ClientClass`]), with `__new__` in front of the block's own methods: the one list of the constructor's
/// arguments (names, order, defaults, Python signature), and the getters of the options it keeps. The macro
/// wraps the whole block because `#[pymethods]` accepts no macro among its items, and a second
/// `#[pymethods]` block per class needs PyO3's `multiple-pymethods` (one more dependency, `inventory`).
/// rustfmt leaves a macro's body alone: the blocks are written as it would format them (checked by
/// tests/test_signatures.py).
macro_rules! client_pymethods {
    (impl $class:ident { $($methods:tt)* }) => {
        #[::pyo3::pymethods]
        impl $class {
            // `verify` and `http2` default to None (taken as True / False by parse()); the text signature
            // shows what they mean
            #[new]
            #[pyo3(
                signature = (timeout = None, verify = None, *, connect_timeout = Some(10.0), read_timeout = Some(30.0),
                             follow_redirects = true, max_redirects = 10, headers = None, decompress = true,
                             user_agent = None, cookies = false, max_body_size = None, max_connections = None,
                             trust_env = true, proxy = None, http2 = None, http3 = false),
                text_signature = "(timeout=None, verify=True, *, connect_timeout=10.0, read_timeout=30.0, \
                                  follow_redirects=True, max_redirects=10, headers=None, decompress=True, \
                                  user_agent=None, cookies=False, max_body_size=None, max_connections=None, \
                                  trust_env=True, proxy=None, http2=False, http3=False)"
            )]
            #[allow(clippy::too_many_arguments)]
            fn new(
                py: ::pyo3::Python<'_>,
                timeout: Option<f64>,
                verify: Option<&::pyo3::Bound<'_, ::pyo3::PyAny>>,
                connect_timeout: Option<f64>,
                read_timeout: Option<f64>,
                follow_redirects: bool,
                max_redirects: i64,
                headers: Option<&::pyo3::Bound<'_, ::pyo3::PyAny>>,
                decompress: bool,
                user_agent: Option<String>,
                cookies: bool,
                max_body_size: Option<&::pyo3::Bound<'_, ::pyo3::PyAny>>,
                max_connections: Option<&::pyo3::Bound<'_, ::pyo3::PyAny>>,
                trust_env: bool,
                proxy: Option<String>,
                http2: Option<&::pyo3::Bound<'_, ::pyo3::PyAny>>,
                http3: bool,
            ) -> ::pyo3::PyResult<Self> {
                let args = $crate::config::ClientArgs {
                    timeout,
                    verify,
                    connect_timeout,
                    read_timeout,
                    follow_redirects,
                    max_redirects,
                    headers,
                    decompress,
                    user_agent,
                    cookies,
                    max_body_size,
                    max_connections,
                    trust_env,
                    proxy,
                    http2,
                    http3,
                };
                let (options, config) = args.parse(py)?;
                <Self as $crate::config::ClientClass>::build(py, options, config)
            }

            /// The total timeout of each request, seconds (None: no total limit).
            #[getter]
            fn timeout(&self) -> Option<f64> {
                <Self as $crate::config::ClientClass>::config(self).timeout
            }

            /// The connect (TCP + TLS handshake) timeout, seconds (None: only the total).
            #[getter]
            fn connect_timeout(&self) -> Option<f64> {
                <Self as $crate::config::ClientClass>::config(self).connect_timeout
            }

            /// The longest wait for the next bytes of a response, seconds (None: no limit).
            #[getter]
            fn read_timeout(&self) -> Option<f64> {
                <Self as $crate::config::ClientClass>::config(self).read_timeout
            }

            /// The `verify` argument, as given (`True` when omitted).
            #[getter]
            fn verify(&self, py: ::pyo3::Python<'_>) -> ::pyo3::Py<::pyo3::PyAny> {
                <Self as $crate::config::ClientClass>::config(self).verify.clone_ref(py)
            }

            $($methods)*
        }
    };
}
pub(crate) use client_pymethods;

/// The arguments of `Client(...)` / `RawAsyncClient(...)` ([`client_pymethods!`]).
pub(crate) struct ClientArgs<'a, 'py> {
    pub timeout: Option<f64>,
    pub verify: Option<&'a Bound<'py, PyAny>>,
    pub connect_timeout: Option<f64>,
    pub read_timeout: Option<f64>,
    pub follow_redirects: bool,
    pub max_redirects: i64,
    pub headers: Option<&'a Bound<'py, PyAny>>,
    pub decompress: bool,
    pub user_agent: Option<String>,
    pub cookies: bool,
    pub max_body_size: Option<&'a Bound<'py, PyAny>>,
    pub max_connections: Option<&'a Bound<'py, PyAny>>,
    pub trust_env: bool,
    pub proxy: Option<String>,
    pub http2: Option<&'a Bound<'py, PyAny>>,
    pub http3: bool,
}

/// What a client keeps of its arguments: the request settings and what its getters read back.
pub(crate) struct Config {
    pub settings: Settings,
    pub timeout: Option<f64>,
    pub connect_timeout: Option<f64>,
    pub read_timeout: Option<f64>,
    /// The `verify` argument as given (`True` for `None` / omitted).
    pub verify: Py<PyAny>,
}

/// The default `User-Agent`.
pub(crate) fn default_user_agent() -> String {
    format!("reqwest-client/{}", env!("CARGO_PKG_VERSION"))
}

impl ClientArgs<'_, '_> {
    /// Check the arguments (a CA file is read now, with the GIL released): the options to build the
    /// client with, and what the client keeps.
    pub(crate) fn parse(self, py: Python<'_>) -> PyResult<(ClientOptions, Config)> {
        let tls = tls_config(py, self.verify)?;
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
        let max_body_size = max_body_size(self.max_body_size)?;
        let http2 = http2_mode(self.http2)?;
        if self.http3 && http2 != Http2::Off {
            return Err(PyValueError::new_err(
                "http3=True speaks HTTP/3 only: it goes with http2=False (a client speaks one of HTTP/2 and 3)",
            ));
        }
        let options = ClientOptions {
            timeout: total,
            connect_timeout: seconds("connect_timeout", self.connect_timeout)?,
            read_timeout: seconds("read_timeout", self.read_timeout)?,
            tls,
            tls_info: true,
            proxy,
            decompress: self.decompress,
            default_headers,
            cookies: self.cookies.then(|| Arc::new(cookies::Jar::new())),
            max_body_size,
            http2,
            http3: self.http3,
            max_connections: max_connections(self.max_connections)?,
            // the connections are timed for the requests that record their phases (Response.phases, fetch_phases);
            // one opened for another (get, fetch_len, fetch) costs a thread-local look-up more, no clock read
            phases: true,
        };
        let config = Config {
            settings: Settings { follow_redirects: self.follow_redirects, max_redirects },
            timeout: self.timeout,
            connect_timeout: self.connect_timeout,
            read_timeout: self.read_timeout,
            verify: verify_given(py, self.verify),
        };
        Ok((options, config))
    }
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type().name().map(|n| n.to_string()).unwrap_or_default()
}

/// `max_body_size=`: `None` (no bound) or an `int` >= 0 (a `bool` is no size: `TypeError`); one past what a
/// `u64` holds bounds nothing either, as the Beast binding reads it.
fn max_body_size(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    let Some(v) = value.filter(|v| !v.is_none()) else { return Ok(None) };
    if v.is_instance_of::<PyBool>() || !v.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!("max_body_size must be an int or None, not {}", type_name(v))));
    }
    if v.lt(0)? {
        return Err(PyValueError::new_err(format!("max_body_size must be >= 0 or None, got {v}")));
    }
    Ok(Some(v.extract::<u64>().unwrap_or(u64::MAX)))
}

/// `max_connections=`: `None` (no bound) or an `int` >= 1 (a `bool` is no count: `TypeError`).
fn max_connections(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    let Some(v) = value.filter(|v| !v.is_none()) else { return Ok(None) };
    if v.is_instance_of::<PyBool>() || !v.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!("max_connections must be an int or None, not {}", type_name(v))));
    }
    match v.extract::<i64>().ok().and_then(|n| usize::try_from(n).ok()).filter(|n| *n >= 1) {
        Some(n) => Ok(Some(n)),
        None => Err(PyValueError::new_err(format!("max_connections must be >= 1 or None, got {v}"))),
    }
}

/// `http2=`: `False` (HTTP/1.1 only), `"alpn"` or `"prior_knowledge"`; `True` says neither (`ValueError`).
fn http2_mode(value: Option<&Bound<'_, PyAny>>) -> PyResult<Http2> {
    let Some(v) = value else { return Ok(Http2::Off) };
    let wanted = "http2 must be False, \"alpn\" or \"prior_knowledge\"";
    if let Ok(b) = v.cast::<PyBool>() {
        return match b.is_true() {
            false => Ok(Http2::Off),
            true => Err(PyValueError::new_err(format!("{wanted}, got True"))),
        };
    }
    if !v.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!("{wanted}, not {}", type_name(v))));
    }
    match v.extract::<String>()?.as_str() {
        "alpn" => Ok(Http2::Alpn),
        "prior_knowledge" => Ok(Http2::PriorKnowledge),
        other => Err(PyValueError::new_err(format!("{wanted}, got {other:?}"))),
    }
}

/// `verify=` → the clients' TLS trust: `True` (or `None`, as in requests) the system's roots, `False` no
/// verification, a `str` / `os.PathLike` the CA bundle at that path, read now (with the GIL released).
fn tls_config(py: Python<'_>, verify: Option<&Bound<'_, PyAny>>) -> PyResult<TlsConfig> {
    let Some(v) = verify.filter(|v| !v.is_none()) else { return Ok(TlsConfig::system()) };
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(if b.is_true() { TlsConfig::system() } else { TlsConfig::insecure() });
    }
    let path: PathBuf = v.extract().map_err(|_| {
        let kind = v.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        PyTypeError::new_err(format!(
            "verify must be True, False or the path of a CA bundle (str or os.PathLike), not {kind}"
        ))
    })?;
    py.detach(|| TlsConfig::ca_file(&path)).map_err(|e| match e {
        // FileNotFoundError, PermissionError, IsADirectoryError, ... (an OSError)
        TlsSetupError::Io(kind, msg) => PyErr::from(std::io::Error::new(kind, msg)),
        TlsSetupError::Invalid(msg) => PyValueError::new_err(msg),
    })
}

/// What `verify` reads back: the object given, `True` for `None` / omitted.
fn verify_given(py: Python<'_>, verify: Option<&Bound<'_, PyAny>>) -> Py<PyAny> {
    match verify.filter(|v| !v.is_none()) {
        Some(v) => v.clone().unbind(),
        None => PyBool::new(py, true).to_owned().into_any().unbind(),
    }
}

/// `tls_info`: `{"version": ..., "cipher": None}` or `None`.
pub(crate) fn tls_info_dict<'py>(py: Python<'py>, seen: &TlsSeen) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(version) = seen.version() else { return Ok(None) };
    let d = PyDict::new(py);
    d.set_item("version", version)?;
    d.set_item("cipher", py.None())?;
    Ok(Some(d))
}
