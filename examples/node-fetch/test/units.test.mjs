// The driver's parts without a server: usage errors, the upload, the schedules, the histograms.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AnswerCheck, Pattern, readBody, streamedBody } from '../lib/body.mjs';
import { DigestMismatch } from '../lib/failures.mjs';
import { Unsupported, UsageError, parseOptions, uploadAnswer, uploadBody } from '../lib/options.mjs';
import { documentJSON, histogram, Worker } from '../lib/record.mjs';
import { countMissed, poisson, sleepUntil, splitmix64, uniform } from '../lib/schedule.mjs';
import { pick } from '../lib/targets.mjs';

/** The tests' files, removed when the file's tests are done. */
const TMP = mkdtempSync(join(tmpdir(), 'cb-node-test-'));
after(() => rmSync(TMP, { recursive: true, force: true }));

test('bad usage is one line naming the flag', () => {
  for (const [args, flag] of [
    ['--url http://h/ --rate x', '--rate'],
    ['--url http://h/ --rate 0', '--rate'],
    ['--url http://h/ --duration 1', '--duration'],
    ['--url http://h/ --rate 5 --duration 1 --requests 3', '--requests'],
    ['--url http://h/ --rate 2000000 --workers 1', '--rate'],
    ['--url http://h/ --body-size 3', '--body-size'],
    ['--url http://h/ --method POST --body-size -1', '--body-size'],
    ['--url http://h/ --method POST --body-size 1073741825', '--body-size'],
    ['--url http://h/ --workers 0', '--workers'],
    ['--url http://h/ --workers 1.5', '--workers'],
    ['--url http://h/ --warmup -1', '--warmup'],
    ['--url http://h/ --timeout nan', '--timeout'],
    ['--url http://h/ --connection close', '--connection'],
    ['--url http://h/ --arrival burst', '--arrival'],
    ['--url http://h/ --record all', '--record'],
    ['--url http://h/ --method DELETE', '--method'],
    ['--url http://h/ --ca-file /no/such/ca.pem', '--ca-file'],
    ['--url http://h/ --ca-file x --insecure', '--insecure'],
    ['--url http://h/ --bogus', '--bogus'],
    ['--workers 2', '--url'],
    // the contract's rules (docs/raw-format.md, "Command line")
    ['--url http://h/ --arrival poisson', '--arrival'],
    ['--url http://h/ --seed 3', '--seed'],
    ['--url http://h/ --rate 5 --seed -1', '--seed'],
    ['--url http://h/ --rate 5 --seed 18446744073709551616', '--seed'],
    ['--url http://h/ --timeout 0', '--timeout'],
    ['--url http://h/ --timeout 86401', '--timeout'],
    ['--url ftp://h/', '--url'],
    ['--url http://', '--url'],
    ['--url 127.0.0.1:8080', '--url'],
    ['--url http://h:0/', '--url'],
    ['--url http://h:65536/', '--url'],
    // streamed bodies and targets
    ['--url http://h/ --upload chunked', '--upload'],
    ['--url http://h/ --download lazily', '--download'],
    ['--url http://h/ --chunk-size 0', '--chunk-size'],
    ['--url http://h/ --chunk-size 16777217', '--chunk-size'],
    ['--url http://h/ --chunk-size 1k', '--chunk-size'],
    ['--url http://h/ --upload stream', '--upload'],
    ['--url http://h/ --targets /no/such/targets', '--targets'],
    ['--url http://h/ --targets /dev/null', '--targets'], // no targets in it
  ]) {
    assert.throws(
      () => parseOptions(args.split(' ')),
      (err) => err instanceof UsageError && !err.message.includes('\n') && err.message.includes(flag),
      args,
    );
  }
});

