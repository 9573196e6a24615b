//! reqwest clients of one HTTP version for the suites that compare the protocols (`h3.rs`, `h3_flags.rs`).

use reqwest::{Method, Version};

use super::{Server, TIMEOUT};

pub fn ca(server: &Server) -> reqwest::Certificate {
    let file = server.ca_file.clone().flatten().expect("the generated CA");
    reqwest::Certificate::from_pem(&std::fs::read(file).unwrap()).unwrap()
}

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Http {
    One,
    Two,
    Three,
}

/// A reqwest client of one protocol trusting the server's CA: HTTP/2 by ALPN, HTTP/3 with prior knowledge (the
/// server sends no Alt-Svc), which reqwest 0.13 uses for the requests that ask for version HTTP/3.
#[derive(Clone)]
pub struct Client {
    pub inner: reqwest::Client,
    pub http: Http,
}

impl Client {
    pub fn request(&self, method: Method, url: impl reqwest::IntoUrl) -> reqwest::RequestBuilder {
        let request = self.inner.request(method, url);
        match self.http {
            Http::Three => request.version(Version::HTTP_3),
            _ => request,
        }
    }

    pub fn get(&self, url: impl reqwest::IntoUrl) -> reqwest::RequestBuilder {
        self.request(Method::GET, url)
    }

    pub fn post(&self, url: impl reqwest::IntoUrl) -> reqwest::RequestBuilder {
        self.request(Method::POST, url)
    }

    pub fn put(&self, url: impl reqwest::IntoUrl) -> reqwest::RequestBuilder {
        self.request(Method::PUT, url)
    }
}

pub fn client(server: &Server, http: Http) -> Client {
    client_trusting(vec![ca(server)], http)
}

pub fn client_trusting(roots: Vec<reqwest::Certificate>, http: Http) -> Client {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let b = reqwest::Client::builder().tls_certs_only(roots).no_proxy().timeout(TIMEOUT);
    let inner = match http {
        Http::One => b.http1_only(),
        Http::Two => b,
        Http::Three => b.http3_prior_knowledge(),
    };
    Client { inner: inner.build().unwrap(), http }
}

/// 127.0.0.1, not localhost: reqwest's HTTP/3 would try ::1 first, where nothing listens.
pub fn url(server: &Server, path: &str) -> String {
    format!("https://127.0.0.1:{}{path}", server.addr.port())
}
