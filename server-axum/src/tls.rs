//! HTTPS for the server (`--tls`): the certificates (a throw-away CA and a server certificate generated at
//! start with rcgen, or the user's own PEM files), the rustls `ServerConfig`, and a [`TlsListener`] for
//! `axum::serve` whose connections do their TLS handshake in their own connection task (never in the accept
//! loop, so a slow or silent client cannot hold up anyone else).
//!
//! rustls with the aws-lc-rs provider (the same provider as the reqwest client, see rust-reqwest/src/tls.rs);
//! TLS 1.2 and 1.3 (or one of them, [`Version`]); ALPN `h2` and `http/1.1` (the client's choice among those it
//! offers: rustls picks the first of the server's list that the client offers, so a client offering both
//! gets `h2`; one offering none gets no ALPN, and speaks HTTP/1.1). Session resumption: stateless tickets
//! (rustls's `aws_lc_rs::Ticketer`, its key rotating every 6 hours) for TLS 1.3 and for TLS 1.2 clients that
//! support tickets, and an in-memory session-ID cache (`ServerSessionMemoryCache`, [`SESSION_CACHE`]
//! sessions) for TLS 1.2 clients that do not.
//!
//! HTTP/3 ([`crate::http3`]) gets a configuration of its own from the same certificate, [`quic_server_config`]:
//! QUIC mandates TLS 1.3, and its ALPN is `h3`.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ServerSessionMemoryCache, WantsServerCert};
use rustls::{ConfigBuilder, HandshakeKind, ServerConfig};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Sleep;

use crate::counting::Sniff;
use crate::Stats;

/// The names the generated server certificate is valid for (`--tls-name` adds more).
pub const SERVER_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// A `--tls-name`: an IP address, or a DNS name by the rules certificate verification applies (RFC 1123 labels,
/// ASCII), returned in the form the certificate will hold it (an address canonical, a name in lower case).
pub fn parse_name(raw: &str) -> Result<String, String> {
    if let Ok(ip) = raw.parse::<std::net::IpAddr>() {
        return Ok(ip.to_string());
    }
    match rustls::pki_types::DnsName::try_from(raw) {
        Ok(name) if !raw.ends_with('.') => Ok(name.to_lowercase_owned().as_ref().to_owned()),
        _ => Err(format!("{raw:?} is neither an IP address nor a DNS name (letters, digits, '-' and '.')")),
    }
}

/// TLS 1.2 sessions kept for session-ID resumption.
pub const SESSION_CACHE: usize = 4096;

/// A client that has not completed its handshake this long after connecting is dropped.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// `--tls-version`: the one TLS version the server accepts (both when not given).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    Tls12,
    Tls13,
}

/// The server's certificate chain and key, and the PEM of the CA that signed it when it was generated.
pub struct Identity {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
    /// The generated CA's certificate (PEM); `None` for the user's own certificate.
    pub ca_pem: Option<String>,
}

/// A throw-away CA and a server certificate signed by it, valid for `names` (DNS names or IP addresses):
/// ECDSA P-256 keys, the CA with basicConstraints CA:TRUE (critical) and keyCertSign, the server
/// certificate with serverAuth and an authority key identifier (so that OpenSSL's X509_STRICT accepts it).
pub fn generate(names: &[&str]) -> Result<Identity, rcgen::Error> {
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.distinguished_name.push(DnType::CommonName, "clientbench throw-away CA");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    let ca_cert = ca.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca, ca_key);

    let key = KeyPair::generate()?;
    let mut leaf = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())?;
    leaf.distinguished_name.push(DnType::CommonName, names.first().copied().unwrap_or("localhost"));
    leaf.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    leaf.use_authority_key_identifier_extension = true;
    let cert = leaf.signed_by(&key, &issuer)?;
    Ok(Identity {
        chain: vec![cert.der().clone()],
        key: PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
        ca_pem: Some(ca_cert.pem()),
    })
}

/// The user's certificate chain (every certificate in `cert`, leaf first) and private key (the first key
/// in `key`: PKCS#8, PKCS#1 or SEC1). Errors are one line, naming the file.
pub fn load(cert: &Path, key: &Path) -> Result<Identity, String> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("--tls-cert {}: {}", cert.display(), pem_error(&e)))?;
    if chain.is_empty() {
        return Err(format!("--tls-cert {}: no certificate in the file", cert.display()));
    }
    let key =
        PrivateKeyDer::from_pem_file(key).map_err(|e| format!("--tls-key {}: {}", key.display(), pem_error(&e)))?;
    Ok(Identity { chain, key, ca_pem: None })
}

fn pem_error(e: &rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error;
    match e {
        Error::Io(io) => io.to_string(),
        Error::NoItemsFound => "no PEM item of the expected kind in the file".into(),
        other => format!("not valid PEM ({other:?})"),
    }
}

