// The open loop (docs/raw-format.md, "Open loop"): each worker's intended start times I(w, k), in ns after t0,
// and the wait for one of them on the event loop's timer.

const MASK = (1n << 64n) - 1n;

/** SplitMix64 (Steele, Lea and Flood 2014; Vigna's reference code), from `state` (a BigInt, mod 2^64): the
 * Poisson schedules' generator, the same in every harness of the contract, so that a seed gives the same
 * schedule in every language. Yields its 64-bit outputs as BigInts. */
export function* splitmix64(state) {
  let s = BigInt.asUintN(64, state);
  for (;;) {
    s = (s + 0x9e3779b97f4a7c15n) & MASK;
    let z = s;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    yield z ^ (z >> 31n);
  }
}

/** uniform: I(w, k) = (w + k·W) / R, each worker every W/R s and the W phases spread evenly (worker 0 at 0). */
export function* uniform(worker, workers, rate) {
  for (let k = 0; ; k++) yield Math.round(((worker + k * workers) / rate) * 1e9);
}

/** poisson: I(w, k) = I(w, k-1) + round(-ln(u) · m) ns with m = W · 1e9 / R and u = ((x >> 11) + 1) / 2^53 from
 * SplitMix64 seeded with S + w (`seed` a BigInt); summed in whole ns, so I(w, 0) is the first interval, not 0. */
export function* poisson(worker, workers, rate, seed) {
  const meanNs = (workers * 1e9) / rate;
  let t = 0;
  for (const x of splitmix64(seed + BigInt(worker))) {
    const u = (Number(x >> 11n) + 1) * 2 ** -53; // (0, 1], exact
    t += Math.round(-Math.log(u) * meanNs); // Math.round rounds halves up: away from zero, for these
    yield t;
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
