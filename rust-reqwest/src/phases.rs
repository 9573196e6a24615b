//! The phases of a request (the driver contract's `--phases`, `clientbench.raw/4`: docs/raw-format.md), as far
//! as reqwest lets a client see them, and off unless a request asks ([`record`]).
//!
//! * `connect+tls`: the connector's time (TCP connect and TLS handshake together: reqwest's connector does both
//!   in one future and says nothing in between), timed by a layer on it ([`ConnectTiming`], reqwest's
//!   `ClientBuilder::connector_layer`, on a client built with [`crate::ClientOptions::phases`]). When the URL's
//!   host is a name, resolving it is in that future too: the key is then `dns+connect+tls`. 0 when the request
//!   went on a pooled connection. Through a proxy it is the connection to the proxy (and its tunnel).
//! * `send+wait`: from the request handed to reqwest (`send()`) to its response head, minus the `connect+tls`
//!   inside it. reqwest (hyper) tells when the head was parsed, not when the request was written nor when the
//!   first byte came: the writing, the server's time and the head's reading are one span. Our own steps before
//!   `send()` (the per-origin turn of [`crate::limit`], the runtime's catch-up) are not in it (the runner's
//!   `own`).
//! * `receive`: from the response head to the body's last byte read.
//!
//! Over HTTP/3 reqwest's QUIC connector is not layered: the QUIC handshake (and the name's resolution) is inside
//! `send()`, so the first key is `connect+tls+send+wait` (or `dns+connect+tls+send+wait`), the merged span, never
//! split by estimate ([`Layout`]).
//!
//! How a request's times reach it: [`record`] runs the request in a task-local tally, which reqwest's `send()`
//! (wrapped by [`exchange`]) and the connector layer add to. hyper-util polls the connection it opens for a
//! request inside that request's future, so the layer sees the tally; a connection a request started but did
//! not use (a pooled one came free first) finishes in a task of its own and adds nothing. Without [`record`]
//! nothing reads the clock: [`exchange`] and the layer look the tally up (a thread-local access) and find none.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use reqwest::Url;

/// What the request's exchanges and connections added up to so far.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    /// The connector's time of the connections this request opened, ns.
    connect: u64,
    /// The time inside reqwest's `send()` of every exchange (a redirect's hops, a re-sent request), ns.
    exchange: u64,
    /// When the last exchange got its response head.
    head: Option<Instant>,
    /// An exchange went to a host that is a name (a connection to it resolves the name).
    dns: bool,
    /// An exchange went over HTTP/3.
    quic: bool,
}

tokio::task_local! {
    static TALLY: Cell<Tally>;
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Which phases a request's times are split into: the keys of [`Phases::entries`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Layout {
    /// The host is a name: a new connection's time includes resolving it (`dns+`).
    pub dns: bool,
    /// HTTP/3: the QUIC handshake is inside `send()` (`connect+tls+send+wait`).
    pub quic: bool,
}

/// Every key a [`Layout`] can have, in the contract's order (dns, connect, tls, send, wait, receive).
pub const ALL_KEYS: [&str; 6] =
    ["dns+connect+tls+send+wait", "dns+connect+tls", "connect+tls+send+wait", "connect+tls", "send+wait", "receive"];

impl Layout {
    /// The layout of a request to `url` by a client with (`http3`) or without HTTP/3.
    pub fn of(url: &Url, http3: bool) -> Layout {
        Layout { dns: url.domain().is_some(), quic: http3 }
    }

    /// Its keys, in the contract's order.
    pub fn keys(self) -> &'static [&'static str] {
        match (self.quic, self.dns) {
            (false, false) => &["connect+tls", "send+wait", "receive"],
            (false, true) => &["dns+connect+tls", "send+wait", "receive"],
            (true, false) => &["connect+tls+send+wait", "receive"],
            (true, true) => &["dns+connect+tls+send+wait", "receive"],
        }
    }

    /// The layout whose keys hold the phases of requests of any of `layouts`: a run that resolves a name for some of
    /// its URLs and not for others says `dns+connect+tls` for all (the key of a phase appears once in a document:
    /// docs/raw-format.md). `None` for no layout at all.
    pub fn covering(layouts: impl IntoIterator<Item = Layout>) -> Option<Layout> {
        layouts.into_iter().reduce(|a, b| Layout { dns: a.dns || b.dns, quic: a.quic || b.quic })
    }
}

