// The workers end to end against an in-test server with the contract's faults, counting its connections.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parseOptions, uploadAnswer, uploadBody } from '../lib/options.mjs';
import { run } from '../lib/run.mjs';

/** The tests' files, removed when the file's tests are done. */
const TMP = mkdtempSync(join(tmpdir(), 'cb-node-test-'));
after(() => rmSync(TMP, { recursive: true, force: true }));

let server;
let base;
let connections = 0;

const RAW = {
  '/short': ['HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc', false],
  '/reset': ['HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nabc', true],
  '/garbage': ['garbage\r\n\r\n', false],
};

before(async () => {
  server = createServer(async (req, res) => {
    const raw = RAW[req.url];
    if (raw) {
      req.socket.write(raw[0]);
      if (raw[1]) req.socket.resetAndDestroy();
      else req.socket.destroy();
      return;
    }
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    if (req.url === '/upload') {
      res.end(`${body.length} ${createHash('sha256').update(body).digest('hex')}`);
    } else if (req.url === '/echo') {
      res.end(body); // the body back
    } else if (req.url === '/bad-echo') {
      if (body.length > 0) body[body.length - 1]++;
      res.end(body);
    } else if (req.url === '/chunked') {
      // /upload for a chunked body only
      const chunked = req.headers['transfer-encoding'] === 'chunked' && req.headers['content-length'] === undefined;
      if (chunked) res.end(`${body.length} ${createHash('sha256').update(body).digest('hex')}`);
      else res.writeHead(411).end();
    } else if (req.url.startsWith('/n/')) {
      res.end('x'.repeat(Number(req.url.slice(3)))); // N bytes
    } else if (req.url === '/hello-body') {
      res.writeHead(body.toString() === 'hello body' ? 200 : 400).end(); // a target's body arrived
    } else if (req.url === '/wrong') {
      res.end('3 nope');
    } else if (req.url === '/status') {
      res.writeHead(500).end();
    } else if (req.url === '/stall') {
      setTimeout(() => res.end('late'), 500);
    } else if (req.url === '/drip') {
      // the headers at once, then a byte every 100 ms: no read waits long, the whole body takes 0.6 s
      res.writeHead(200, { 'Content-Length': '6' });
      for (let i = 0; i < 6 && !res.destroyed; i++) {
        res.write('*');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      res.end();
    } else {
      res.end('hello');
    }
  });
  server.on('connection', () => connections++);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => server.close());

const go = (...args) => run(parseOptions(args));
const reasons = (g) => g.workers.flatMap((w) => w.failures.map((f) => f.reason));

test('keep-alive is one connection per worker, new is one per request', async () => {
  connections = 0;
  const g = await go('--url', `${base}/`, '--workers', '3', '--requests', '20', '--warmup', '2');
  for (const w of g.workers) assert.deepEqual([w.latencies.length, w.failureCount, w.bytes], [20, 0, 100]);
  assert.equal(connections, 3);
  connections = 0;
  await go('--url', `${base}/`, '--workers', '2', '--requests', '5', '--connection', 'new');
  assert.equal(connections, 10); // the clients made before the gate connect only to warm up
});

test('uploads are checked and failures classified', async () => {
  const ok = await go('--url', `${base}/upload`, '--workers', '1', '--requests', '3', '--method', 'POST',
    '--body-size', '100000');
  assert.deepEqual(reasons(ok), []);
  for (const [path, want] of [
    ['/wrong', "Error: upload digest mismatch: got '3 nope', expected '3 "],
    ['/status', 'status 500'],
    ['/short', 'ConnectionError: '],
    ['/reset', 'ConnectionError: '],
    ['/garbage', 'ProtocolError: '],
    ['/stall', 'TimeoutError: '],
    ['/drip', 'TimeoutError: '], // --timeout bounds the whole request, not each read
  ]) {
    const extra = path === '/wrong' ? ['--method', 'PUT', '--body-size', '3'] : [];
    const r = reasons(await go('--url', `${base}${path}`, '--workers', '1', '--requests', '2', '--timeout', '0.25', ...extra));
    assert.equal(r.length, 2, `${path}: ${r}`);
    assert.ok(r[0].startsWith(want), `${path}: ${r[0]}`);
  }
});

test('the open loop keeps to its schedule and stops at D', async () => {
  const g = await go('--url', `${base}/`, '--workers', '2', '--rate', '200', '--duration', '0.25');
  for (const w of g.workers) {
    // 0.25 s at 100/s each: 25 requests of the schedule below D, sent or missed
    assert.equal(w.latencies.length + w.missed, 25);
    w.starts.forEach((s, k) => assert.ok(s - g.t0 >= w.intended[k], `request ${k} started before its time`));
  }
  assert.ok(g.wallNs < 5e9, 'it stops by itself at D (plus a request)');
  const held = await go('--url', `${base}/stall`, '--workers', '1', '--rate', '100', '--requests', '3');
  assert.deepEqual([held.workers[0].late, held.workers[0].latencies.length], [2, 3]);
});

test('streamed and whole bodies are checked against the /upload line or the echo', async () => {
  for (const upload of ['whole', 'stream']) {
    for (const download of ['whole', 'stream']) {
      const args = ['--workers', '2', '--requests', '3', '--warmup', '1', '--method', 'POST', '--body-size', '100000',
        '--upload', upload, '--download', download, '--chunk-size', '1000'];
      for (const [path, per] of [['/upload', uploadAnswer(uploadBody(100_000)).length], ['/echo', 100_000]]) {
        const g = await go('--url', `${base}${path}`, ...args);
        assert.deepEqual(g.workers.map((w) => [w.failureCount, w.bytes]), [[0, 3 * per], [0, 3 * per]],
          `${upload} ${download} ${path}: ${reasons(g)}`);
      }
      const r = reasons(await go('--url', `${base}/bad-echo`, ...args));
      assert.equal(r.length, 6, `${upload} ${download}: ${r}`);
      assert.ok(r[0].startsWith("Error: upload digest mismatch: got 'abcd"), r[0]);
    }
  }
  // over HTTP/1.1 a streamed body goes chunked, a whole one with its length
  const args = ['--url', `${base}/chunked`, '--workers', '1', '--requests', '2', '--method', 'PUT', '--body-size', '5000',
    '--chunk-size', '1000'];
  assert.deepEqual(reasons(await go(...args, '--upload', 'stream')), []);
  assert.deepEqual(reasons(await go(...args)), ['status 411', 'status 411']);
});

function targetsFile(...lines) {
  const dir = mkdtempSync(join(TMP, 'targets-'));
  writeFileSync(join(dir, 'body'), 'hello body');
  const path = join(dir, 'targets');
  writeFileSync(path, lines.join('\n').replaceAll('@BODY', `@${join(dir, 'body')}`));
  return path;
}

test('targets are cycled and their answers not compared', async () => {
  const path = targetsFile(`GET ${base}/n/1`, '# the body is sent, its answer is not compared',
    `POST ${base}/hello-body @BODY`, `PUT ${base}/wrong @BODY`, `GET ${base}/n/10`);
  for (const upload of ['whole', 'stream']) {
    for (const download of ['whole', 'stream']) {
      const g = await go('--url', `${base}/n/1`, '--targets', path, '--workers', '3', '--requests', '5', '--warmup', '2',
        '--upload', upload, '--download', download, '--chunk-size', '3');
      // answers of 1, 0, 6 ('3 nope') and 10 bytes; worker w's timed request k to target (w + k) mod 4
      assert.deepEqual(g.workers.map((w) => [w.failureCount, w.bytes]),
        [[0, 1 + 0 + 6 + 10 + 1], [0, 0 + 6 + 10 + 1 + 0], [0, 6 + 10 + 1 + 0 + 6]], `${upload} ${download}: ${reasons(g)}`);
    }
  }
  // a failing target is counted at its request's index
  const failing = targetsFile(`GET ${base}/n/1`, `GET ${base}/status`);
  const g = await go('--url', `${base}/n/1`, '--targets', failing, '--workers', '2', '--requests', '3', '--warmup', '1');
  assert.deepEqual(g.workers.map((w) => w.failures.map((f) => [f.index, f.reason])),
    [[[1, 'status 500']], [[0, 'status 500'], [2, 'status 500']]]);
});