/// The provider both sides use.
pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// The rustls server configuration: `versions` (both when `None`), ALPN `h2` and `http/1.1`, session resumption by
/// tickets and by session ID (see the module docs).
pub fn server_config(identity: Identity, version: Option<Version>) -> Result<Arc<ServerConfig>, String> {
    let versions: &[&'static rustls::SupportedProtocolVersion] = match version {
        None => &[&rustls::version::TLS13, &rustls::version::TLS12],
        Some(Version::Tls12) => &[&rustls::version::TLS12],
        Some(Version::Tls13) => &[&rustls::version::TLS13],
    };
    let builder: ConfigBuilder<ServerConfig, WantsServerCert> = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(versions)
        .map_err(|e| format!("TLS configuration: {e}"))?
        .with_no_client_auth();
    let mut config =
        builder.with_single_cert(identity.chain, identity.key).map_err(|e| format!("TLS certificate and key: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    config.session_storage = ServerSessionMemoryCache::new(SESSION_CACHE);
    config.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new().map_err(|e| format!("TLS session tickets: {e}"))?;
    Ok(Arc::new(config))
}

/// The rustls configuration of HTTP/3: TLS 1.3 (QUIC knows no other), ALPN `h3`, session resumption by
/// tickets as over TCP, and no 0-RTT data (`max_early_data_size` 0, QUIC's other allowed value being
/// unlimited), as over TCP: a request is never answered before the handshake that carries it has completed.
pub fn quic_server_config(identity: &Identity) -> Result<Arc<ServerConfig>, String> {
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| format!("TLS configuration for HTTP/3: {e}"))?
        .with_no_client_auth()
        .with_single_cert(identity.chain.clone(), identity.key.clone_key())
        .map_err(|e| format!("TLS certificate and key: {e}"))?;
    config.alpn_protocols = vec![b"h3".to_vec()];
    config.max_early_data_size = 0;
    config.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new().map_err(|e| format!("TLS session tickets: {e}"))?;
    Ok(Arc::new(config))
}

/// An `axum::serve` listener that accepts TCP connections (counting them in `Stats::connections`, with
/// TCP_NODELAY) and hands each out as a [`TlsConn`] whose handshake runs on first use, its protocol sniffed
/// from the first bytes after the handshake ([`Sniff`]).
pub struct TlsListener {
    tcp: TcpListener,
    config: Arc<ServerConfig>,
    stats: Arc<Stats>,
}

impl TlsListener {
    pub fn new(tcp: TcpListener, config: Arc<ServerConfig>, stats: Arc<Stats>) -> Self {
        TlsListener { tcp, config, stats }
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = Sniff<TlsConn>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Sniff<TlsConn>, SocketAddr) {
        // TcpListener's own Listener impl: retries (and backs off on) accept errors.
        let (tcp, peer) = axum::serve::Listener::accept(&mut self.tcp).await;
        self.stats.connections.fetch_add(1, Ordering::AcqRel);
        let _ = tcp.set_nodelay(true);
        let accept = Box::new(tokio_rustls::TlsAcceptor::from(self.config.clone()).accept(tcp));
        let phase = Phase::Handshake { accept, deadline: Box::pin(tokio::time::sleep(HANDSHAKE_TIMEOUT)) };
        (Sniff::new(TlsConn { phase, peer, stats: self.stats.clone() }, self.stats.clone()), peer)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.tcp.local_addr()
    }
}

enum Phase {
    Handshake { accept: Box<tokio_rustls::Accept<TcpStream>>, deadline: Pin<Box<Sleep>> },
    Ready(Box<tokio_rustls::server::TlsStream<TcpStream>>),
    Failed,
}

/// A server-side TLS connection that completes its handshake on its first read or write (in the task
/// that serves the connection). A completed handshake counts in `Stats::tls_handshakes` (and, when it
/// resumed a session, in `Stats::tls_resumed`); a failed or timed-out one is logged at debug level and
/// ends only this connection.
pub struct TlsConn {
    phase: Phase,
    peer: SocketAddr,
    stats: Arc<Stats>,
}

impl TlsConn {
    fn poll_stream(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<&mut tokio_rustls::server::TlsStream<TcpStream>>> {
        if let Phase::Handshake { accept, deadline } = &mut self.phase {
            let result = match Pin::new(accept.as_mut()).poll(cx) {
                Poll::Ready(r) => r,
                Poll::Pending => {
                    ready!(deadline.as_mut().poll(cx));
                    Err(io::Error::new(io::ErrorKind::TimedOut, "no TLS handshake within the handshake timeout"))
                }
            };
            match result {
                Ok(stream) => {
                    self.stats.tls_handshakes.fetch_add(1, Ordering::AcqRel);
                    if stream.get_ref().1.handshake_kind() == Some(HandshakeKind::Resumed) {
                        self.stats.tls_resumed.fetch_add(1, Ordering::AcqRel);
                    }
                    self.phase = Phase::Ready(Box::new(stream));
                }
                Err(e) => {
                    crate::debug!("TLS handshake with {} failed: {e}", self.peer);
                    self.phase = Phase::Failed;
                    return Poll::Ready(Err(e));
                }
            }
        }
        match &mut self.phase {
            Phase::Ready(stream) => Poll::Ready(Ok(stream)),
            _ => Poll::Ready(Err(io::Error::new(io::ErrorKind::NotConnected, "the TLS handshake failed"))),
        }
    }
}

impl AsyncRead for TlsConn {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let stream = ready!(self.get_mut().poll_stream(cx))?;
        Pin::new(stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for TlsConn {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let stream = ready!(self.get_mut().poll_stream(cx))?;
        Pin::new(stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let stream = ready!(self.get_mut().poll_stream(cx))?;
        Pin::new(stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().phase {
            Phase::Ready(stream) => Pin::new(stream.as_mut()).poll_flush(cx),
            _ => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Before (or after a failed) handshake there is nothing to close but the socket, which dropping does.
        match &mut self.get_mut().phase {
            Phase::Ready(stream) => Pin::new(stream.as_mut()).poll_shutdown(cx),
            _ => Poll::Ready(Ok(())),
        }
    }
}
