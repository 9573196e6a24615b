//! reqwest-loop-turn: an experiment behind docs/cost.md ("A runtime turned by the loop's thread, measured"). N
//! sequential keep-alive GETs through `reqwest_bench::Client`, driven the way an event loop would drive the
//! asyncio binding, from an epoll loop of its own on the main thread:
//!
//! - `handoff` (what `reqwest_client.AsyncClient` does): each request is spawned on a one-worker multi-thread
//!   runtime; its end is queued and a pipe the loop watches is written.
//! - `loop` (the design not built): a current-thread runtime that the loop's thread turns (`block_on` of a future
//!   that yields) when the request starts and whenever tokio's epoll descriptor, registered with the loop, is
//!   readable. tokio does not expose that descriptor: it is found as the one new `eventpoll` in /proc/self/fd.
//!
//! A turn ends with tokio's `epoll_wait(0)` (its scheduler polls the driver before it polls the yielded future
//! again), and what that poll wakes runs only at the next turn: when nothing else makes the loop turn again, the
//! request is stranded. Here the loop waits at most `--fallback-ms` (1 ms) and then turns anyway; the line counts
//! those turns that finished a request ("stranded"). Count syscalls with `strace -f -c` at two request counts
//! (docs/cost.md); against a server that answers later than a turn lasts (`/delay/5`), no request is stranded.
//! Prints one JSON line: mode, requests, stranded, seconds.

use std::collections::HashSet;
use std::future::Future;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use reqwest_bench::{Client, ClientOptions};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mode {
    Handoff,
    Loop,
}

/// N sequential keep-alive GETs, driven from an epoll loop of the main thread (see the file's docs).
#[derive(Parser, Debug)]
#[command(name = "reqwest-loop-turn")]
struct Args {
    #[arg(long, value_enum)]
    mode: Mode,
    /// an http:// URL
    #[arg(long)]
    url: String,
    #[arg(long, default_value_t = 1000)]
    requests: u64,
    /// `loop`: the longest wait of the loop before it turns the runtime anyway, in ms (-1: none; then a stranded
    /// request hangs the probe)
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    fallback_ms: i32,
    /// reqwest's own `Client` instead of this crate's (whose pool limit and idle check add yields of their own)
    #[arg(long)]
    plain: bool,
}

/// One GET, its body read whole: the status.
async fn get(client: &Getter, url: &str) -> u16 {
    match client {
        Getter::Bench(c) => c.get(url).await.map_or(0, |(s, _)| s),
        Getter::Plain(c) => match c.get(url).send().await {
            Ok(r) => {
                let s = r.status().as_u16();
                r.bytes().await.map_or(0, |_| s)
            }
            Err(_) => 0,
        },
    }
}

#[derive(Clone)]
enum Getter {
    Bench(Client),
    Plain(reqwest_bench::reqwest::Client),
}

/// The client, made on `rt` (reqwest registers with the runtime it is made in).
fn client(rt: &tokio::runtime::Runtime, plain: bool) -> Getter {
    let _in = rt.enter();
    if plain {
        Getter::Plain(reqwest_bench::reqwest::Client::builder().timeout(TIMEOUT).build().expect("client"))
    } else {
        Getter::Bench(Client::with_options(&ClientOptions::new(TIMEOUT)).expect("client"))
    }
}

/// A future that yields `n` times through tokio's `yield_now` (which defers its wake-up to the scheduler, so no
/// driver unpark), then is ready.
struct Yields(u32);

impl Future for Yields {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 == 0 {
            return Poll::Ready(());
        }
        self.0 -= 1;
        let mut once = std::pin::pin!(tokio::task::yield_now());
        let _ = once.as_mut().poll(cx);
        Poll::Pending
    }
}

fn epoll_fds() -> HashSet<RawFd> {
    let mut out = HashSet::new();
    for entry in std::fs::read_dir("/proc/self/fd").into_iter().flatten().flatten() {
        if std::fs::read_link(entry.path()).is_ok_and(|t| t.as_os_str() == "anon_inode:[eventpoll]") {
            if let Some(fd) = entry.file_name().to_str().and_then(|s| s.parse().ok()) {
                out.insert(fd);
            }
        }
    }
    out
}

