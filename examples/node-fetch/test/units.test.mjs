// The driver's parts without a server: usage errors, the upload, the schedules, the histograms.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError, parseOptions, uploadAnswer, uploadBody } from '../lib/options.mjs';
import { histogram, Worker } from '../lib/record.mjs';
import { countMissed, poisson, sleepUntil, uniform } from '../lib/schedule.mjs';

test('bad usage is one line naming the flag', () => {
  for (const [args, flag] of [
    ['--url u --rate x', '--rate'],
    ['--url u --rate 0', '--rate'],
    ['--url u --duration 1', '--duration'],
    ['--url u --rate 5 --duration 1 --requests 3', '--requests'],
    ['--url u --rate 2000000 --workers 1', '--rate'],
    ['--url u --body-size 3', '--body-size'],
    ['--url u --method POST --body-size -1', '--body-size'],
    ['--url u --method POST --body-size 1073741825', '--body-size'],
    ['--url u --workers 0', '--workers'],
    ['--url u --workers 1.5', '--workers'],
    ['--url u --warmup -1', '--warmup'],
    ['--url u --timeout nan', '--timeout'],
    ['--url u --connection close', '--connection'],
    ['--url u --arrival burst', '--arrival'],
    ['--url u --record all', '--record'],
    ['--url u --method DELETE', '--method'],
    ['--url u --ca-file /no/such/ca.pem', '--ca-file'],
    ['--url u --ca-file x --insecure', '--insecure'],
    ['--url u --bogus', '--bogus'],
    ['--workers 2', '--url'],
  ]) {
    assert.throws(
      () => parseOptions(args.split(' ')),
      (err) => err instanceof UsageError && !err.message.includes('\n') && err.message.includes(flag),
      args,
    );
  }
});

test('defaults and the upload', () => {
  const o = parseOptions(['--url', 'http://h/']);
  assert.deepEqual(
    [o.workers, o.requests, o.duration, o.timeout, o.connection, o.rate, o.method, o.body, o.record],
    [10, 100, null, 30, 'keep-alive', null, 'GET', null, 'samples'],
  );
  const u = parseOptions('--url http://h/ --rate 10 --duration 2 --method PUT --body-size 3'.split(' '));
  assert.equal(u.requests, null);
  assert.equal(u.body.toString(), 'abc');
  assert.equal(u.expected.toString(), '3 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(uploadBody(28).toString(), 'abcdefghijklmnopqrstuvwxyzab');
  assert.equal(uploadAnswer(Buffer.alloc(0)).toString().split(' ')[0], '0');
});

test('uniform phases spread evenly; poisson is seeded and has its mean', () => {
  const u = uniform(1, 4, 100);
  assert.deepEqual([0, 1, 2, 3].map(() => u.next().value), [10e6, 50e6, 90e6, 130e6]);
  const a = poisson(0, 2, 1000, 7);
  const b = poisson(0, 2, 1000, 7);
  const other = poisson(1, 2, 1000, 7);
  let last = 0;
  let same = true;
  for (let i = 0; i < 20_000; i++) {
    last = a.next().value;
    assert.equal(last, b.next().value);
    same &&= last === other.next().value;
  }
  assert.ok(!same, "worker 1 has worker 0's schedule");
  assert.ok(Math.abs(last / 40e9 - 1) < 0.03, `20,000 intervals of 2 ms took ${last / 1e9} s`);
});

test('missed counts the schedule left before D', () => {
  const s = uniform(0, 1, 10); // 0, 100 ms, 200 ms, ...
  s.next();
  s.next();
  const first = s.next().value;
  assert.equal(countMissed(first, s, 1e9), 8);
  assert.equal(countMissed(1e9, s, 1e9), 0);
});

test('sleepUntil does not wake early', async () => {
  const now = () => Number(process.hrtime.bigint());
  for (const d of [0, 100e3, 1e6, 3.5e6]) {
    const due = now() + d;
    await sleepUntil(due, now);
    assert.ok(now() >= due, `woke before a ${d} ns wait ended`);
  }
});

// the contract's rule: v below 2,048 is its own bucket, else ⌊v / 2ᵇ⌋ · 2ᵇ with b = ⌊log₂ v⌋ − 10
function lowestEquivalent(v) {
  const shift = v.toString(2).length - 11;
  return shift <= 0 ? v : Number((BigInt(v) >> BigInt(shift)) << BigInt(shift));
}

test('histogram buckets are the contract’s', () => {
  const values = [0, 1, 2047, 2048, 2049, 4095, 4096, 1_000_999, 1_000_999, 86_400e9];
  for (let b = 0; b < 46; b++) values.push(2 ** b, 2 ** b + 1, 2 ** b - 1);
  for (let i = 0; i < 10_000; i++) values.push(Math.floor(Math.random() * 2 ** Math.floor(Math.random() * 46)));
  const want = new Map();
  for (const v of values) want.set(lowestEquivalent(v), (want.get(lowestEquivalent(v)) ?? 0) + 1);
  const { significant_digits, counts } = histogram(values);
  assert.equal(significant_digits, 3);
  assert.deepEqual(counts, [...want.entries()].sort((x, y) => x[0] - y[0]));
  assert.equal(lowestEquivalent(2049), 2048);
  assert.equal(lowestEquivalent(1_000_999), 1_000_960);
  assert.throws(() => histogram([2 * 86_400e9]), /beyond a day/);
});

test('histograms are of the successful requests', () => {
  const w = new Worker(true);
  w.recordOpen(0, 0, 100, 1100, 200, 10, null);
  w.recordOpen(1, 500, 1100, 5100, 500, 10, null);
  w.recordOpen(2, 1000, 5100, 6100, 200, 10, null);
  const doc = w.toJSON(100, 'histogram');
  assert.equal(doc.failure_count, 1);
  assert.equal(doc.start_ns, undefined);
  assert.deepEqual(doc.histograms.service.counts, [[1000, 2]]);
  // corrected, from the intended start: 1000 and 6000 - 1000
  assert.deepEqual(doc.histograms.corrected.counts, [[1000, 1], [5000, 1]]);
});
