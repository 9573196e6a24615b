//! HTTPS: how a client checks the server's certificate ([`TlsConfig`]: the system's roots, a CA bundle file,
//! or no verification) and the rustls configuration every client is built with.
//!
//! **Choices.** rustls with the **aws-lc-rs** crypto provider, reqwest's and rustls's own default: on the
//! project's 2-core machine a full handshake (client + server, in memory, CPU time, median of 3 runs) took
//! 453 µs with aws-lc-rs vs 499 µs with ring for TLS 1.3 and 393 vs 483 µs for TLS 1.2, the cost the
//! `--connection new` rows measure, for 2.2 MB more binary and about two minutes more clean build (aws-lc-sys
//! compiles C). The system's roots come through **rustls-platform-verifier** (what reqwest itself uses: the
//! OS store, i.e. /etc/ssl/certs or `SSL_CERT_FILE` on Linux, the OS verifier on macOS and Windows), not
//! webpki-roots (a compiled-in copy of Mozilla's list, free to load but blind to the machine's own trust
//! settings); loading the 145 system roots took 10–17 ms here, so they are loaded once per process, at the
//! first certificate that needs them ([`TlsConfig::system`]), never for plain `http://`.
//!
//! Key exchange X25519 first (rustls's `prefer-post-quantum` is off, as OpenSSL 3.0 in Debian 12 offers no
//! ML-KEM either), TLS 1.2 and 1.3, ALPN `http/1.1`. Each client has its own TLS session cache (rustls's
//! in-memory default, tickets and session IDs), so its later connections to a server resume the session,
//! but two clients never share one.
//!
//! **QUIC only when asked.** With its `http3` feature, reqwest gives every client it builds inside a tokio
//! runtime a QUIC endpoint, HTTP/3 asked for or not: a UDP socket (and a second one, closed again, to probe
//! for GRO), a task, and quinn's receive buffer (128 MiB of address space where the kernel has UDP GRO).
//! Building a client took 70-120 µs instead of 4-8 µs here, and held one more file descriptor: the cost a
//! `--connection new` row of HTTP/1.1 or 2 would have paid per request. reqwest skips the endpoint when the
//! client's rustls configuration cannot do QUIC, so a client without HTTP/3 is configured
//! ([`TlsConfig::rustls_config`]) from [`tcp_provider`]: the same cipher suites, minus their QUIC keys, which
//! TLS over TCP never uses. A client with HTTP/3 gets [`TlsConfig::quic_config`].

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{CipherSuiteCommon, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme, SupportedCipherSuite, Tls13CipherSuite};

/// The crypto provider of every client (built once).
pub fn provider() -> Arc<CryptoProvider> {
    static PROVIDER: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    PROVIDER.get_or_init(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider())).clone()
}

/// How `https://` servers are checked, as the user says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trust {
    /// The system's root certificates (the default).
    System,
    /// Only the CA certificates in this PEM file.
    CaFile(PathBuf),
    /// No verification of the certificate at all (unsafe: for measurements only).
    Insecure,
}

/// The provider of connections over TCP: [`provider`]'s cipher suites without their QUIC keys (rustls's
/// `Tls13CipherSuite::quic`: `None` opts a suite out of QUIC), so that reqwest makes no QUIC endpoint for a
/// client configured with it (see the module docs). TLS over TCP is unchanged: the same suites, in the same
/// order, with the same key schedule and record protection. Built once per process (the suites live as
/// long).
pub fn tcp_provider() -> Arc<CryptoProvider> {
    static TCP: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    TCP.get_or_init(|| {
        let mut p = (*provider()).clone();
        for suite in &mut p.cipher_suites {
            if let SupportedCipherSuite::Tls13(s) = *suite {
                let common = CipherSuiteCommon {
                    suite: s.common.suite,
                    hash_provider: s.common.hash_provider,
                    confidentiality_limit: s.common.confidentiality_limit,
                };
                let tcp_only =
                    Tls13CipherSuite { common, hkdf_provider: s.hkdf_provider, aead_alg: s.aead_alg, quic: None };
                *suite = SupportedCipherSuite::Tls13(Box::leak(Box::new(tcp_only)));
            }
        }
        Arc::new(p)
    })
    .clone()
}

