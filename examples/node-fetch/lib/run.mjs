// The workers (docs/raw-format.md, "The workload"): W async tasks on Node's event loop, each with its own
// Agent; every task makes its client and does its warm-up, then (all ready) t0 is taken and the timed loops
// start together, closed (N sequential requests) or open (on the worker's schedule). Worker w's request k goes
// to target (w + k) mod T, k counted from 0 in the warm-up and again in the timed loop.
import { makeAgent, request } from './client.mjs';
import { now } from './clock.mjs';
import { failureClass } from './failures.mjs';
import { RequestPhases } from './phases.mjs';
import { Worker } from './record.mjs';
import { schedule, sleepUntil } from './schedule.mjs';
import { pick } from './targets.mjs';

const cpuNs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
};

/** A worker's client (or with --client-scope shared, every worker's), replaced by a new one for every timed
 * request with --connection new. `seen`: what its connections negotiated. */
class Slot {
  constructor(o, shared = false) {
    this.o = o;
    this.shared = shared;
    this.retired = [];
    ({ agent: this.agent, seen: this.seen } = makeAgent(o, shared));
  }

  /** One request with the current Agent. undici 6 leaves an Agent whose TLS connect failed on a host name
   * check (ERR_TLS_CERT_ALTNAME_INVALID) hanging on its next request until the timeout: after a TLSError the
   * worker goes on with a new Agent, as the next request would connect anew anyway (the failure is counted). */
  async call(target) {
    const rec = this.o.phaseKeys ? new RequestPhases(this.seen.connects) : null;
    try {
      return await request(this.agent, this.o, target, rec);
    } catch (err) {
      if (failureClass(err) === 'TLSError') {
        this.retired.push(this.agent);
        ({ agent: this.agent, seen: this.seen } = makeAgent(this.o, this.shared));
      }
      throw err;
    }
  }

  async send(target) {
    if (this.o.connection === 'new') {
      const old = this.agent;
      ({ agent: this.agent, seen: this.seen } = makeAgent(this.o));
      await old.destroy(); // idle: nothing to wait for (close() can hang after a failed TLS connect)
    }
    return this.call(target);
  }

  async destroy() {
    await Promise.all([this.agent, ...this.retired].map((a) => a.destroy().catch(() => {})));
  }
}

async function closedLoop(w, index, slot, o) {
  w.loopStart = now();
  for (let k = 0; k < o.requests; k++) {
    const start = now();
    let status = null;
    let nbytes = 0;
    let error = null;
    let phases = null;
    try {
      ({ status, bytes: nbytes, phases } = await slot.send(pick(o.targets, index, k)));
    } catch (err) {
      error = err;
      nbytes = err?.nbytes ?? 0;
    }
    w.record(k, start, now(), status, nbytes, error, phases);
  }
  w.loopEnd = now();
}

// Request k starts at t0 + I(w, k), or as soon as request k-1 has returned when that is later (a late start,
// still charged from I(w, k)). With --duration D the worker stops at the first request of the schedule (I < D)
// that cannot start before D: it and the rest are missed.
async function openLoop(w, index, slot, o, t0) {
  const times = schedule(index, o);
  const d = o.duration === null ? null : Math.round(o.duration * 1e9);
  let t = (w.loopStart = now());
  for (let k = 0; o.requests === null || k < o.requests; k++) {
    const dueRel = times.next().value;
    if (d !== null && dueRel >= d) break;
    const due = t0 + dueRel;
    let late = false;
    if (t < due) {
      await sleepUntil(due, now);
      t = now();
    } else {
      late = k > 0 && t > due;
    }
    if (d !== null && t - t0 >= d) {
      w.stop(dueRel, times);
      break;
    }
    if (late) w.late++;
    let status = null;
    let nbytes = 0;
    let error = null;
    let phases = null;
    try {
      ({ status, bytes: nbytes, phases } = await slot.send(pick(o.targets, index, k)));
    } catch (err) {
      error = err;
      nbytes = err?.nbytes ?? 0;
    }
    const end = now();
    w.recordOpen(k, dueRel, t, end, status, nbytes, error, phases);
    t = end;
  }
  w.loopEnd = now();
}

/** Runs the workload: {workers, t0, wallNs, cpuNs}. */
export async function run(o) {
  // Node loads its fetch (the bundled undici) at the first call: done here, as a library is imported before the
  // workers start, with a data: URL that needs no server
  await (await fetch('data:,')).arrayBuffer();
  const open = o.rate !== null;
  const workers = Array.from({ length: o.workers }, () => new Worker(open, o.timeout, o.phaseKeys));
  const shared = o.clientScope === 'shared' ? new Slot(o, true) : null;
  const slots = workers.map(() => shared ?? new Slot(o));
  await Promise.all(
    slots.map(async (slot, index) => {
      for (let k = 0; k < o.warmup; k++) {
        try {
          await slot.call(pick(o.targets, index, k));
        } catch {
          // warm-up failures are not measured
        }
      }
    }),
  );
  const t0 = now();
  const cpu0 = cpuNs();
  await Promise.all(workers.map((w, i) => (open ? openLoop(w, i, slots[i], o, t0) : closedLoop(w, i, slots[i], o))));
  const wallNs = now() - t0;
  const cpu = cpuNs() - cpu0;
  await Promise.all([...new Set(slots)].map((s) => s.destroy()));
  if (o.duration !== null) for (const w of workers) w.countMissed(Math.round(o.duration * 1e9));
  // worker 0's connection: its TLS, and its protocol once a request of it succeeded
  const { tls, protocol } = slots[0].seen;
  const answered = workers[0].latencies.length > workers[0].failureCount;
  return { workers, t0, wallNs, cpuNs: cpu, tls, protocol: answered ? protocol : null };
}