fn fail(what: &str) -> ! {
    eprintln!("reqwest-loop-turn: {what}: {}", std::io::Error::last_os_error());
    std::process::exit(1)
}

/// The loop: an epoll instance and the descriptor it watches.
struct Loop(RawFd);

impl Loop {
    fn new(watched: RawFd) -> Self {
        // SAFETY: plain syscalls on descriptors this process owns; the event is a valid local.
        unsafe {
            let ep = libc::epoll_create1(libc::EPOLL_CLOEXEC);
            if ep < 0 {
                fail("epoll_create1");
            }
            let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: 1 };
            if libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, watched, &mut ev) != 0 {
                fail("epoll_ctl");
            }
            Loop(ep)
        }
    }

    /// Wait for the descriptor, at most `ms` (-1: no limit); whether it was ready.
    fn wait(&self, ms: i32) -> bool {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: one event into a valid local.
        unsafe { libc::epoll_wait(self.0, &mut ev, 1, ms) > 0 }
    }
}

/// A total deadline per request (a timer of tokio's), as the binding's AsyncClient has.
const TIMEOUT: Duration = Duration::from_secs(30);

fn handoff(args: &Args) -> u64 {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime");
    // as bindings/reqwest/src/aio.rs's runtime: a timer that keeps the parked worker's deadline within 1 s, so a
    // request's 30 s deadline registers without waking the driver
    rt.spawn(async {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    let client = client(&rt, args.plain);
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 fills the two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } != 0 {
        fail("pipe2");
    }
    let (read_end, write_end) = (fds[0], fds[1]);
    let ev_loop = Loop::new(read_end);
    let done: Arc<Mutex<Vec<u16>>> = Arc::default();
    for _ in 0..args.requests {
        let (c, url, q) = (client.clone(), args.url.clone(), done.clone());
        rt.spawn(async move {
            let status = get(&c, &url).await;
            let first = {
                let mut q = q.lock().expect("queue");
                q.push(status);
                q.len() == 1
            };
            if first {
                // SAFETY: one byte from a valid buffer into our pipe.
                unsafe { libc::write(write_end, [1u8].as_ptr().cast(), 1) };
            }
        });
        loop {
            ev_loop.wait(-1);
            let mut buf = [0u8; 64];
            // SAFETY: reads into a valid buffer from our non-blocking pipe.
            unsafe { libc::read(read_end, buf.as_mut_ptr().cast(), buf.len()) };
            if let Some(s) = std::mem::take(&mut *done.lock().expect("queue")).pop() {
                assert_eq!(s, 200, "a request failed");
                break;
            }
        }
    }
    0
}

fn turned(args: &Args) -> u64 {
    let before = epoll_fds();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    // tokio's driver and its handle's clone of it: one epoll instance under two descriptors
    let Some(&tokio_fd) = epoll_fds().difference(&before).min() else { fail("no epoll descriptor of tokio's") };
    let client = client(&rt, args.plain);
    // the connection, made by block_on: a new connection strands its connect more often than not (see below)
    assert_eq!(rt.block_on(get(&client, &args.url)), 200, "the first request failed");
    let ev_loop = Loop::new(tokio_fd);
    let done: Arc<Mutex<Option<u16>>> = Arc::default();
    let mut stranded = 0;
    for _ in 0..args.requests {
        let (c, url, q) = (client.clone(), args.url.clone(), done.clone());
        rt.block_on(async move {
            tokio::spawn(async move {
                let status = get(&c, &url).await;
                *q.lock().expect("slot") = Some(status);
            });
            Yields(1).await
        });
        loop {
            if let Some(s) = done.lock().expect("slot").take() {
                assert_eq!(s, 200, "a request failed");
                break;
            }
            let ready = ev_loop.wait(args.fallback_ms);
            rt.block_on(Yields(2));
            if !ready && done.lock().expect("slot").is_some() {
                stranded += 1;
            }
        }
    }
    stranded
}

fn main() {
    let args = Args::parse();
    let start = Instant::now();
    let stranded = match args.mode {
        Mode::Handoff => handoff(&args),
        Mode::Loop => turned(&args),
    };
    println!(
        "{{\"mode\": \"{:?}\", \"requests\": {}, \"stranded\": {stranded}, \"seconds\": {:.3}}}",
        args.mode,
        args.requests,
        start.elapsed().as_secs_f64()
    );
}
