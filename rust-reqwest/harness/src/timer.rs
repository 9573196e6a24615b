//! The open loop's wake-ups for tasks.
//!
//! tokio's timer wheel ticks in whole milliseconds and rounds a deadline up to the next tick, so a task
//! that sleeps until a request's intended start wakes up to about 1 ms late, and the open loop charges that
//! lateness to the request's corrected latency (at 2,000 requests/s a median of about 1 ms, which is the
//! timer, not the client). One timer thread per process sleeps to the earliest deadline with 1 ns timer
//! slack and wakes the task that waits for it through a oneshot channel: a cross-thread wake-up (tens of
//! microseconds) instead of a millisecond tick. The threads mode sleeps on its own thread instead (see
//! [`precise_sleeps`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use tokio::sync::oneshot;

type Entry = (Reverse<Instant>, u64);

struct Request {
    at: Instant,
    wake: oneshot::Sender<()>,
}

static TIMER: OnceLock<Mutex<Sender<Request>>> = OnceLock::new();

/// Asks the kernel to wake this thread's sleeps on time (its default slack for a normal thread is 50 µs).
pub fn precise_sleeps() {
    // SAFETY: PR_SET_TIMERSLACK takes one unsigned long and touches no memory of ours.
    unsafe {
        libc::prctl(
            libc::PR_SET_TIMERSLACK,
            1 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        );
    }
}

fn timer() -> Option<Sender<Request>> {
    let sender = TIMER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Request>();
        // without the thread (spawn failed), its receiver is dropped with the closure: send() then fails and
        // the callers fall back to tokio's timer
        let _ = std::thread::Builder::new().name("open-loop-timer".into()).spawn(move || {
            precise_sleeps();
            let mut heap: BinaryHeap<Entry> = BinaryHeap::new();
            let mut waiting: std::collections::HashMap<u64, oneshot::Sender<()>> = Default::default();
            let mut next_id = 0u64;
            loop {
                let now = Instant::now();
                while let Some(&(Reverse(at), id)) = heap.peek() {
                    if at > now {
                        break;
                    }
                    heap.pop();
                    if let Some(wake) = waiting.remove(&id) {
                        let _ = wake.send(());
                    }
                }
                let got = match heap.peek() {
                    Some(&(Reverse(at), _)) => rx.recv_timeout(at.saturating_duration_since(now)),
                    None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                };
                match got {
                    Ok(req) => {
                        heap.push((Reverse(req.at), next_id));
                        waiting.insert(next_id, req.wake);
                        next_id += 1;
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        });
        Mutex::new(tx)
    });
    sender.lock().ok().map(|s| s.clone())
}

/// Sleeps until `at` (a task's wait for a request's intended start).
pub async fn sleep_until(at: Instant) {
    if at <= Instant::now() {
        return;
    }
    let (wake, woken) = oneshot::channel();
    match timer() {
        Some(t) if t.send(Request { at, wake }).is_ok() => {
            if woken.await.is_ok() {
                return;
            }
            tokio::time::sleep_until(at.into()).await
        }
        _ => tokio::time::sleep_until(at.into()).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn wakes_every_waiter_not_before_its_deadline() {
        let start = Instant::now();
        let mut tasks = Vec::new();
        for i in 0..50u64 {
            let at = start + Duration::from_micros(200 * (50 - i));
            tasks.push(tokio::spawn(async move {
                sleep_until(at).await;
                Instant::now() >= at
            }));
        }
        for t in tasks {
            assert!(t.await.unwrap());
        }
        sleep_until(start).await; // a deadline already past returns at once
    }
}
