// --phases: the keys and sums of the document, against servers whose delays are known.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createSecureServer } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseOptions } from '../lib/options.mjs';
import { run } from '../lib/run.mjs';

const DRIVER = fileURLToPath(new URL('../driver.mjs', import.meta.url));
const HEADERS_AFTER_MS = 60; // the server waits this long before the headers (wait)
const BODY_AFTER_MS = 40; // and this long between the headers and the body (receive)

const hrMs = () => Number(process.hrtime.bigint()) / 1e6;
/** The delays /slow made, ms, as its timers fired (later than asked on a busy machine): [headers, body] each. */
const delays = [];

/** /slow: the delays above, after the request's body was read; /status: a 500; else 'hello' at once. */
function handler(req, res) {
  req.resume();
  req.on('end', () => {
    if (req.url === '/status') {
      res.writeHead(500).end();
    } else if (req.url === '/slow') {
      const read = hrMs();
      setTimeout(() => {
        res.writeHead(200, { 'content-length': 5 });
        res.flushHeaders();
        const headers = hrMs();
        setTimeout(() => {
          delays.push([headers - read, hrMs() - headers]);
          res.end('hello');
        }, BODY_AFTER_MS);
      }, HEADERS_AFTER_MS);
    } else {
      res.end('hello');
    }
  });
}

async function withServer(server, body) {
  // Nagle's algorithm would hold the body back until the client acknowledged the headers (a delayed ACK)
  server.on('connection', (socket) => socket.setNoDelay(true));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await body(server.address().port);
  } finally {
    server.close();
  }
}

/** The driver's document (a child process: this process's event loop serves it). */
async function documentOf(...args) {
  return JSON.parse((await promisify(execFile)(process.execPath, [DRIVER, ...args])).stdout);
}

const withinMs = (gotNs, wantMs) => Math.abs(gotNs / 1e6 - wantMs) <= 0.1 * wantMs + 1;

/** The mean delays of the server's last n answers from /slow, ms: [headers, body]. */
function served(n) {
  const last = delays.slice(-n);
  assert.equal(last.length, n);
  const mean = (i) => last.reduce((a, d) => a + d[i], 0) / n;
  const [headers, body] = [mean(0), mean(1)];
  // the server's own timers, late by at most a few ms on a quiet machine, and early by up to a ms (Node rounds a
  // timer's delay to whole ms; the test reads the high-resolution clock: 39.87 ms was seen for 40)
  const early = 1;
  assert.ok(headers >= HEADERS_AFTER_MS - early && body >= BODY_AFTER_MS - early, `served ${headers} and ${body} ms`);
  return [headers, body];
}

test('without --phases the document has no phases keys; with it, the keys and a sum per worker', async () => {
  await withServer(createServer(handler), async (port) => {
    for (const record of ['samples', 'histogram']) {
      const args = ['--url', `http://127.0.0.1:${port}/`, '--workers', '2', '--requests', '3', '--record', record];
      const without = await documentOf(...args);
      assert.equal(without.schema, 'clientbench.raw/4');
      assert.ok(!('phases' in without.client) && without.workers.every((w) => !('phases' in w)), record);
      const doc = await documentOf(...args, '--phases');
      assert.deepEqual(doc.client.phases, ['connect', 'tls', 'send', 'wait', 'receive']); // 127.0.0.1: no lookup
      for (const [i, w] of doc.workers.entries()) {
        assert.equal(w.phases.count, 3);
        assert.deepEqual(Object.keys(w.phases.sum_ns), doc.client.phases);
        const total = Object.values(w.phases.sum_ns).reduce((a, b) => a + b);
        assert.ok(total <= w.phases.latency_ns && w.phases.sum_ns.send > 0, JSON.stringify(w.phases));
        if (record === 'samples') {
          assert.equal(w.phases.latency_ns, w.latencies_ns.reduce((a, b) => a + b), `worker ${i}`);
        }
      }
    }
  });
});