/// A [`Trust`] made ready for clients: cheap to clone, shared by every client made with it.
#[derive(Clone)]
pub struct TlsConfig {
    templates: Arc<Templates>,
    trust: Trust,
}

/// The rustls configurations every client starts from: over TCP ([`TlsConfig::rustls_config`]), and for
/// HTTP/3 ([`TlsConfig::quic_config`], made at the first client that asks for it).
struct Templates {
    tcp: rustls::ClientConfig,
    quic: OnceLock<rustls::ClientConfig>,
    verifier: Arc<dyn ServerCertVerifier>,
}

impl fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConfig").field("trust", &self.trust).finish()
    }
}

impl Default for TlsConfig {
    fn default() -> Self {
        TlsConfig::system()
    }
}

/// Why a CA file cannot be used: it cannot be read (`Io`, with the OS's error kind: `NotFound`,
/// `PermissionDenied`, ...) or holds no usable certificate (`Invalid`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsSetupError {
    Io(io::ErrorKind, String),
    Invalid(String),
}

impl fmt::Display for TlsSetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlsSetupError::Io(_, m) | TlsSetupError::Invalid(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for TlsSetupError {}

impl TlsConfig {
    /// Ready `trust` (reads and parses a CA file now).
    pub fn new(trust: &Trust) -> Result<TlsConfig, TlsSetupError> {
        match trust {
            Trust::System => Ok(TlsConfig::system()),
            Trust::CaFile(path) => TlsConfig::ca_file(path),
            Trust::Insecure => Ok(TlsConfig::insecure()),
        }
    }

    /// The system's roots (rustls-platform-verifier), loaded once per process when the first server
    /// certificate is checked: a client that never speaks `https://` never loads them. A machine without
    /// any system root fails each `https://` request with a TLS error, not the client's construction.
    pub fn system() -> TlsConfig {
        static SYSTEM: OnceLock<Arc<SystemVerifier>> = OnceLock::new();
        let verifier = SYSTEM.get_or_init(|| Arc::new(SystemVerifier { inner: OnceLock::new() })).clone();
        TlsConfig::with_verifier(verifier, Trust::System)
    }

    /// Trust exactly the CA certificates in the PEM file at `path` (not the system's). Certificates that
    /// cannot serve as trust anchors are skipped; a file with none, or that is not PEM, is `Invalid`.
    pub fn ca_file(path: &Path) -> Result<TlsConfig, TlsSetupError> {
        let shown = path.display();
        let certs: Vec<CertificateDer<'static>> = match CertificateDer::pem_file_iter(path) {
            Ok(iter) => iter.collect::<Result<_, _>>(),
            Err(e) => Err(e),
        }
        .map_err(|e| match e {
            rustls::pki_types::pem::Error::Io(io) => {
                TlsSetupError::Io(io.kind(), format!("cannot read the CA file {shown}: {io}"))
            }
            other => TlsSetupError::Invalid(format!("the CA file {shown} is not valid PEM: {other:?}")),
        })?;
        let mut roots = RootCertStore::empty();
        let (added, _skipped) = roots.add_parsable_certificates(certs);
        if added == 0 {
            return Err(TlsSetupError::Invalid(format!("the CA file {shown} holds no usable CA certificate")));
        }
        let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
            .build()
            .map_err(|e| TlsSetupError::Invalid(format!("the CA file {shown}: {e}")))?;
        Ok(TlsConfig::with_verifier(verifier, Trust::CaFile(path.to_path_buf())))
    }

    /// Accept any certificate: expired, self-signed, for another name (like curl's `--insecure` or
    /// requests' `verify=False`). The handshake's signature is still checked against the certificate's
    /// key, as OpenSSL does with `SSL_VERIFY_NONE`. Unsafe: anybody in the path can read and change the
    /// traffic. For measurements only.
    pub fn insecure() -> TlsConfig {
        TlsConfig::with_verifier(Arc::new(NoVerification), Trust::Insecure)
    }

    pub fn trust(&self) -> &Trust {
        &self.trust
    }

    fn with_verifier(verifier: Arc<dyn ServerCertVerifier>, trust: Trust) -> TlsConfig {
        let tcp = client_config(tcp_provider(), verifier.clone());
        TlsConfig { templates: Arc::new(Templates { tcp, quic: OnceLock::new(), verifier }), trust }
    }

    /// A new rustls configuration for one client over TCP: this trust, TLS 1.2 and 1.3, ALPN http/1.1, no QUIC
    /// ([`tcp_provider`]), and a session cache of its own (rustls's default: up to 256 sessions, tickets and
    /// session IDs). A copy of a template made once (building it anew for each client cost about twice as
    /// many instructions, which `--connection new` pays inside the timed loop).
    pub fn rustls_config(&self) -> rustls::ClientConfig {
        let mut config = self.templates.tcp.clone();
        config.resumption = rustls::client::Resumption::default();
        config
    }

    /// [`TlsConfig::rustls_config`] for a client with HTTP/3: the same, with [`provider`]'s QUIC keys (reqwest
    /// sets ALPN `h3` on its QUIC copy; QUIC negotiates TLS 1.3 only).
    pub fn quic_config(&self) -> rustls::ClientConfig {
        let t = &self.templates;
        let mut config = t.quic.get_or_init(|| client_config(provider(), t.verifier.clone())).clone();
        config.resumption = rustls::client::Resumption::default();
        config
    }
}

