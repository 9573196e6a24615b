#!/usr/bin/env node
// node-fetch-driver: a clientbench driver (docs/raw-format.md, clientbench.raw/4) for Node.js's built-in fetch
// (undici), to run as an external row: `clientbench run --driver node-fetch='node examples/node-fetch/driver.mjs'`.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { USAGE, Unsupported, UsageError, parseOptions } from './lib/options.mjs';
import { documentJSON } from './lib/record.mjs';
import { run } from './lib/run.mjs';

const PROG = 'node-fetch-driver';

function peakRssKiB() {
  try {
    const m = /^VmHWM:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

export function document(o, g) {
  const open = o.rate !== null;
  const agentVersion = createRequire(import.meta.url)('undici/package.json').version;
  const doc = {
    schema: 'clientbench.raw/4',
    client: {
      language: 'JavaScript',
      library: 'fetch (undici)',
      library_version: process.versions.undici, // the undici inside Node, whose fetch this is
      mode: 'async',
      gil: null,
      tls: g.tls,
      protocol: g.protocol,
      node: { version: process.version, undici_agent: agentVersion },
      ...(o.phaseKeys === null ? {} : { phases: o.phaseKeys }),
    },
    workload: {
      url: o.url,
      workers: o.workers,
      requests: o.requests,
      duration_s: o.duration,
      warmup: o.warmup,
      timeout_s: o.timeout,
      connection: o.connection,
      loop: open ? 'open' : 'closed',
      rate: o.rate,
      arrival: open ? o.arrival : null,
      seed: open && o.arrival === 'poisson' ? o.seed : null, // a BigInt (JSON below); uniform schedules draw nothing
      method: o.method,
      body_size: o.bodySize,
      record: o.record,
      client_scope: o.clientScope,
      http: o.http,
      upload: o.upload,
      download: o.download,
      chunk_size: o.chunkSize,
      targets: o.targetsFile,
    },
    wall_ns: g.wallNs,
    cpu_ns: g.cpuNs,
    workers: g.workers.map((w) => w.toJSON(g.t0, o.record)),
  };
  const rss = peakRssKiB();
  if (rss !== null) doc.peak_rss_kib = rss;
  return doc;
}

async function main(argv) {
  let o;
  try {
    o = parseOptions(argv);
  } catch (err) {
    if (err instanceof Unsupported) {
      process.stderr.write(`unsupported: ${err.message}\n`);
      return 3;
    }
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${PROG}: error: ${err.message}\n`);
    return 2;
  }
  if (o === null) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  process.stdout.write(`${documentJSON(document(o, await run(o)))}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`${PROG}: internal error: ${err?.stack ?? err}\n`);
    process.exitCode = 1;
  },
);
