//! The reqwest client of clientbench, in one place: the `reqwest-driver` binary and the `reqwest_client`
//! Python binding (bindings/reqwest) both use this code, so what the table measures is what the binding
//! ships.
//!
//! Scope: HTTP/1.1 over `http://` and `https://` (rustls; see [`tls`] for the crypto provider and root
//! store, and [`TlsConfig`] for the three ways to check a certificate: the system's roots, a CA file, or
//! none), HTTP/2 when [`ClientOptions::http2`] asks for it ([`Http2`]: ALPN `h2` over TLS, or prior
//! knowledge), and HTTP/3 over QUIC when [`ClientOptions::http3`] does (`https://` only); every other scheme
//! is an [`ClientError::InvalidUrl`]. The benchmark path ([`Client::get`],
//! [`Client::fetch`]) follows no redirects (a 3xx is returned like any other status) and never decompresses;
//! [`api`] is the Python binding's user-facing request (redirects, default headers, decompression, streamed
//! uploads) next to it. TLS failures (untrusted, expired or wrong-name certificate, a failed
//! handshake, `https://` to a plain-HTTP server) are [`ClientError::Tls`]; the timeout covers the handshake.
//!
//! * [`build_client`] / [`build_client_with`] — the client configuration every user shares.
//! * [`Client`] — async `get` / `send_body` (the benchmark's POST/PUT) / `fetch` that read the whole body
//!   and classify failures into [`ClientError`]. A kept-alive connection that the server closed while it
//!   sat idle is noticed before it is reused, for every method (see [`Client::send`]); an idempotent
//!   request is re-sent once when the server closed the connection just as the request went out.
//! * [`BlockingClient`] — the same on a private current-thread tokio runtime, with a cancel callback
//!   polled every [`CANCEL_POLL`] (the Python binding checks for signals there). Both can be shared by
//!   threads (or tasks): one pool, bounded per origin by [`ClientOptions::max_connections`] ([`limit`]).
//!
//! The driver contract (flags, workers, timing, the raw document) is the `reqwest-harness` crate
//! (rust-reqwest/harness), apart from this one so that the Python binding, which ships this crate, does
//! not carry its command-line and JSON dependencies.

pub mod api;
mod blocking;
pub mod cookies;
mod error;
pub mod limit;
pub mod phases;
mod protocol;
mod send;
pub mod tls;

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, Url};

/// The reqwest this crate is built on (for the binding's types).
pub use reqwest;

pub use blocking::BlockingClient;
pub use error::{chain_text, classify, ClientError, ConnectionKind, FAILURE_CLASSES};
pub use phases::Phases;
use protocol::{version_code, version_of_code};
pub use protocol::{version_name, Http2};
pub(crate) use send::{request_builder, send_on, settle_idle_connections};
pub use tls::{TlsConfig, TlsSetupError, Trust};

/// The locked version of the reqwest crate this was built with (read from Cargo.lock by build.rs).
pub const REQWEST_VERSION: &str = env!("REQWEST_VERSION");

/// How often [`BlockingClient`] calls its cancel callback while a request is in flight.
pub const CANCEL_POLL: Duration = Duration::from_millis(50);

