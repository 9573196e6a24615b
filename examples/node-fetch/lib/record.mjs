// What a worker measured, and how it is written into the raw document (docs/raw-format.md, "The document"):
// per-request arrays (--record samples) or HdrHistogram buckets at 3 significant digits made at the end from
// the same samples (--record histogram), so the timed loop does the same work in both modes.
import * as hdr from 'hdr-histogram-js';
import { DigestMismatch, Overtime, describe } from './failures.mjs';
import { countMissed } from './schedule.mjs';

const MAX_FAILURES = 1000; // a worker lists at most this many failures (all of them are counted)
const SIGNIFICANT_DIGITS = 3;
const HIGHEST_TRACKABLE_NS = 86_400e9; // a day: the runner refuses a bucket beyond it

/** The contract's histogram of `values`: every HdrHistogram bucket (unit 1 ns) that holds one, by increasing
 * value, each given by its lowest equivalent value. */
export function histogram(values) {
  const h = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_TRACKABLE_NS,
    numberOfSignificantValueDigits: SIGNIFICANT_DIGITS,
    bitBucketSize: 64,
    useWebAssembly: false,
  });
  for (const v of values) {
    if (!(v >= 0 && v <= HIGHEST_TRACKABLE_NS)) throw new Error(`latency ${v} ns is beyond a day`);
    h.recordValue(v);
  }
  const counts = [];
  const it = h.recordedValuesIterator;
  it.reset();
  while (it.hasNext()) {
    const step = it.next();
    counts.push([h.lowestEquivalentValue(step.valueIteratedTo), step.countAtValueIteratedTo]);
  }
  return { significant_digits: SIGNIFICANT_DIGITS, counts };
}

/** One worker's measurements, timestamps in ns of the driver's clock until toJSON(). `timeout`: --timeout in s,
 * which bounds the whole request: one that took longer failed (Overtime), whatever it returned. `phaseKeys`
 * (client.phases, null without --phases): the phases summed over the successful requests. */
export class Worker {
  constructor(openLoop, timeout = Infinity, phaseKeys = null) {
    this.timeout = timeout;
    this.phases = phaseKeys === null ? null : { keys: phaseKeys, count: 0, latency: 0, sums: phaseKeys.map(() => 0) };
    this.starts = [];
    this.latencies = [];
    this.intended = openLoop ? [] : null;
    this.failures = [];
    this.failureCount = 0;
    this.failed = new Set(); // indexes of the failed requests: the histograms are of the others
    this.bytes = 0;
    this.late = 0;
    this.missed = 0;
    this.loopStart = 0;
    this.loopEnd = 0;
    this.unsent = null;
  }

  /** Request `index`'s failure, first to last: the client's error; ending after --timeout; a status other than
   * 200; a wrong upload answer. A successful request adds its `phases` (in the order of the keys; null: none
   * told) to the worker's sums. */
  record(index, start, end, status, nbytes, error, phases = null) {
    this.starts.push(start);
    this.latencies.push(end - start);
    this.bytes += nbytes;
    if ((error == null || error instanceof DigestMismatch) && end - start > this.timeout * 1e9) {
      error = new Overtime(end - start, this.timeout);
    }
    if (error != null) this.fail(index, describe(error), null);
    else if (status !== 200) this.fail(index, `status ${status}`, status);
    else if (this.phases !== null && phases !== null) {
      this.phases.count++;
      this.phases.latency += end - start;
      phases.forEach((ns, i) => {
        this.phases.sums[i] += ns;
      });
    }
  }

  recordOpen(index, intended, start, end, status, nbytes, error, phases = null) {
    this.intended.push(intended);
    this.record(index, start, end, status, nbytes, error, phases);
  }

  fail(index, reason, status) {
    this.failureCount++;
    this.failed.add(index);
    if (this.failures.length < MAX_FAILURES) this.failures.push({ index, reason, status });
  }

  /** The open loop stopped at D: from `first` on, its schedule was not sent (counted by countMissed()). */
  stop(first, rest) {
    this.unsent = { first, rest };
  }

  countMissed(durationNs) {
    if (this.unsent !== null) this.missed = countMissed(this.unsent.first, this.unsent.rest, durationNs);
    this.unsent = null;
  }

  toJSON(t0, record) {
    const out = {
      elapsed_ns: this.loopEnd - this.loopStart,
      count: this.latencies.length,
      late: this.late,
      missed: this.missed,
      bytes: this.bytes,
      failure_count: this.failureCount,
      failures: this.failures,
    };
    if (this.phases !== null) {
      const { keys, count, latency, sums } = this.phases;
      out.phases = { count, latency_ns: latency, sum_ns: Object.fromEntries(keys.map((k, i) => [k, sums[i]])) };
    }
    const starts = this.starts.map((s) => Math.max(0, s - t0));
    if (record === 'samples') {
      out.start_ns = starts;
      out.latencies_ns = this.latencies;
      if (this.intended !== null) out.intended_ns = this.intended;
      return out;
    }
    const ok = [...this.latencies.keys()].filter((i) => !this.failed.has(i));
    out.histograms = { service: histogram(ok.map((i) => this.latencies[i])) };
    if (this.intended !== null) {
      out.histograms.corrected = histogram(ok.map((i) => starts[i] + this.latencies[i] - this.intended[i]));
    }
    return out;
  }
}

/** JSON.stringify, with BigInts (the seed, up to 2^64 - 1) written as JSON numbers, every digit kept. */
export function documentJSON(doc) {
  const marks = [];
  const text = JSON.stringify(doc, (_, v) => {
    if (typeof v !== 'bigint') return v;
    marks.push(v.toString());
    return `\u0000bigint${marks.length - 1}`;
  });
  return text.replace(/"\\u0000bigint(\d+)"/g, (_, i) => marks[Number(i)]);
}