/// The phases of one request, in ns (see the module docs for what each spans).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Phases {
    /// The connector's time (DNS when the host is a name, TCP connect, TLS handshake) of the connections the
    /// request opened; 0 when it went on a pooled one, and always over HTTP/3 (inside `send_wait` there).
    pub connect: u64,
    /// reqwest's `send()` until the response head, minus `connect`.
    pub send_wait: u64,
    /// The response head to the body's last byte read.
    pub receive: u64,
    /// Which keys these times go under.
    pub layout: Layout,
}

impl Phases {
    /// The same times under `layout`'s keys, when they hold them ([`Layout::covering`]: a connection's time of a
    /// request to an address under `dns+connect+tls`, its name resolution being none); else unchanged (a resolution's
    /// time is never put under a key without `dns`, nor a QUIC handshake under one without `send+wait`).
    pub fn within(self, layout: Layout) -> Phases {
        let covers = (layout.dns || !self.layout.dns) && layout.quic == self.layout.quic;
        if covers {
            Phases { layout, ..self }
        } else {
            self
        }
    }

    /// `(key, ns)` in the contract's order: `[connect+tls, send+wait, receive]` (`dns+` first when the host is a
    /// name), or over HTTP/3 `[connect+tls+send+wait, receive]`.
    pub fn entries(&self) -> impl Iterator<Item = (&'static str, u64)> {
        let values = if self.layout.quic {
            [self.connect.saturating_add(self.send_wait), self.receive, 0]
        } else {
            [self.connect, self.send_wait, self.receive]
        };
        self.layout.keys().iter().copied().zip(values)
    }
}

/// Run `fut`, one request (its exchanges and the reading of its body: it ends when the body has been read),
/// recording its phases. The phases are all 0 when no exchange got a response head (a failed request: the
/// contract counts only the successful ones). The clock is read at the start and end of each exchange, at the
/// start and end of each connection opened, and once when `fut` ends.
pub async fn record<F: Future>(fut: F) -> (F::Output, Phases) {
    TALLY
        .scope(Cell::new(Tally::default()), async move {
            let out = fut.await;
            let end = Instant::now();
            let t = TALLY.with(Cell::get);
            let phases = match t.head {
                None => Phases::default(),
                Some(head) => Phases {
                    connect: t.connect,
                    send_wait: t.exchange.saturating_sub(t.connect),
                    receive: ns(end.saturating_duration_since(head)),
                    layout: Layout { dns: t.dns, quic: t.quic },
                },
            };
            (out, phases)
        })
        .await
}

/// One exchange of a request (reqwest's `send()` to `url`, `quic` over HTTP/3): timed only inside [`record`].
pub(crate) async fn exchange<F: Future>(url: &Url, quic: bool, fut: F) -> F::Output {
    let Ok(started) = TALLY.try_with(|_| Instant::now()) else { return fut.await };
    let out = fut.await;
    let head = Instant::now();
    let dns = url.domain().is_some();
    let _ = TALLY.try_with(|c| {
        let mut t = c.get();
        t.exchange = t.exchange.saturating_add(ns(head.saturating_duration_since(started)));
        t.head = Some(head);
        t.dns |= dns;
        t.quic |= quic;
        c.set(t);
    });
    out
}

/// The connector layer of a client built with [`crate::ClientOptions::phases`]: times each connection it opens
/// for a request inside [`record`] (and reads no clock for any other).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ConnectTiming;

impl<S> tower_layer::Layer<S> for ConnectTiming {
    type Service = TimedConnector<S>;

    fn layer(&self, inner: S) -> TimedConnector<S> {
        TimedConnector(inner)
    }
}

/// reqwest's connector, timed ([`ConnectTiming`]).
#[derive(Clone, Debug)]
pub(crate) struct TimedConnector<S>(S);

impl<S, R> tower_service::Service<R> for TimedConnector<S>
where
    S: tower_service::Service<R>,
    S::Future: Unpin,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = TimedConnect<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, dst: R) -> TimedConnect<S::Future> {
        // hyper-util calls the connector when it first polls the request's connection future, in the request's
        // task: a request inside `record` has its tally here
        let started = TALLY.try_with(|_| Instant::now()).ok();
        TimedConnect { inner: self.0.call(dst), started }
    }
}

/// A connection being opened, timed when a request inside [`record`] opened it.
pub(crate) struct TimedConnect<F> {
    inner: F,
    started: Option<Instant>,
}