/// The rustls configuration of every client with `verifier`: TLS 1.2 and 1.3, ALPN http/1.1.
fn client_config(provider: Arc<CryptoProvider>, verifier: Arc<dyn ServerCertVerifier>) -> rustls::ClientConfig {
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("the aws-lc-rs provider supports TLS 1.2 and 1.3")
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config
}

fn signature_schemes() -> Vec<SignatureScheme> {
    provider().signature_verification_algorithms.supported_schemes()
}

fn tls12_signature(message: &[u8], cert: &CertificateDer<'_>, dss: &DigitallySignedStruct) -> SigResult {
    rustls::crypto::verify_tls12_signature(message, cert, dss, &provider().signature_verification_algorithms)
}

fn tls13_signature(message: &[u8], cert: &CertificateDer<'_>, dss: &DigitallySignedStruct) -> SigResult {
    rustls::crypto::verify_tls13_signature(message, cert, dss, &provider().signature_verification_algorithms)
}

type SigResult = Result<HandshakeSignatureValid, rustls::Error>;

/// The system's roots, loaded at the first certificate to check (then kept for the process).
#[derive(Debug)]
struct SystemVerifier {
    inner: OnceLock<Result<Arc<rustls_platform_verifier::Verifier>, rustls::Error>>,
}

impl SystemVerifier {
    fn get(&self) -> Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        match self.inner.get_or_init(|| rustls_platform_verifier::Verifier::new(provider()).map(Arc::new)) {
            Ok(v) => Ok(v),
            Err(e) => Err(e.clone()),
        }
    }
}

impl ServerCertVerifier for SystemVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.get()?.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> SigResult {
        tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> SigResult {
        tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        signature_schemes()
    }
}

/// `--insecure` / `verify=False`: every certificate is accepted; handshake signatures are still checked.
#[derive(Debug)]
struct NoVerification;

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> SigResult {
        tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> SigResult {
        tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        signature_schemes()
    }
}

const VERSIONS: [(reqwest::tls::Version, &str); 4] = [
    (reqwest::tls::Version::TLS_1_0, "TLSv1"),
    (reqwest::tls::Version::TLS_1_1, "TLSv1.1"),
    (reqwest::tls::Version::TLS_1_2, "TLSv1.2"),
    (reqwest::tls::Version::TLS_1_3, "TLSv1.3"),
];

/// A negotiated TLS version (reqwest's `TlsInfo`) as a small number for an atomic: 1 + its index in
/// [`VERSIONS`] (0: none).
pub(crate) fn version_code(version: reqwest::tls::Version) -> u8 {
    VERSIONS.iter().position(|(v, _)| *v == version).map_or(0, |i| i as u8 + 1)
}

/// [`version_code`]'s version as OpenSSL names it (`TLSv1.2`, `TLSv1.3`).
pub(crate) fn version_name(code: u8) -> Option<&'static str> {
    VERSIONS.get(usize::from(code).checked_sub(1)?).map(|(_, name)| *name)
}