test('wait and receive are the server’s delays; connect is of new connections only', async () => {
  await withServer(createServer(handler), async (port) => {
    for (const record of ['samples', 'histogram']) {
      const o = parseOptions(['--url', `http://127.0.0.1:${port}/slow`, '--workers', '2', '--requests', '4',
        '--warmup', '1', '--record', record, '--phases']);
      const g = await run(o);
      const [headers, body] = served(2 * 4); // the timed requests come after every warm-up one
      for (const w of g.workers) {
        const { count, sum_ns: sums } = w.toJSON(g.t0, record).phases;
        assert.equal(count, 4);
        assert.ok(withinMs(sums.wait / count, headers), `wait ${sums.wait / count / 1e6} ms, served ${headers} ms`);
        assert.ok(withinMs(sums.receive / count, body), `receive ${sums.receive / count / 1e6} ms, served ${body} ms`);
        assert.deepEqual([sums.connect, sums.tls], [0, 0]); // kept alive from the warm-up
      }
    }
    // a new connection for every request: connect > 0 in each
    for (const scope of [['--connection', 'new'], ['--client-scope', 'shared']]) {
      const o = parseOptions(['--url', `http://127.0.0.1:${port}/`, '--workers', '2', '--requests', '3', '--phases',
        ...scope]);
      const g = await run(o);
      const phases = g.workers.map((w) => w.toJSON(g.t0, 'samples').phases);
      assert.ok(phases.every((p) => p.count === 3), JSON.stringify(phases));
      if (scope[0] === '--connection') assert.ok(phases.every((p) => p.sum_ns.connect > 0), JSON.stringify(phases));
      // shared, no warm-up: each connection's connect is counted once, by the request written first on it
      else assert.ok(phases.some((p) => p.sum_ns.connect > 0), JSON.stringify(phases));
    }
    // a host name is looked up by the connector: dns+connect; failures add nothing
    const byName = await documentOf('--url', `http://localhost:${port}/`, '--workers', '1', '--requests', '2',
      '--connection', 'new', '--phases');
    assert.deepEqual(byName.client.phases, ['dns+connect', 'tls', 'send', 'wait', 'receive']);
    assert.ok(byName.workers[0].phases.count === 2 && byName.workers[0].phases.sum_ns['dns+connect'] > 0);
    const failed = await documentOf('--url', `http://127.0.0.1:${port}/status`, '--workers', '1', '--requests', '2',
      '--phases');
    assert.deepEqual(failed.workers[0].phases, {
      count: 0, latency_ns: 0, sum_ns: { connect: 0, tls: 0, send: 0, wait: 0, receive: 0 },
    });
  });
});

test('over TLS connect+tls is the connector’s time, on new connections; HTTP/2 too', async (t) => {
  const dir = tmpdir();
  const [key, cert] = [join(dir, `cb-phases-${process.pid}.key`), join(dir, `cb-phases-${process.pid}.pem`)];
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert,
      '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  } catch {
    t.skip('openssl is needed to make a certificate');
    return;
  }
  const server = createSecureServer({ key: readFileSync(key), cert: readFileSync(cert), allowHTTP1: true }, handler);
  try {
    await withServer(server, async (port) => {
      for (const http of ['1.1', '2']) {
        const args = ['--url', `https://127.0.0.1:${port}/slow`, '--workers', '2', '--requests', '3', '--ca-file', cert,
          '--http', http, '--phases'];
        assert.deepEqual(parseOptions(args).phaseKeys, ['connect+tls', 'send', 'wait', 'receive']);
        for (const connection of ['keep-alive', 'new']) {
          const o = parseOptions([...args, '--warmup', '1', '--connection', connection]);
          const g = await run(o);
          assert.equal(g.protocol, http === '2' ? 'HTTP/2' : 'HTTP/1.1');
          const [headers, body] = served(2 * 3);
          for (const w of g.workers) {
            const { count, sum_ns: sums } = w.toJSON(g.t0, 'samples').phases;
            const what = `${http} ${connection}: ${JSON.stringify(sums)}, served ${headers} and ${body} ms`;
            assert.equal(count, 3);
            assert.equal(sums['connect+tls'] > 0, connection === 'new', what);
            assert.ok(withinMs(sums.wait / count, headers) && withinMs(sums.receive / count, body), what);
          }
        }
      }
      // one shared Agent over HTTP/2: no phases (which request a new connection served is not told)
      const shared = parseOptions(['--url', `https://127.0.0.1:${port}/`, '--ca-file', cert, '--http', '2',
        '--client-scope', 'shared', '--phases']);
      assert.equal(shared.phaseKeys, null);
    });
  } finally {
    rmSync(key, { force: true });
    rmSync(cert, { force: true });
  }
});

test('the connector’s phase is named by what it spans', () => {
  const keys = (url, ...more) => parseOptions(['--url', url, '--phases', ...more]).phaseKeys;
  assert.deepEqual(keys('http://127.0.0.1:1/'), ['connect', 'tls', 'send', 'wait', 'receive']);
  assert.deepEqual(keys('http://[::1]:1/'), ['connect', 'tls', 'send', 'wait', 'receive']);
  assert.deepEqual(keys('http://localhost:1/'), ['dns+connect', 'tls', 'send', 'wait', 'receive']);
  assert.deepEqual(keys('https://127.0.0.1:1/'), ['connect+tls', 'send', 'wait', 'receive']);
  assert.deepEqual(keys('https://localhost:1/', '--http', '2'), ['dns+connect+tls', 'send', 'wait', 'receive']);
  assert.equal(keys('https://localhost:1/', '--http', '2', '--client-scope', 'shared'), null);
  assert.equal(parseOptions(['--url', 'http://127.0.0.1:1/']).phaseKeys, null);
});