/// How a [`Client`] is built: the request timeouts, how `https://` servers are checked, whether to
/// keep the negotiated TLS version ([`Client::tls_version`]), and what the user-facing API
/// ([`Client::open`], the Python binding's `request`/`stream`) adds: proxies, decompression, default
/// headers. [`ClientOptions::new`] is the benchmark configuration (none of those).
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// Total deadline of each request: connect, TLS handshake, send, response head and the whole body
    /// (`None`: no total deadline).
    pub timeout: Option<Duration>,
    /// Deadline of the TCP connect plus the TLS handshake (`None`: none but the total).
    pub connect_timeout: Option<Duration>,
    /// Longest wait for the next bytes of a response (reset by every chunk received; `None`: none).
    pub read_timeout: Option<Duration>,
    /// How the server's certificate is checked (default: the system's roots).
    pub tls: TlsConfig,
    /// Ask reqwest for each response's `TlsInfo` (`ClientBuilder::tls_info`) so that the client can tell
    /// the negotiated TLS version. It costs a copy of the server's certificate per `https://` response;
    /// off by default.
    pub tls_info: bool,
    /// Which proxy the connections go through (default: none, not even from the environment).
    pub proxy: ProxyConfig,
    /// [`Client::open`] only: send `Accept-Encoding: gzip, deflate, br, zstd` and decode such bodies
    /// (reqwest's decompression, on a second connection pool built at the first such request). The
    /// benchmark path ([`Client::get`], [`Client::fetch`]) never does.
    pub decompress: bool,
    /// [`Client::open`] only: headers sent with every request, unless the request sets the same name.
    pub default_headers: HeaderMap,
    /// [`Client::open`] only: keep the cookies responses set in this jar and send them back (`None`: no
    /// cookies). Every client built from these options shares it (a forked child's new client keeps the
    /// parent's cookies).
    pub cookies: Option<Arc<cookies::Jar>>,
    /// [`api::read_body`] only: the largest (decoded) body it keeps; a larger one is
    /// [`ClientError::BodyTooLarge`] (`None`: no limit).
    pub max_body_size: Option<u64>,
    /// HTTP/1.1 only (the default), or HTTP/2 over ALPN or with prior knowledge.
    pub http2: Http2,
    /// HTTP/3 only, with prior knowledge (reqwest's `http3_prior_knowledge`): every request goes over QUIC to
    /// its URL's host and UDP port, never over TCP, so `https://` only (an `http://` URL is
    /// [`ClientError::InvalidUrl`], a redirect to one [`ClientError::Protocol`]); not with `http2` (a
    /// [`ClientError::Usage`] error when the client is built). One QUIC connection per origin carries every
    /// request to it; a client has a QUIC endpoint (a UDP socket) of its own. QUIC failures have the classes of
    /// the TCP ones (see [`classify`]). reqwest applies `connect_timeout` to TCP connects only: the QUIC
    /// handshake is bounded by `timeout` and `read_timeout` (and quinn's 30 s idle timeout).
    pub http3: bool,
    /// At most this many requests in flight, and idle connections kept, per origin (see [`limit`]); a
    /// request waits for its turn at most the connect timeout (and what is left of its total timeout).
    /// `None` (the default): no bound, and the idle connections are all kept (until reqwest's idle
    /// timeout, 90 s), as a client shared by W threads needs W of them.
    pub max_connections: Option<usize>,
    /// Time the connections the client opens ([`phases`]: a layer on reqwest's connector), so that a request
    /// that records its phases ([`Client::get_phases`], [`phases::record`]) can tell its `connect+tls`. Off by
    /// default: the connector is then reqwest's own, as without it; on, a connection opened for a request
    /// that does not record costs one thread-local look-up more (no clock read).
    pub phases: bool,
}

impl ClientOptions {
    /// `timeout` (total), the system's roots, no TLS info, no proxy, no decompression, no default headers.
    pub fn new(timeout: Duration) -> Self {
        ClientOptions {
            timeout: Some(timeout),
            connect_timeout: None,
            read_timeout: None,
            tls: TlsConfig::system(),
            tls_info: false,
            proxy: ProxyConfig::None,
            decompress: false,
            default_headers: HeaderMap::new(),
            cookies: None,
            max_body_size: None,
            http2: Http2::Off,
            http3: false,
            max_connections: None,
            phases: false,
        }
    }
}

/// The proxy of a client's connections.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProxyConfig {
    /// Direct connections only (the benchmark's choice).
    None,
    /// reqwest's system proxy: `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY` (and their lower-case
    /// forms), read when the client is built.
    Env,
    /// This proxy URL for every scheme (`http://host:port`, with optional `user:password@`).
    Url(String),
}

/// The shared reqwest configuration with the system's roots: see [`build_client_with`].
pub fn build_client(timeout: Duration) -> Result<reqwest::Client, ClientError> {
    build_client_with(&ClientOptions::new(timeout))
}

