//! The cookie jar of the user-facing request ([`crate::ClientOptions::cookies`]): the `cookie_store` crate
//! (reqwest's own cookie store: RFC 6265 parsing, domain and host-only matching, default path and path
//! matching, `Max-Age` over `Expires`, an expired cookie deleting the stored one), shared by every clone of
//! the client and so by every thread that uses it. Two rules are stricter than the crate's (which follows
//! browsers in treating `http://localhost` and loopback addresses as secure): a `Secure` cookie is sent only
//! over `https://`, and a `Set-Cookie` with `Secure` that arrives over plain `http://` is ignored (RFC 6265bis
//! 5.6). There is no public-suffix list: as in reqwest, a `Domain` that is a public suffix is accepted when the
//! host domain-matches it.
//!
//! Only [`crate::Client::open`] uses it, at every redirect hop; the benchmark path never does.

use std::sync::RwLock;

use cookie_store::{CookieStore, RawCookie};
use reqwest::header::{HeaderMap, HeaderValue, SET_COOKIE};
use reqwest::Url;

/// A client's cookies.
#[derive(Debug, Default)]
pub struct Jar(RwLock<CookieStore>);

impl Jar {
    pub fn new() -> Self {
        Jar::default()
    }

    /// The `Cookie` header for a request to `url` (`None` when no stored cookie applies).
    pub fn header_for(&self, url: &Url) -> Option<HeaderValue> {
        let https = url.scheme() == "https";
        let store = self.0.read().unwrap_or_else(|e| e.into_inner());
        let pairs: Vec<String> = store
            .matches(url)
            .into_iter()
            .filter(|c| https || !c.secure().unwrap_or(false))
            .map(|c| format!("{}={}", c.name(), c.value()))
            .collect();
        if pairs.is_empty() {
            return None;
        }
        HeaderValue::from_str(&pairs.join("; ")).ok()
    }

    /// Store the `Set-Cookie` fields of a response from `url` (a field that does not parse, or is not
    /// allowed for `url`, is ignored, as a browser does).
    pub fn store(&self, headers: &HeaderMap, url: &Url) {
        let https = url.scheme() == "https";
        let mut fields = headers.get_all(SET_COOKIE).iter().peekable();
        if fields.peek().is_none() {
            return;
        }
        let cookies: Vec<RawCookie<'static>> = fields
            .filter_map(|v| std::str::from_utf8(v.as_bytes()).ok())
            .filter_map(|text| RawCookie::parse(text.to_owned()).ok())
            .filter(|c| https || !c.secure().unwrap_or(false))
            .collect();
        let mut store = self.0.write().unwrap_or_else(|e| e.into_inner());
        store.store_response_cookies(cookies.into_iter(), url);
    }

