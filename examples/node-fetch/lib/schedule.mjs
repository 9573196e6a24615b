// The open loop (docs/raw-format.md, "Open loop"): each worker's intended start times I(w, k), in ns after t0,
// and the wait for one of them on the event loop's timer.
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { mersenne } from 'pure-rand/generator/mersenne';

/** uniform: I(w, k) = (w + k·W) / R, each worker every W/R s and the W phases spread evenly. */
export function* uniform(worker, workers, rate) {
  for (let k = 0; ; k++) yield Math.round(((worker + k * workers) / rate) * 1e9);
}

/** poisson: sums of exponential intervals of mean W/R from an MT19937 generator seeded with S + w. */
export function* poisson(worker, workers, rate, seed) {
  const rng = mersenne(seed + worker);
  const perWorker = rate / workers;
  let t = 0;
  for (;;) {
    t += -Math.log(1 - uniformFloat64(rng)) / perWorker; // inverse transform of a uniform draw in [0, 1)
    yield Math.round(t * 1e9);
  }
}

export function schedule(worker, o) {
  return o.arrival === 'poisson' ? poisson(worker, o.workers, o.rate, o.seed) : uniform(worker, o.workers, o.rate);
}

/** The requests of a schedule not sent: the first one (I = first), which could not start before D, and every
 * later one with I < D. */
export function countMissed(first, rest, durationNs) {
  if (first >= durationNs) return 0;
  let n = 1;
  for (const t of rest) {
    if (t >= durationNs) break;
    n++;
  }
  return n;
}

/** Resolves at or after `now()` reads `due`. Node's timers count whole milliseconds, so a wait ends up to about
 * 1 ms after its time; that lateness is charged to the request (its latency counts from I(w, k)). */
export async function sleepUntil(due, now) {
  for (let left = due - now(); left > 0; left = due - now()) {
    await new Promise((resolve) => setTimeout(resolve, Math.ceil(left / 1e6)));
  }
}
