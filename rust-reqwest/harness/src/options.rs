//! The contract's flags, the same for every driver, and the clients' options made from them.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::ValueEnum;
use reqwest_bench::{ClientOptions, TlsConfig, TlsSetupError, Trust};

/// `--connection`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Connection {
    /// One client (and keep-alive connection) per worker
    KeepAlive,
    /// A new client (and connection) for every timed request
    New,
}

impl Connection {
    pub fn as_str(self) -> &'static str {
        match self {
            Connection::KeepAlive => "keep-alive",
            Connection::New => "new",
        }
    }
}

/// The contract's flags, identical for every driver (`#[command(flatten)]` them into the driver's own).
#[derive(clap::Args, Debug, Clone)]
pub struct Options {
    /// URL every request goes to (http://host:port/path)
    #[arg(long)]
    pub url: String,
    /// Workers, each with its own client and keep-alive connection
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub workers: u32,
    /// Timed sequential requests per worker
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub requests: u32,
    /// Untimed requests per worker before the timed loop
    #[arg(long, default_value_t = 0)]
    pub warmup: u32,
    /// Per-request timeout, seconds
    #[arg(long, default_value_t = 30.0, value_parser = parse_timeout)]
    pub timeout: f64,
    /// keep-alive: one connection per worker; new: a new client (and connection) for every timed request
    #[arg(long, value_enum, default_value_t = Connection::KeepAlive)]
    pub connection: Connection,
    /// https:// URLs: trust the CA certificates in this PEM file instead of the system's
    #[arg(long, value_name = "PATH", conflicts_with = "insecure")]
    pub ca_file: Option<PathBuf>,
    /// https:// URLs: do not verify the server's certificate (unsafe: for measurements only)
    #[arg(long)]
    pub insecure: bool,
}

impl Options {
    /// `--ca-file` / `--insecure` / the system's roots.
    pub fn trust(&self) -> Trust {
        match (&self.ca_file, self.insecure) {
            (_, true) => Trust::Insecure,
            (Some(path), false) => Trust::CaFile(path.clone()),
            (None, false) => Trust::System,
        }
    }

    /// The URL is `https://`.
    pub fn is_https(&self) -> bool {
        self.url.trim_start().get(..8).is_some_and(|p| p.eq_ignore_ascii_case("https://"))
    }

    /// The clients' options: the timeout, the trust (a CA file is read now), TLS info for `https://`.
    pub fn client_options(&self) -> Result<ClientOptions, TlsSetupError> {
        Ok(ClientOptions {
            tls: TlsConfig::new(&self.trust())?,
            tls_info: self.is_https(),
            ..ClientOptions::new(Duration::from_secs_f64(self.timeout))
        })
    }
}

/// [`Options::client_options`], or the one-line usage error the binary exits with (status 2).
pub fn client_options(prog: &str, o: &Options) -> Result<ClientOptions, ExitCode> {
    o.client_options().map_err(|e| {
        eprintln!("{prog}: error: --ca-file: {e}");
        ExitCode::from(2)
    })
}

fn parse_timeout(text: &str) -> Result<f64, String> {
    let v: f64 = text.parse().map_err(|e| format!("{e}"))?;
    if v <= 0.0 || Duration::try_from_secs_f64(v).is_err() {
        return Err(format!("must be a positive number of seconds, got {text}"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        o: Options,
    }

    #[test]
    fn tls_flags() {
        let parse =
            |args: &[&str]| Cli::try_parse_from([&["driver", "--url", "https://127.0.0.1:1/"][..], args].concat());
        let o = parse(&[]).unwrap().o;
        assert_eq!((o.trust(), o.is_https()), (Trust::System, true));
        assert!(o.client_options().unwrap().tls_info);
        assert_eq!(parse(&["--insecure"]).unwrap().o.trust(), Trust::Insecure);
        assert_eq!(parse(&["--ca-file", "/x.pem"]).unwrap().o.trust(), Trust::CaFile("/x.pem".into()));
        let err = parse(&["--ca-file", "/x.pem", "--insecure"]).err().expect("mutually exclusive");
        assert_eq!(err.kind(), clap::error::ErrorKind::ArgumentConflict);
        let missing = parse(&["--ca-file", "/no/such/ca.pem"]).unwrap().o.client_options().unwrap_err();
        assert!(matches!(missing, TlsSetupError::Io(std::io::ErrorKind::NotFound, _)), "{missing:?}");
        let http = Cli::try_parse_from(["driver", "--url", "http://127.0.0.1:1/"]).unwrap().o;
        assert!(!http.is_https() && !http.client_options().unwrap().tls_info);
    }
}