/// The shared reqwest configuration: one keep-alive pool per client, HTTP/1.1 only unless
/// [`ClientOptions::http2`] or [`ClientOptions::http3`] says otherwise, TCP_NODELAY,
/// no proxy unless [`ClientOptions::proxy`] says so (by default neither from the environment nor the
/// system), no redirects, no decompression, `timeout` as the total deadline of each request (connect,
/// TLS handshake, send, response head and the whole body), the options' connect and read timeouts, rustls
/// with the options' trust and a TLS session cache of its own ([`TlsConfig::rustls_config`]).
pub fn build_client_with(options: &ClientOptions) -> Result<reqwest::Client, ClientError> {
    builder_with(options, false)
}

fn builder_with(options: &ClientOptions, decompress: bool) -> Result<reqwest::Client, ClientError> {
    if options.http3 && options.http2 != Http2::Off {
        return Err(ClientError::Usage("a client speaks HTTP/3 or HTTP/2, not both: ask for one".into()));
    }
    // only a client with HTTP/3 gets a configuration that can do QUIC: reqwest then gives it a QUIC endpoint
    // (tls.rs, "QUIC only when asked")
    let mut tls = if options.http3 { options.tls.quic_config() } else { options.tls.rustls_config() };
    let mut b = reqwest::Client::builder();
    b = match options.http2 {
        // the requests still say HTTP/3 each (reqwest sends one over QUIC only then: `request_builder`)
        Http2::Off if options.http3 => b.http3_prior_knowledge(),
        Http2::Off => b.http1_only(),
        Http2::Alpn => {
            tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
            b
        }
        Http2::PriorKnowledge => {
            tls.alpn_protocols = vec![b"h2".to_vec()];
            b.http2_prior_knowledge()
        }
    };
    let mut b = b
        .tcp_nodelay(true)
        .pool_max_idle_per_host(options.max_connections.unwrap_or(usize::MAX))
        .redirect(reqwest::redirect::Policy::none())
        // reqwest's gzip/deflate/brotli/zstd features (for the Python binding's `decompress=True`) turn
        // them on by default, with an `Accept-Encoding` on every request: the benchmark client sends and
        // measures exactly what it did without them
        .gzip(decompress)
        .deflate(decompress)
        .brotli(decompress)
        .zstd(decompress)
        .tls_backend_preconfigured(tls)
        .tls_info(options.tls_info);
    if options.phases {
        b = b.connector_layer(phases::ConnectTiming);
    }
    b = match &options.proxy {
        ProxyConfig::None => b.no_proxy(),
        ProxyConfig::Env => b, // reqwest's default: the environment's proxies
        ProxyConfig::Url(url) => {
            let proxy = reqwest::Proxy::all(url.as_str())
                .map_err(|e| ClientError::InvalidUrl(format!("invalid proxy URL {url:?}: {}", chain_text(&e))))?;
            b.proxy(proxy)
        }
    };
    if let Some(t) = options.timeout {
        b = b.timeout(t);
    }
    if let Some(t) = options.connect_timeout {
        b = b.connect_timeout(t);
    }
    if let Some(t) = options.read_timeout {
        b = b.read_timeout(t);
    }
    b.build().map_err(|e| ClientError::Usage(format!("cannot build the HTTP client: {}", chain_text(&e))))
}

