// The driver as a program: exit statuses, one-line errors, HTTP/2 and a shared client.
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createSecureServer } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseOptions } from '../lib/options.mjs';
import { run } from '../lib/run.mjs';

/** The tests' files, removed when the file's tests are done. */
const TMP = mkdtempSync(join(tmpdir(), 'cb-node-test-'));
after(() => rmSync(TMP, { recursive: true, force: true }));

const DRIVER = fileURLToPath(new URL('../driver.mjs', import.meta.url));
const driver = (...args) => spawnSync(process.execPath, [DRIVER, ...args], { encoding: 'utf8' });

async function listen(server) {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server.address().port;
}

test('usage errors exit 2, a mode undici lacks exits 3, help exits 0', () => {
  const usage = driver('--url', 'http://127.0.0.1:1/', '--rate', '0');
  assert.equal(usage.status, 2);
  assert.equal(usage.stdout, '');
  assert.match(usage.stderr, /^node-fetch-driver: error: --rate: [^\n]*\n$/);
  const h2c = driver('--url', 'http://127.0.0.1:1/', '--http', '2');
  assert.equal(h2c.status, 3);
  assert.equal(h2c.stdout, '');
  assert.match(h2c.stderr, /^unsupported: HTTP\/2 over http:\/\/[^\n]*\n$/);
  const help = driver('--help');
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^usage: node-fetch-driver --url URL/);
});

test('the document of a run', async () => {
  const server = createServer((req, res) => res.end('hello'));
  const port = await listen(server);
  try {
    // asynchronously: this process's event loop serves the driver's requests
    const args = [DRIVER, '--url', `http://127.0.0.1:${port}/`, '--workers', '2', '--requests', '3'];
    const { stdout } = await promisify(execFile)(process.execPath, args);
    const doc = JSON.parse(stdout);
    assert.equal(doc.schema, 'clientbench.raw/4');
    assert.equal(doc.client.mode, 'async');
    assert.equal(doc.client.protocol, 'HTTP/1.1');
    assert.deepEqual([doc.workload.workers, doc.workload.requests, doc.workload.client_scope, doc.workload.http],
      [2, 3, 'per-worker', '1.1']);
    assert.ok(doc.cpu_ns > 0 && doc.peak_rss_kib > 0);
    assert.deepEqual(doc.workers.map((w) => [w.count, w.bytes, w.start_ns.length]), [[3, 15, 3], [3, 15, 3]]);
  } finally {
    server.close();
  }
});

test('the document records the bodies’ flags and the targets file', async () => {
  const server = createServer((req, res) => req.pipe(res)); // an echo
  const port = await listen(server);
  const path = join(mkdtempSync(join(TMP, 'targets-')), 'targets');
  writeFileSync(path, `POST http://127.0.0.1:${port}/\n`);
  try {
    const url = `http://127.0.0.1:${port}/`;
    const run = (...args) => promisify(execFile)(process.execPath, [DRIVER, '--url', url, '--workers', '1', '--requests', '2', ...args]);
    const streamed = JSON.parse((await run('--method', 'PUT', '--body-size', '5', '--upload', 'stream', '--download', 'stream',
      '--chunk-size', '2')).stdout);
    const w = streamed.workload;
    assert.deepEqual([w.upload, w.download, w.chunk_size, w.targets], ['stream', 'stream', 2, null]);
    assert.deepEqual([streamed.workers[0].bytes, streamed.workers[0].failure_count], [10, 0]); // the echo, checked
    const targets = JSON.parse((await run('--targets', path)).stdout).workload;
    assert.deepEqual([targets.upload, targets.download, targets.chunk_size, targets.targets, targets.method],
      ['whole', 'whole', 65536, path, 'GET']);
  } finally {
    server.close();
  }
});

test('the document records the seed of a Poisson schedule only, every digit of it', async () => {
  const server = createServer((req, res) => res.end('hello'));
  const port = await listen(server);
  try {
    for (const [arrival, want] of [['uniform', 'null'], ['poisson', '18446744073709551615']]) {
      const args = [DRIVER, '--url', `http://127.0.0.1:${port}/`, '--workers', '1', '--rate', '1000', '--requests', '2',
        '--arrival', arrival, '--seed', '18446744073709551615'];
      const { stdout } = await promisify(execFile)(process.execPath, args);
      assert.match(stdout, new RegExp(`"arrival":"${arrival}","seed":${want},`));
    }
  } finally {
    server.close();
  }
});

test('a shared client serves every worker on at most W connections', async () => {
  let connections = 0;
  const server = createServer((req, res) => res.end('hello'));
  server.on('connection', () => connections++);
  const port = await listen(server);
  try {
    const g = await run(parseOptions(['--url', `http://127.0.0.1:${port}/`, '--workers', '4', '--requests', '10',
      '--client-scope', 'shared']));
    assert.deepEqual(g.workers.map((w) => [w.latencies.length, w.failureCount]), Array(4).fill([10, 0]));
    assert.ok(connections >= 1 && connections <= 4, `${connections} connections`);
  } finally {
    server.close();
  }
});

test('--http 2 offers h2 over TLS and records the protocol', async (t) => {
  const dir = tmpdir();
  const [key, cert] = [join(dir, `cb-h2-${process.pid}.key`), join(dir, `cb-h2-${process.pid}.pem`)];
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert,
      '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  } catch {
    t.skip('openssl is needed to make a certificate');
    return;
  }
  const server = createSecureServer({ key: readFileSync(key), cert: readFileSync(cert), allowHTTP1: true },
    (req, res) => (req.method === 'POST' ? req.pipe(res) : res.end('hello'))); // POST: an echo
  const port = await listen(server);
  try {
    const url = `https://127.0.0.1:${port}/`;
    const h2 = await run(parseOptions(['--url', url, '--workers', '2', '--requests', '3', '--http', '2',
      '--ca-file', cert]));
    assert.deepEqual([h2.protocol, h2.workers[0].failureCount], ['HTTP/2', 0]);
    assert.equal(h2.tls.version, 'TLSv1.3');
    const streamed = await run(parseOptions(['--url', url, '--workers', '2', '--requests', '3', '--http', '2',
      '--ca-file', cert, '--method', 'POST', '--body-size', '100000', '--upload', 'stream', '--download', 'stream']));
    assert.deepEqual([streamed.protocol, streamed.workers.map((w) => [w.failureCount, w.bytes])],
      ['HTTP/2', [[0, 300_000], [0, 300_000]]]);
    const h1 = await run(parseOptions(['--url', url, '--workers', '1', '--requests', '2', '--insecure']));
    assert.deepEqual([h1.protocol, h1.workers[0].failureCount], ['HTTP/1.1', 0]);
  } finally {
    server.close();
  }
});
