//! `udp-relay --upstream HOST:PORT [--listen ADDR] [--delay-ms D] [--jitter-ms J] [--loss PCT] [--seed S]`
//!
//! Relays UDP datagrams between clients and one upstream (the server's QUIC port), each way through a delay
//! line: a datagram is dropped with probability PCT %, else sent D ms (plus a uniform draw in [-J, J], never
//! below 0) after it arrived, and never before the datagram ahead of it (no reordering: QUIC's loss detection
//! would read a reordered packet as lost). Every client address gets its own upstream socket, so the server
//! sees one peer per client, as it would without the relay. The kernel here has no netem qdisc; toxiproxy
//! relays TCP only.
//!
//! Prints `{"event":"listening","addr":"127.0.0.1:P"}` on stdout once it receives; on SIGTERM or SIGINT it
//! prints its counts on stderr and exits 0.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::error::ErrorKind;
use clap::Parser;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Condvar;
use std::time::Instant;

use tokio::net::UdpSocket;

/// The largest datagram relayed (the largest a UDP datagram can be).
const MAX_DATAGRAM: usize = 65_535;
/// A client silent this long in both directions is forgotten, and its upstream socket closed.
const IDLE: Duration = Duration::from_secs(30);
/// The longest delay or jitter accepted (ms): a relay for benchmarks, not for satellite links.
const MAX_MS: f64 = 10_000.0;

#[derive(Parser, Debug)]
#[command(version, about = "Relay UDP datagrams with a delay and a loss rate (clientbench --network over QUIC)")]
struct Args {
    /// where clients send their datagrams
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// where the relay sends them (the server's UDP port)
    #[arg(long)]
    upstream: SocketAddr,
    /// one-way delay added in each direction, in ms (fractions allowed)
    #[arg(long, default_value_t = 0.0, value_parser = milliseconds)]
    delay_ms: f64,
    /// a uniform draw in [-J, J] ms added to each datagram's delay (never below 0)
    #[arg(long, default_value_t = 0.0, value_parser = milliseconds)]
    jitter_ms: f64,
    /// the share of datagrams dropped in each direction, in percent
    #[arg(long, default_value_t = 0.0, value_parser = percent)]
    loss: f64,
    /// the seed of the loss and jitter draws
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn milliseconds(text: &str) -> Result<f64, String> {
    let value: f64 = text.parse().map_err(|_| format!("expected a number of ms, got {text:?}"))?;
    if !(0.0..=MAX_MS).contains(&value) {
        return Err(format!("must be within 0 and {MAX_MS} ms, got {text}"));
    }
    Ok(value)
}

fn percent(text: &str) -> Result<f64, String> {
    let value: f64 = text.parse().map_err(|_| format!("expected a percentage, got {text:?}"))?;
    if !(0.0..100.0).contains(&value) {
        return Err(format!("must be at least 0 and below 100, got {text}"));
    }
    Ok(value)
}

/// What the relay did, per direction (client to upstream, upstream to client).
#[derive(Default)]
struct Counts {
    sent: [AtomicU64; 2],
    dropped: [AtomicU64; 2],
}

/// One direction's conditions and draws.
struct Conditions {
    delay: Duration,
    jitter_ms: f64,
    loss: f64,
    rng: ChaCha8Rng,
}

impl Conditions {
    fn new(args: &Args, stream: u64) -> Self {
        Conditions {
            delay: Duration::from_secs_f64(args.delay_ms / 1e3),
            jitter_ms: args.jitter_ms,
            loss: args.loss / 100.0,
            rng: ChaCha8Rng::seed_from_u64(args.seed.wrapping_add(stream)),
        }
    }