test('what undici cannot do is exit 3, once the command line is known to be good', () => {
  assert.throws(() => parseOptions(['--url', 'https://h/', '--http', '3']), (err) => err instanceof Unsupported);
  assert.throws(() => parseOptions(['--url', 'http://h/', '--http', '2']), (err) => err instanceof Unsupported);
  const text = join(TMP, 'not-a-certificate.pem');
  writeFileSync(text, 'not a certificate\n');
  for (const args of [
    ['--url', 'https://h/', '--http', '3', '--ca-file', '/no/such/ca.pem'],
    ['--url', 'http://h/', '--http', '2', '--ca-file', text], // no PEM certificate in it
    ['--url', 'http://h/', '--http', '3'], // QUIC needs https://
  ]) {
    assert.throws(() => parseOptions(args), (err) => err instanceof UsageError, args.join(' '));
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
  const a = poisson(0, 2, 1000, 7n);
  const b = poisson(0, 2, 1000, 7n);
  const other = poisson(1, 2, 1000, 7n);
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

test('poisson is the contract’s schedule', () => {
  // docs/raw-format.md's example: --seed 1, W = 4, R = 2000 (a mean interval of 2 ms)
  const first5 = (it) => [0, 1, 2, 3, 4].map(() => it.next().value);
  assert.deepEqual(first5(poisson(0, 4, 2000, 1n)), [1_136_339, 1_722_984, 1_781_836, 3_404_080, 5_026_749]);
  assert.deepEqual(first5(poisson(1, 4, 2000, 1n)), [1_051_237, 1_628_870, 2_665_114, 3_199_777, 5_531_920]);
  const g = splitmix64(1n); // Vigna's splitmix64.c from state 1
  assert.deepEqual([g.next().value, g.next().value], [0x910a2dec89025cc1n, 0xbeeb8da1658eec67n]);
  // S + w wraps mod 2^64: worker 1 of seed 2^64 - 1 is worker 0 of seed 0
  const wrapped = poisson(1, 4, 2000, (1n << 64n) - 1n);
  const zero = poisson(0, 4, 2000, 0n);
  for (let i = 0; i < 100; i++) assert.equal(wrapped.next().value, zero.next().value);
});

test('the open loop’s flags: defaults, and a 64-bit seed written whole', () => {
  const o = parseOptions('--url http://h/ --rate 10'.split(' '));
  assert.deepEqual([o.arrival, o.seed], ['uniform', 1n]);
  const big = parseOptions('--url http://h/ --rate 10 --arrival poisson --seed 18446744073709551615'.split(' '));
  assert.equal(documentJSON({ seed: big.seed, url: 'x' }), '{"seed":18446744073709551615,"url":"x"}');
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

test('a request past the timeout is a TimeoutError, whatever it returned', () => {
  const w = new Worker(false, 0.001); // --timeout 1 ms bounds the whole request
  w.record(0, 0, 1_000_000, 200, 10, null); // exactly 1 ms: in time
  w.record(1, 0, 2_000_000, 200, 10, null);
  w.record(2, 0, 2_000_000, 500, 10, null);
  w.record(3, 0, 2_000_000, 200, 6, new DigestMismatch(Buffer.from('3 nope'), Buffer.from('x')));
  w.record(4, 0, 2_000_000, null, 0, Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
  assert.deepEqual([w.failureCount, w.bytes], [4, 36]);
  for (const f of w.failures.slice(0, 3)) {
    assert.deepEqual(f.reason, 'TimeoutError: the request took 0.002 s, past --timeout 0.001 s');
    assert.equal(f.status, null);
  }
  assert.match(w.failures[3].reason, /^ConnectionError: /); // the client's own error comes first
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

test('streamed bodies: the flags and their defaults', () => {
  const o = parseOptions(['--url', 'http://h/']);
  assert.deepEqual([o.upload, o.download, o.chunkSize, o.targetsFile], ['whole', 'whole', 65536, null]);
  assert.deepEqual(o.targets, [{ method: 'GET', url: 'http://h/', body: null, size: 0, check: false }]);
  // a streamed upload is never whole in memory: no body, the answer hashed from the pattern
  const s = parseOptions('--url http://h/ --method POST --body-size 3 --upload stream --chunk-size 1'.split(' '));
  assert.deepEqual([s.body, s.targets[0].body, s.targets[0].size, s.targets[0].check, s.chunkSize], [null, null, 3, true, 1]);
  assert.equal(s.expected.toString(), '3 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(parseOptions('--url http://h/ --download stream --chunk-size 16777216'.split(' ')).chunkSize, 2 ** 24);
});

test('the pattern at any offset is the body’s', () => {
  const body = uploadBody(1000);
  for (const chunk of [1, 7, 26, 27, 100]) {
    const p = new Pattern(chunk);
    for (let off = 0; off + chunk <= 1000; off += 13) {
      for (const n of [0, 1, chunk]) assert.ok(p.at(off, n).equals(body.subarray(off, off + n)), `${chunk} ${off} ${n}`);
    }
    assert.ok(p.matches(3, body.subarray(3)));
    assert.ok(!p.matches(3, body.subarray(4)));
    for (const size of [0, 1, 3, 26, 99, 1000]) assert.deepEqual(p.answer(size), uploadAnswer(body.subarray(0, size)));
  }
});

async function chunksOf(stream) {
  const sizes = [];
  const parts = [];
  for await (const c of stream) {
    sizes.push(c.byteLength);
    parts.push(Buffer.from(c));
  }
  return [sizes, Buffer.concat(parts)];
}

test('a streamed body is chunks of C made as they are pulled', async () => {
  const [sizes, got] = await chunksOf(streamedBody(new Pattern(1000), 2500, 1000));
  assert.deepEqual(sizes, [1000, 1000, 500]);
  assert.ok(got.equals(uploadBody(2500)));
  const [bSizes, bGot] = await chunksOf(streamedBody(Buffer.from('hello body'), 10, 3));
  assert.deepEqual([bSizes, bGot.toString()], [[3, 3, 3, 1], 'hello body']);
  assert.deepEqual((await chunksOf(streamedBody(new Pattern(7), 0, 7)))[0], []);
  // nothing is made before it is asked for
  let made = 0;
  const counting = { subarray: (a, b) => (made++, Buffer.alloc(b - a)) };
  const reader = streamedBody(counting, 100, 10).getReader();
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(made, 0);
  await reader.read();
  assert.equal(made, 1);
});

test('every worker cycles through the targets from its own index', () => {
  const targets = ['0', '1', '2'];
  const cycle = (w) => [0, 1, 2, 3, 4].map((k) => pick(targets, w, k)).join('');
  assert.deepEqual([0, 1, 2, 4].map(cycle), ['01201', '12012', '20120', '12012']);
});

/** Feeds `answer` to a check in random pieces of at most 10 bytes, as a streamed read gives it. */
function checked(answer, line, size) {
  const c = new AnswerCheck(line, new Pattern(10), size);
  for (let i = 0; i < answer.length; ) {
    const n = 1 + Math.floor(Math.random() * 10);
    c.feed(answer.subarray(i, i + n));
    i += n;
  }
  return () => c.verify();
}

test('an upload’s answer is the /upload line or the echo', () => {
  const body = uploadBody(1000);
  const line = uploadAnswer(body);
  const wrongEcho = Buffer.from(body);
  wrongEcho[999] = 'z'.charCodeAt(0);
  for (const [name, answer, ok] of [
    ['the line', line, true],
    ['the echo', body, true],
    ["a line's prefix", line.subarray(0, 10), false],
    ['the line and more', Buffer.concat([line, Buffer.from('x')]), false],
    ['a short echo', body.subarray(0, 999), false],
    ['an echo with a wrong last byte', wrongEcho, false],
    ['another line', uploadAnswer(body.subarray(0, 999)), false],
    ['nothing', Buffer.alloc(0), false],
  ]) {
    if (ok) assert.doesNotThrow(checked(answer, line, 1000), name);
    else assert.throws(checked(answer, line, 1000), DigestMismatch, name);
  }
  // 67 bytes and their line are both 67 bytes long: the answer may be either
  const l67 = uploadAnswer(uploadBody(67));
  assert.equal(l67.length, 67);
  assert.doesNotThrow(checked(l67, l67, 67));
  assert.doesNotThrow(checked(uploadBody(67), l67, 67));
  // the reason shows the answer's first 100 bytes, and counts all of them
  assert.throws(checked(body, line, 999), (err) => err.message ===
    `upload digest mismatch: got '${body.subarray(0, 100)}...', expected '${line}' or the 999 bytes sent` && err.nbytes === 1000);
});

test('a body is read whole or in pieces of at most C', async () => {
  const body = uploadBody(1000);
  for (const chunk of [null, 64]) {
    const c = new AnswerCheck(uploadAnswer(body), new Pattern(64), 1000);
    assert.equal(await readBody(new Response(body), chunk, c), 1000);
    c.verify();
  }
  const seen = [];
  const spy = { feed: (b) => seen.push(b.byteLength) };
  await readBody(new Response(new Blob([uploadBody(300)]).stream()), 128, spy);
  assert.ok(seen.every((n) => n <= 128) && seen.reduce((a, b) => a + b) === 300, `${seen}`);
  // a body that breaks off: the bytes read so far go with the error
  let pulls = 0;
  const broken = new ReadableStream({
    pull(c) {
      if (pulls++ === 0) c.enqueue(new Uint8Array(3));
      else c.error(new Error('cut'));
    },
  });
  await assert.rejects(readBody(new Response(broken), 2, null), (err) => err.message === 'cut' && err.nbytes === 3);
});

/** A targets file (and a body file beside it) in a new folder. */
function targetsFile(...lines) {
  const dir = mkdtempSync(join(TMP, 'targets-'));
  writeFileSync(join(dir, 'body'), 'hello body');
  const path = join(dir, 'targets');
  writeFileSync(path, lines.join('\n').replaceAll('@BODY', `@${join(dir, 'body')}`));
  return path;
}

test('a targets file is read once with its bodies', () => {
  const path = targetsFile('# a comment', '', 'GET http://h/a', '  POST http://h:8080/upload @BODY  ',
    'PUT https://[::1]/x @BODY', 'POST http://h/empty');
  const o = parseOptions(['--url', 'http://h/a', '--targets', path, '--upload', 'stream']);
  assert.deepEqual(o.targets.map((t) => [t.method, t.url, t.body?.toString() ?? null, t.size, t.check]), [
    ['GET', 'http://h/a', null, 0, false],
    ['POST', 'http://h:8080/upload', 'hello body', 10, false],
    ['PUT', 'https://[::1]/x', 'hello body', 10, false],
    ['POST', 'http://h/empty', null, 0, false],
  ]);
  assert.equal(o.targets[1].body, o.targets[2].body, 'a body file named twice is read once');
});

test('a bad target is one line naming the file and the line', () => {
  for (const [line, why] of [
    ['DELETE http://h/', 'GET, POST or PUT'],
    ['get http://h/', 'GET, POST or PUT'],
    ['GET', 'not a target'],
    ['GET http://h/ extra', 'not a target'],
    ['POST http://h/ @BODY @BODY', 'not a target'],
    ['GET /relative/path', 'URL'],
    ['GET ftp://h/', 'URL'],
    ['GET http://h:0/', 'URL'],
    ['GET http://h/ @BODY', 'a GET sends no body'],
    ['POST http://h/ @relative/body', 'absolute'],
    ['POST http://h/ @/no/such/body', 'body file'],
    ['Host: example.com', 'GET, POST or PUT'], // a header line of vegeta's form
  ]) {
    const path = targetsFile('# line 1', 'GET http://h/', line);
    assert.throws(() => parseOptions(['--url', 'http://h/', '--targets', path]), (err) =>
      err instanceof UsageError && !err.message.includes('\n') && err.message.includes(`--targets ${path}, line 3: `) &&
      err.message.includes(why), line);
  }
  const path = targetsFile('GET http://h/');
  for (const flag of ['--method GET', '--body-size 0']) {
    assert.throws(() => parseOptions(['--url', 'http://h/', '--targets', path, ...flag.split(' ')]),
      (err) => err instanceof UsageError && err.message.includes(flag.split(' ')[0]), flag);
  }
});