impl<F: Future + Unpin> Future for TimedConnect<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let out = std::task::ready!(Pin::new(&mut self.inner).poll(cx));
        if let Some(started) = self.started.take() {
            let spent = ns(started.elapsed());
            // finished in another task (the request took a pooled connection first): not this request's time
            let _ = TALLY.try_with(|c| {
                let mut t = c.get();
                t.connect = t.connect.saturating_add(spent);
                c.set(t);
            });
        }
        Poll::Ready(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_layout_in_the_contracts_order() {
        let url = |s: &str| Url::parse(s).unwrap();
        assert_eq!(Layout::of(&url("https://127.0.0.1:1/"), false).keys(), ["connect+tls", "send+wait", "receive"]);
        assert_eq!(Layout::of(&url("http://[::1]:1/"), false), Layout { dns: false, quic: false });
        assert_eq!(Layout::of(&url("https://localhost:1/"), false).keys()[0], "dns+connect+tls");
        assert_eq!(Layout::of(&url("https://127.0.0.1:1/"), true).keys(), ["connect+tls+send+wait", "receive"]);
        let named = Layout { dns: true, quic: false };
        assert_eq!(Layout::covering([Layout::default(), named, Layout::default()]), Some(named));
        assert_eq!(Layout::covering([]), None);
        let p = Phases { connect: 3, send_wait: 5, receive: 7, layout: Layout::default() };
        assert_eq!(p.entries().collect::<Vec<_>>(), [("connect+tls", 3), ("send+wait", 5), ("receive", 7)]);
        let q = Phases { layout: Layout { dns: false, quic: true }, ..p };
        assert_eq!(q.entries().collect::<Vec<_>>(), [("connect+tls+send+wait", 8), ("receive", 7)]);
        // an address's request in a run that also resolves names: under dns+connect+tls; never the other way
        assert_eq!(p.within(named).entries().next(), Some(("dns+connect+tls", 3)));
        let resolved = Phases { layout: named, ..p };
        assert_eq!(resolved.within(Layout::default()), resolved);
        assert_eq!(q.within(Layout::default()), q);
    }

    /// A connector that takes its time.
    #[derive(Clone)]
    struct Slow(Duration);

    impl tower_service::Service<()> for Slow {
        type Response = ();
        type Error = std::convert::Infallible;
        type Future = Pin<Box<dyn Future<Output = Result<(), Self::Error>> + Send>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, (): ()) -> Self::Future {
            let d = self.0;
            Box::pin(async move {
                tokio::time::sleep(d).await;
                Ok(())
            })
        }
    }

    /// Inside `record`, the exchange, a connection opened in it (taken out of the exchange's time) and the body
    /// after it are timed; a connection that ends in another task is not the request's; outside, nothing is.
    #[tokio::test]
    async fn a_request_adds_up_its_exchange_connection_and_body() {
        use tower_layer::Layer;
        use tower_service::Service;
        let ms = Duration::from_millis;
        let url = Url::parse("https://localhost:1/").unwrap();
        exchange(&url, false, tokio::time::sleep(ms(1))).await;
        assert!(TALLY.try_with(|_| ()).is_err(), "outside record: no tally");
        let mut connector = ConnectTiming.layer(Slow(ms(20)));
        let started = Instant::now();
        let ((), p) = record(async {
            exchange(&url, false, async {
                connector.call(()).await.unwrap();
                tokio::time::sleep(ms(10)).await;
            })
            .await;
            tokio::time::sleep(ms(15)).await; // the body
        })
        .await;
        let wall = ns(started.elapsed());
        assert!(p.connect >= ns(ms(20)) && p.send_wait >= ns(ms(10)) && p.receive >= ns(ms(15)), "{p:?}");
        // the connection's time is counted once: the phases fit in the request's time
        assert!(p.connect + p.send_wait + p.receive <= wall, "{p:?} in {wall} ns");
        assert_eq!(p.layout, Layout { dns: true, quic: false });
        let ((), q) = record(async {
            let connecting = connector.call(());
            exchange(&url, true, async { tokio::spawn(connecting).await.unwrap().unwrap() }).await;
        })
        .await;
        assert_eq!((q.connect, q.layout.quic), (0, true), "{q:?}");
        assert!(q.send_wait >= ns(ms(20)), "{q:?}");
        let ((), none) = record(async {}).await;
        assert_eq!(none, Phases::default(), "no exchange: nothing to split");
    }
}