/// Parse and check a URL before any I/O: it must be `http://` or `https://` with a host and a non-zero
/// port, and hold no control character (U+0000-U+001F, U+007F: the WHATWG parser would silently drop a tab,
/// CR or LF, so the request would go to another URL than the one given).
pub fn parse_url(url: &str) -> Result<Url, ClientError> {
    if let Some(c) = url.bytes().find(|b| b.is_ascii_control()) {
        return Err(ClientError::InvalidUrl(format!("control character {:?} in URL {url:?}", c as char)));
    }
    let parsed = Url::parse(url).map_err(|e| ClientError::InvalidUrl(format!("invalid URL {url:?}: {e}")))?;
    let prefix = match parsed.scheme() {
        "http" => "http://",
        "https" => "https://",
        other => {
            return Err(ClientError::InvalidUrl(format!(
                "unsupported URL scheme {other:?} in {url:?}: only http:// and https:// are supported"
            )))
        }
    };
    // The WHATWG parser is lenient with special schemes ("http:///x" and "http:x" get host "x"):
    // insist on a literal "http://" (or "https://") followed by a non-empty authority.
    let text = url.trim();
    let n = prefix.len();
    let authority = text
        .get(..n)
        .filter(|p| p.eq_ignore_ascii_case(prefix))
        .map(|_| text[n..].split(['/', '?', '#']).next().unwrap_or(""));
    match (authority, parsed.host_str()) {
        (Some(a), Some(h)) if !a.is_empty() && !h.is_empty() => {}
        _ => {
            return Err(ClientError::InvalidUrl(format!("URL {url:?} has no host (expected {prefix}host[:port]/...)")))
        }
    }
    if parsed.port() == Some(0) {
        return Err(ClientError::InvalidUrl(format!("URL {url:?} has port 0")));
    }
    Ok(parsed)
}

fn parse_method(method: &str) -> Result<Method, ClientError> {
    Method::from_bytes(method.as_bytes())
        .map_err(|_| ClientError::InvalidRequest(format!("invalid HTTP method {method:?}")))
}

pub fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, ClientError> {
    let mut map = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        let n = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| ClientError::InvalidRequest(format!("invalid header name {name:?}")))?;
        // the message framing is derived from the body: a caller's framing header would desync it
        if n == reqwest::header::CONTENT_LENGTH || n == reqwest::header::TRANSFER_ENCODING {
            return Err(ClientError::InvalidRequest(format!(
                "header {name:?} is set by the client from the body; do not pass it"
            )));
        }
        let v = HeaderValue::from_str(value)
            .map_err(|_| ClientError::InvalidRequest(format!("invalid value for header {name:?}: {value:?}")))?;
        map.append(n, v);
    }
    Ok(map)
}

/// A complete response: status, headers (in received order, values decoded lossily as UTF-8, repeated
/// names repeated) and the whole body.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
}

/// A reqwest client with its own keep-alive pool (and TLS session cache) and the request timeout it was
/// built with. Cheap to clone (clones share the pool).
#[derive(Clone, Debug)]
pub struct Client {
    http: reqwest::Client,
    /// The options it was built with (the API client [`Client::open`] uses is built from them).
    options: Arc<ClientOptions>,
    /// With [`ClientOptions::decompress`]: the decompressing reqwest client of [`Client::open`], built at
    /// its first request (so that the benchmark, which never calls it, does not pay for it).
    decompressing: Arc<OnceLock<Result<reqwest::Client, ClientError>>>,
    /// With [`ClientOptions::tls_info`]: the TLS version of the most recent response's connection.
    tls_seen: Option<TlsSeen>,
    /// The HTTP version of the most recent response ([`Client::http_version`]).
    version_seen: Arc<AtomicU8>,
    /// With [`ClientOptions::max_connections`]: the bound on the requests in flight per origin.
    limiter: Option<Arc<limit::Limiter>>,
    /// With [`Http2::Alpn`]: the first request to each origin goes alone.
    first_contact: Option<Arc<limit::FirstContact>>,
}

/// The TLS version of the connection of a client's most recent response (see [`Client::tls_version`]);
/// a handle that outlives the client.
#[derive(Clone, Debug, Default)]
pub struct TlsSeen(Arc<AtomicU8>);

impl TlsSeen {
    /// `TLSv1.2`, `TLSv1.3` (OpenSSL's names); `None` before the first response and after a plain-HTTP one.
    pub fn version(&self) -> Option<&'static str> {
        tls::version_name(self.0.load(Ordering::Relaxed))
    }
}

impl Client {
    /// A client with the system's roots for `https://`.
    pub fn new(timeout: Duration) -> Result<Self, ClientError> {
        Client::with_options(&ClientOptions::new(timeout))
    }