    /// None: dropped; else how long this datagram waits.
    fn draw(&mut self) -> Option<Duration> {
        if self.loss > 0.0 && self.rng.random_bool(self.loss) {
            return None;
        }
        if self.jitter_ms == 0.0 {
            return Some(self.delay);
        }
        let extra = self.rng.random_range(-self.jitter_ms..=self.jitter_ms);
        Some(Duration::from_secs_f64((self.delay.as_secs_f64() + extra / 1e3).max(0.0)))
    }
}

/// A datagram waiting for its due time.
struct Due {
    at: Instant,
    seq: u64,
    socket: Arc<std::net::UdpSocket>,
    to: Option<SocketAddr>,
    datagram: Vec<u8>,
}

impl PartialEq for Due {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Due {}
impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Due {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// Every datagram of both directions waits here, in one thread that sleeps until the earliest is due: a
/// condition variable's timed wait wakes within tens of µs, where tokio's timer rounds up to whole ms (a
/// 0.5 ms delay would become 1 to 2). It sends through plain sockets (duplicates of the tokio ones'): a tokio
/// socket's try_send outside its runtime answers WouldBlock until its reactor has seen it writable.
#[derive(Default)]
struct Scheduler {
    queue: Mutex<(BinaryHeap<Reverse<Due>>, u64)>,
    wake: Condvar,
}

impl Scheduler {
    fn push(&self, at: Instant, socket: Arc<std::net::UdpSocket>, to: Option<SocketAddr>, datagram: Vec<u8>) {
        let mut queue = self.queue.lock().expect("no panic holds the lock");
        queue.1 += 1;
        let seq = queue.1;
        queue.0.push(Reverse(Due { at, seq, socket, to, datagram }));
        self.wake.notify_one();
    }

    fn run(&self) {
        let mut queue = self.queue.lock().expect("no panic holds the lock");
        loop {
            let now = Instant::now();
            match queue.0.peek() {
                Some(Reverse(due)) if due.at <= now => {
                    let Reverse(due) = queue.0.pop().expect("peeked");
                    drop(queue);
                    // a send that fails (a full buffer, a peer gone) is a datagram lost, as on a network
                    let _ = match due.to {
                        Some(addr) => due.socket.send_to(&due.datagram, addr),
                        None => due.socket.send(&due.datagram),
                    };
                    queue = self.queue.lock().expect("no panic holds the lock");
                }
                Some(Reverse(due)) => {
                    let wait = due.at - now;
                    queue = self.wake.wait_timeout(queue, wait).expect("no panic holds the lock").0;
                }
                None => queue = self.wake.wait(queue).expect("no panic holds the lock"),
            }
        }
    }
}

struct Flow {
    upstream: Arc<std::net::UdpSocket>,
    last_due: Instant,
    conditions: Conditions,
    active: Arc<AtomicU64>,
}

/// What every task of the relay shares.
struct Relay {
    args: Args,
    listen: Arc<UdpSocket>,
    listen_out: Arc<std::net::UdpSocket>,
    counts: Counts,
    flows: Mutex<HashMap<SocketAddr, Flow>>,
    scheduler: Scheduler,
}

#[tokio::main]
async fn main() {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => e.exit(),
        Err(e) => {
            // clap's message without its usage block: one line, exit 2
            let rendered = e.render().to_string();
            let lines = rendered.lines().map(str::trim).take_while(|l| !l.is_empty() && !l.starts_with("Usage:"));
            eprintln!("udp-relay: {}", lines.collect::<Vec<_>>().join(" "));
            std::process::exit(2);
        }
    };
    let listen = match UdpSocket::bind(args.listen).await {
        Ok(socket) => Arc::new(socket),
        Err(e) => {
            eprintln!("udp-relay: error: cannot bind --listen {}: {e}", args.listen);
            std::process::exit(1);
        }
    };
    let addr = listen.local_addr().expect("a bound socket has an address");
    let line = serde_json::json!({"event": "listening", "addr": addr.to_string()});
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();

    let listen_out = match listen.as_fd().try_clone_to_owned() {
        Ok(fd) => Arc::new(std::net::UdpSocket::from(fd)),
        Err(e) => {
            eprintln!("udp-relay: error: {e}");
            std::process::exit(1);
        }
    };
    let shared = Arc::new(Relay {
        args,
        listen,
        listen_out,
        counts: Counts::default(),
        flows: Mutex::default(),
        scheduler: Scheduler::default(),
    });
    let runner = shared.clone();
    std::thread::spawn(move || runner.scheduler.run());
    let relay = tokio::spawn(forward(shared.clone()));
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
        result = relay => {
            if let Ok(Err(e)) = result {
                eprintln!("udp-relay: error: {e}");
                std::process::exit(1);
            }
        }
    }
    let counts = &shared.counts;
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    eprintln!(
        "udp-relay: to upstream {} sent, {} dropped; to clients {} sent, {} dropped",
        load(&counts.sent[0]),
        load(&counts.dropped[0]),
        load(&counts.sent[1]),
        load(&counts.dropped[1]),
    );
}

/// The clients' datagrams to the upstream, each client through a socket of its own.
async fn forward(relay: Arc<Relay>) -> std::io::Result<()> {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut streams = 0u64;
    let upstream_addr = relay.args.upstream;
    loop {
        let (n, client) = relay.listen.recv_from(&mut buf).await?;
        let now = Instant::now();
        let mut map = relay.flows.lock().expect("no panic holds the lock");
        if let Entry::Vacant(vacant) = map.entry(client) {
            let any = if upstream_addr.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" };
            let upstream = std::net::UdpSocket::bind(any).and_then(|s| {
                s.connect(upstream_addr)?;
                s.set_nonblocking(true)?;
                let out = s.try_clone()?;
                Ok((UdpSocket::from_std(s)?, out))
            });
            let (upstream, out) = match upstream {
                Ok((socket, out)) => (Arc::new(socket), Arc::new(out)),
                Err(e) => {
                    eprintln!("udp-relay: cannot open a socket to {upstream_addr}: {e}");
                    relay.counts.dropped[0].fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            };
            streams += 2;
            let active = Arc::new(AtomicU64::new(0));
            let conditions = Conditions::new(&relay.args, streams + 1);
            tokio::spawn(back(relay.clone(), upstream, client, conditions, active.clone()));
            let conditions = Conditions::new(&relay.args, streams);
            vacant.insert(Flow { upstream: out, last_due: now, conditions, active });
        }
        let flow = map.get_mut(&client).expect("inserted above");
        flow.active.fetch_add(1, Ordering::Relaxed);
        match flow.conditions.draw() {
            None => {
                relay.counts.dropped[0].fetch_add(1, Ordering::Relaxed);
            }
            Some(wait) => {
                let due = (now + wait).max(flow.last_due);
                flow.last_due = due;
                relay.scheduler.push(due, flow.upstream.clone(), None, buf[..n].to_vec());
                relay.counts.sent[0].fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// The upstream's datagrams back to one client; the flow ends after IDLE without a datagram either way.
async fn back(
    relay: Arc<Relay>,
    upstream: Arc<UdpSocket>,
    client: SocketAddr,
    mut conditions: Conditions,
    active: Arc<AtomicU64>,
) {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut last_due = Instant::now();
    let mut seen = active.load(Ordering::Relaxed);
    loop {
        let n = match tokio::time::timeout(IDLE, upstream.recv(&mut buf)).await {
            Ok(Ok(n)) => n,
            Ok(Err(_)) => continue, // e.g. ECONNREFUSED from an earlier datagram: the upstream is not there yet
            Err(_) => {
                let now_seen = active.load(Ordering::Relaxed);
                if now_seen == seen {
                    relay.flows.lock().expect("no panic holds the lock").remove(&client);
                    return;
                }
                seen = now_seen;
                continue;
            }
        };
        let now = Instant::now();
        match conditions.draw() {
            None => {
                relay.counts.dropped[1].fetch_add(1, Ordering::Relaxed);
            }
            Some(wait) => {
                let due = (now + wait).max(last_due);
                last_due = due;
                relay.scheduler.push(due, relay.listen_out.clone(), Some(client), buf[..n].to_vec());
                relay.counts.sent[1].fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}