    /// Every `name=value` a request to `url` would send, sorted (for tests).
    pub fn values_for(&self, url: &Url) -> Vec<String> {
        let Some(header) = self.header_for(url) else { return Vec::new() };
        let mut out: Vec<String> = header.to_str().unwrap_or("").split("; ").map(str::to_owned).collect();
        out.sort();
        out
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn set(jar: &Jar, from: &str, fields: &[&str]) {
        let mut h = HeaderMap::new();
        for f in fields {
            h.append(SET_COOKIE, HeaderValue::from_str(f).unwrap());
        }
        jar.store(&h, &url(from));
    }

    /// The cases the Beast binding's jar is tested with too (cpp-beast/tests/test_cookies.cpp).
    #[test]
    fn domain_matching_and_host_only() {
        let jar = Jar::new();
        set(&jar, "http://www.example.test/", &["host=1", "dom=2; Domain=example.test", "dot=3; Domain=.EXAMPLE.test"]);
        assert_eq!(jar.values_for(&url("http://www.example.test/")), ["dom=2", "dot=3", "host=1"]);
        // host-only: not sent to the parent domain or a sibling; domain cookies are
        assert_eq!(jar.values_for(&url("http://example.test/")), ["dom=2", "dot=3"]);
        assert_eq!(jar.values_for(&url("http://a.b.example.test/")), ["dom=2", "dot=3"]);
        assert!(jar.values_for(&url("http://badexample.test/")).is_empty());
        assert!(jar.values_for(&url("http://example.other/")).is_empty());
        // a Domain the host does not domain-match is ignored
        set(
            &jar,
            "http://www.example.test/",
            &["foreign=1; Domain=other.test", "sub=1; Domain=deeper.www.example.test"],
        );
        assert!(jar.values_for(&url("http://other.test/")).is_empty());
        assert!(jar.values_for(&url("http://deeper.www.example.test/")).iter().all(|v| v != "sub=1"));
        // IP addresses: host-only, and a Domain attribute other than the address itself is ignored
        set(&jar, "http://127.0.0.1/", &["ip=1", "ipdom=1; Domain=0.0.1"]);
        assert_eq!(jar.values_for(&url("http://127.0.0.1:8080/")), ["ip=1"]);
        assert!(jar.values_for(&url("http://localhost/")).is_empty());
    }

    #[test]
    fn path_matching_and_default_path() {
        let jar = Jar::new();
        set(&jar, "http://h.test/dir/page", &["def=1", "root=1; Path=/", "acc=1; Path=/acc", "rel=1; Path=rel"]);
        assert_eq!(jar.values_for(&url("http://h.test/dir/page")), ["def=1", "rel=1", "root=1"]);
        assert_eq!(jar.values_for(&url("http://h.test/dir")), ["def=1", "rel=1", "root=1"]);
        assert_eq!(jar.values_for(&url("http://h.test/dir/x/y")), ["def=1", "rel=1", "root=1"]);
        assert_eq!(jar.values_for(&url("http://h.test/directory")), ["root=1"]);
        assert_eq!(jar.values_for(&url("http://h.test/acc/x")), ["acc=1", "root=1"]);
        assert_eq!(jar.values_for(&url("http://h.test/accounts")), ["root=1"]);
        assert_eq!(jar.values_for(&url("http://h.test/")), ["root=1"]);
    }

    #[test]
    fn secure_cookies_only_over_https() {
        let jar = Jar::new();
        set(&jar, "https://h.test/", &["s=1; Secure", "p=1"]);
        assert_eq!(jar.values_for(&url("https://h.test/")), ["p=1", "s=1"]);
        assert_eq!(jar.values_for(&url("http://h.test/")), ["p=1"]);
        assert_eq!(jar.values_for(&url("http://localhost/")), Vec::<String>::new());
        // a Secure cookie that arrives over http is ignored, on loopback too
        set(&jar, "http://127.0.0.1/", &["s2=1; Secure"]);
        assert!(jar.values_for(&url("https://127.0.0.1/")).is_empty());
    }

    #[test]
    fn expiry_replacement_and_deletion() {
        let jar = Jar::new();
        let from = "http://h.test/";
        set(&jar, from, &["a=1", "b=1; Max-Age=3600", "c=1; Expires=Wed, 01 Jan 2200 00:00:00 GMT", "d=1"]);
        assert_eq!(jar.values_for(&url(from)), ["a=1", "b=1", "c=1", "d=1"]);
        set(&jar, from, &["a=2"]); // replaced (same name, domain, path)
        set(&jar, from, &["b=x; Max-Age=0", "c=x; Expires=Thu, 01 Jan 1970 00:00:00 GMT", "d=x; Max-Age=-1"]);
        assert_eq!(jar.values_for(&url(from)), ["a=2"]);
        // Max-Age wins over Expires
        set(&jar, from, &["e=1; Max-Age=3600; Expires=Thu, 01 Jan 1970 00:00:00 GMT"]);
        set(&jar, from, &["f=1; Max-Age=0; Expires=Wed, 01 Jan 2200 00:00:00 GMT"]);
        assert_eq!(jar.values_for(&url(from)), ["a=2", "e=1"]);
        // another path is another cookie
        set(&jar, from, &["a=3; Path=/p"]);
        assert_eq!(jar.values_for(&url("http://h.test/p")), ["a=2", "a=3", "e=1"]);
        // unparsable fields are ignored
        set(&jar, from, &["", "=novalue", "noequals"]);
        assert_eq!(jar.values_for(&url(from)), ["a=2", "e=1"]);
    }
}