    pub fn with_options(options: &ClientOptions) -> Result<Self, ClientError> {
        let tls_seen = options.tls_info.then(TlsSeen::default);
        let wait = options.connect_timeout.or(options.timeout);
        Ok(Client {
            http: build_client_with(options)?,
            options: Arc::new(options.clone()),
            decompressing: Arc::new(OnceLock::new()),
            tls_seen,
            version_seen: Arc::new(AtomicU8::new(0)),
            limiter: options.max_connections.map(|max| Arc::new(limit::Limiter::new(max, wait))),
            first_contact: (options.http2 == Http2::Alpn).then(|| Arc::new(limit::FirstContact::default())),
        })
    }

    /// The total timeout of each request (`None`: none).
    pub fn timeout(&self) -> Option<Duration> {
        self.options.timeout
    }

    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    /// The reqwest client of [`Client::open`]: the benchmark one, or with [`ClientOptions::decompress`]
    /// the decompressing one (built now if this is the first request).
    fn api_http(&self) -> Result<&reqwest::Client, ClientError> {
        if !self.options.decompress {
            return Ok(&self.http);
        }
        self.decompressing.get_or_init(|| builder_with(&self.options, true)).as_ref().map_err(Clone::clone)
    }

    /// The cookie jar of [`Client::open`] (with [`ClientOptions::cookies`] only).
    pub fn cookie_jar(&self) -> Option<&cookies::Jar> {
        self.options.cookies.as_deref()
    }

    /// The TLS version (`TLSv1.2`, `TLSv1.3`: OpenSSL's names) of the connection of this client's most
    /// recent response, when it was built with [`ClientOptions::tls_info`]; `None` before the first
    /// response, and when that was plain `http://`. reqwest tells the version but not the cipher suite
    /// (its `TlsInfo` holds only the version and the server's certificate).
    pub fn tls_version(&self) -> Option<&'static str> {
        self.tls_seen.as_ref().and_then(TlsSeen::version)
    }

    /// The handle behind [`Client::tls_version`] (with [`ClientOptions::tls_info`] only).
    pub fn tls_seen(&self) -> Option<TlsSeen> {
        self.tls_seen.clone()
    }

    /// The HTTP version of this client's most recent response (`HTTP/1.1`, `HTTP/2`, `HTTP/3`); `None` before
    /// the first. Clones of a client (the threads or tasks that share it) share it.
    pub fn http_version(&self) -> Option<&'static str> {
        version_of_code(self.version_seen.load(Ordering::Relaxed))
    }

    /// What every response updates: the TLS version and the HTTP version seen.
    pub(crate) fn note(&self, resp: &reqwest::Response) {
        if let Some(TlsSeen(slot)) = &self.tls_seen {
            let info = resp.extensions().get::<reqwest::tls::TlsInfo>();
            let version = match info.and_then(|i| i.version()) {
                Some(v) => Some(v),
                // reqwest gives no TlsInfo over HTTP/3; QUIC's handshake is TLS 1.3, always (RFC 9001)
                None if resp.version() == reqwest::Version::HTTP_3 => Some(reqwest::tls::Version::TLS_1_3),
                None => None,
            };
            slot.store(version.map_or(0, tls::version_code), Ordering::Relaxed);
        }
        // written only when it changes: the threads that share a client read the line, never bounce it
        let code = version_code(resp.version());
        if self.version_seen.load(Ordering::Relaxed) != code {
            self.version_seen.store(code, Ordering::Relaxed);
        }
    }

    /// What the client adds to reqwest's pool ([`limit`]).
    pub(crate) fn shape(&self) -> limit::Shape<'_> {
        limit::Shape {
            limiter: self.limiter.as_deref(),
            first: self.first_contact.as_deref(),
            prior_knowledge: self.options.http2 == Http2::PriorKnowledge,
            http3: self.options.http3,
        }
    }

    /// The underlying reqwest client.
    pub fn inner(&self) -> &reqwest::Client {
        &self.http
    }

    /// Send the request. First the runtime is given the chance to notice pooled connections that the
    /// server closed while they sat idle ([`settle_idle_connections`]), so such a connection is never
    /// used, whatever the method. If the server closes the connection just as the request goes out (its
    /// FIN was still on the way), the request may or may not have reached it: then, and only for an
    /// idempotent method, the request is sent once more — the failed connection is gone from the pool,
    /// so on a new one (or another idle one) — within what is left of the timeout. Nothing else is ever
    /// retried; a response that broke off after its head arrived is never retried either.
    async fn send(
        &self,
        method: Method,
        url: Url,
        headers: HeaderMap,
        body: Option<Bytes>,
    ) -> Result<reqwest::Response, ClientError> {
        send_on(&self.http, self.shape(), self.options.timeout, method, url, headers, body, None).await
    }

    /// GET `url`, reading (and counting, chunk by chunk) the whole body: `(status, body bytes)`.
    pub async fn get(&self, url: &str) -> Result<(u16, u64), ClientError> {
        let url = parse_url(url)?;
        let mut resp = self.send(Method::GET, url, HeaderMap::new(), None).await?;
        self.note(&resp);
        let status = resp.status().as_u16();
        let mut n: u64 = 0;
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => n += chunk.len() as u64,
                Ok(None) => return Ok((status, n)),
                Err(e) => return Err(classify(&e)),
            }
        }
    }

    /// [`Client::get`], recording the request's phases ([`phases`]): `(status, body bytes, phases)`. A connection
    /// it opens is timed only if the client was built with [`ClientOptions::phases`] (else its time is in
    /// `send_wait`).
    pub async fn get_phases(&self, url: &str) -> Result<(u16, u64, Phases), ClientError> {
        let (result, phases) = phases::record(self.get(url)).await;
        result.map(|(status, n)| (status, n, phases))
    }

    /// The benchmark's upload: `method` with `body` (its bytes shared, not copied), reading (and counting)
    /// the whole response body and keeping its first `keep` bytes: `(status, body bytes, those bytes)`.
    pub async fn send_body(
        &self,
        method: Method,
        url: &str,
        body: Bytes,
        keep: usize,
    ) -> Result<(u16, u64, Bytes), ClientError> {
        let url = parse_url(url)?;
        let mut resp = self.send(method, url, HeaderMap::new(), Some(body)).await?;
        self.note(&resp);
        let status = resp.status().as_u16();
        let (mut n, mut head) = (0u64, Bytes::new());
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    n += chunk.len() as u64;
                    let take = chunk.len().min(keep.saturating_sub(head.len()));
                    if head.is_empty() {
                        head = chunk.slice(..take);
                    } else if take > 0 {
                        head = [&head, &chunk[..take]].concat().into();
                    }
                }
                Ok(None) => return Ok((status, n, head)),
                Err(e) => return Err(classify(&e)),
            }
        }
    }

    /// Any method, with headers and an optional body; returns the complete response.
    pub async fn fetch(
        &self,
        method: &str,
        url: &str,
        headers: &[(String, String)],
        body: Option<Bytes>,
    ) -> Result<Response, ClientError> {
        let url = parse_url(url)?;
        let method = parse_method(method)?;
        let headers = header_map(headers)?;
        let mut resp = self.send(method, url, headers, body).await?;
        self.note(&resp);
        let status = resp.status().as_u16();
        let headers = resp
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
            .collect();
        let _permit = limit::take(&mut resp); // `bytes()` consumes the response: hold it while it reads
        let body = resp.bytes().await.map_err(|e| classify(&e))?;
        Ok(Response { status, headers, body })
    }
}

/// Free-function forms of [`Client::get`] / [`Client::fetch`].
pub async fn get(client: &Client, url: &str) -> Result<(u16, u64), ClientError> {
    client.get(url).await
}

pub async fn fetch(
    client: &Client,
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: Option<Bytes>,
) -> Result<Response, ClientError> {
    client.fetch(method, url, headers, body).await
}
