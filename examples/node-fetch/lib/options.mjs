// The contract's command line (docs/raw-format.md, "Command line"): the flags, their checks (bad usage is one
// line on stderr naming the flag, exit status 2), what each request sends (the workload's one request, or the
// targets file's), and the TLS options every worker's Agent connects with.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Pattern, uploadBody } from './body.mjs';
import { phaseKeys } from './phases.mjs';
import { readTargets } from './targets.mjs';

const MAX_BODY_SIZE = 2 ** 30; // the server's /upload accepts up to 1 GiB
const MAX_RATE_PER_WORKER = 1_000_000; // a worker's schedule may not be finer than 1 µs
const DEFAULT_REQUESTS = 100;
const MAX_TIMEOUT_S = 86_400; // a day: a longer latency does not fit the runner's histograms
const MAX_SEED = (1n << 64n) - 1n; // SplitMix64's state
const DEFAULT_CHUNK_SIZE = 65536;
const MAX_CHUNK_SIZE = 16 * 2 ** 20; // 16 MiB: the contract's bound on a streamed body's chunk
export { MAX_BODY_SIZE };

/** Bad usage (exit 2), in the contract's wording (python/clientbench/schema/contract.json, the table of bad usage in
 * docs/raw-format.md). */
export class UsageError extends Error {}

/** What this client cannot do at all (docs/raw-format.md, exit status 3): `unsupported: <what>`. */
export class Unsupported extends Error {}

const FLAGS = {
  url: { type: 'string' },
  workers: { type: 'string', default: '10' },
  requests: { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string', default: '0' },
  timeout: { type: 'string', default: '30' },
  connection: { type: 'string', default: 'keep-alive' },
  'ca-file': { type: 'string' },
  insecure: { type: 'boolean', default: false },
  rate: { type: 'string' },
  arrival: { type: 'string' }, // without --rate: bad usage; default uniform
  seed: { type: 'string' }, // likewise; default 1
  method: { type: 'string' }, // default GET; not with --targets
  'body-size': { type: 'string' },
  record: { type: 'string', default: 'samples' },
  'client-scope': { type: 'string', default: 'per-worker' },
  http: { type: 'string', default: '1.1' },
  upload: { type: 'string', default: 'whole' },
  download: { type: 'string', default: 'whole' },
  'chunk-size': { type: 'string', default: String(DEFAULT_CHUNK_SIZE) },
  targets: { type: 'string' },
  phases: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
};

export const USAGE = `usage: node-fetch-driver --url URL [--workers W] [--requests N | --duration SECONDS] [--warmup K]
       [--timeout SECONDS] [--connection keep-alive|new] [--ca-file PATH | --insecure]
       [--rate R [--arrival uniform|poisson] [--seed S]] [--method GET|POST|PUT] [--body-size BYTES]
       [--record samples|histogram] [--client-scope per-worker|shared] [--http 1.1|2|3]
       [--upload whole|stream] [--download whole|stream] [--chunk-size BYTES] [--targets FILE] [--phases]
(the clientbench driver contract: docs/raw-format.md)`;

/** A whole number from min to max (null: no bound above). */
function whole(flag, text, min, max = null) {
  const v = Number(text);
  if (!/^-?\d+$/.test(text.trim()) || !Number.isSafeInteger(v) || v < min || (max !== null && v > max)) {
    const range = max === null ? `>= ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`--${flag}: must be a whole number ${range}, got '${text}'`);
  }
  return v;
}

/** A finite number above 0, at most max (null: no bound above). */
function positive(flag, text, max = null) {
  const v = Number(text);
  if (text.trim() === '' || !(v > 0) || !Number.isFinite(v) || (max !== null && v > max)) {
    const most = max === null ? '' : `, at most ${max}`;
    throw new UsageError(`--${flag}: must be a positive number${most}, got '${text}'`);
  }
  return v;
}

function seed(text) {
  const v = /^\d+$/.test(text.trim()) ? BigInt(text.trim()) : -1n;
  if (v < 0n || v > MAX_SEED) throw new UsageError(`--seed: must be a whole number from 0 to ${MAX_SEED}, got '${text}'`);
  return v;
}

/** --url: an absolute http:// or https:// URL with a host, and a port from 1 to 65535 if it has one
 * (docs/raw-format.md); what fetch refuses beyond that is a counted failure (InvalidUrl). */
function checkUrl(text) {
  const why = urlProblem(text);
  if (why !== null) throw new UsageError(`--url: ${why}`);
}

/** What makes `text` unusable as a request's URL (null when it is usable). The authority is read first, as
 * RFC 3986 has it: URL() refuses an empty host or a port above 65535 with one message for all. */
export function urlProblem(text) {
  if (/[\x00-\x20\x7f]/.test(text)) return `must not contain whitespace or control characters, got '${text}'`;
  const parts = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/.exec(text);
  if (parts === null || !['http', 'https'].includes(parts[1].toLowerCase())) {
    return `must be an http:// or https:// URL, got '${text}'`;
  }
  const hostPort = parts[2].slice(parts[2].lastIndexOf('@') + 1);
  const m = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(hostPort);
  if (m[1] === '' || m[1] === '[]') return `has no host, got '${text}'`;
  // an empty port ("http://h:/") is the scheme's (RFC 3986)
  if (m[2] !== undefined && m[2] !== '' && !(/^\d+$/.test(m[2]) && Number(m[2]) >= 1 && Number(m[2]) <= 65535)) {
    return `the port must be from 1 to 65535, got '${text}'`;
  }
  try {
    new URL(text);
  } catch (err) {
    return `is not a URL (${err.message}), got '${text}'`;
  }
  return null;
}

/** `--flag value` as `--flag=value` for the flags that take a value (the others as they are). */
function joined(argv) {
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].startsWith('--') ? argv[i].slice(2) : null;
    if (FLAGS[name]?.type === 'string' && i + 1 < argv.length) out.push(`${argv[i]}=${argv[++i]}`);
    else out.push(argv[i]);
  }
  return out;
}

/** parseArgs's messages in the contract's wording: `--flag: ...` first. */
function parseError(err) {
  const flag = /'(--?[^' =]+)/.exec(err.message)?.[1] ?? '';
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `${flag}: unknown flag`;
  if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && /argument missing/.test(err.message)) {
    return `${flag}: needs a value`;
  }
  return err.message.split(/\.\s/)[0]; // node's message, to its first sentence: one line
}

/** A --ca-file's certificates (PEM CERTIFICATE blocks that parse: a CRL alone has none), or a UsageError. */
function caFile(path) {
  let pem;
  try {
    pem = readFileSync(path, 'latin1');
  } catch (err) {
    throw new UsageError(`--ca-file: cannot read ${path} (${err.message})`);
  }
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  const certificates = blocks.filter((block) => {
    try {
      return new X509Certificate(block) !== null;
    } catch {
      return false;
    }
  });
  if (certificates.length === 0) throw new UsageError(`--ca-file: no PEM certificate in ${path}`);
  return certificates.join('\n'); // replaces Node's roots
}

const isHttps = (url) => url.toLowerCase().startsWith('https://');

function oneOf(flag, text, ...choices) {
  if (!choices.includes(text)) throw new UsageError(`--${flag}: must be one of ${choices.join(', ')}, got '${text}'`);
  return text;
}

/** The parsed and checked flags; null for --help. Throws UsageError. */
export function parseOptions(argv) {
  let values;
  // `--flag value` as `--flag=value`: parseArgs calls a value that starts with '-' ambiguous, and `--warmup -1` is a
  // value out of range (the contract's wording), not a missing one
  try {
    ({ values } = parseArgs({ args: joined(argv), options: FLAGS, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new UsageError(parseError(err));
  }
  if (values.help) return null;
  if (values.url === undefined) throw new UsageError('--url: required');
  checkUrl(values.url);
  for (const flag of ['arrival', 'seed']) {
    if (values[flag] !== undefined && values.rate === undefined) {
      throw new UsageError(`--${flag} goes with --rate (an open loop)`);
    }
  }
  const o = {
    url: values.url,
    workers: whole('workers', values.workers, 1),
    requests: values.requests === undefined ? null : whole('requests', values.requests, 1),
    duration: values.duration === undefined ? null : positive('duration', values.duration),
    warmup: whole('warmup', values.warmup, 0),
    timeout: positive('timeout', values.timeout, MAX_TIMEOUT_S),
    connection: oneOf('connection', values.connection, 'keep-alive', 'new'),
    caFile: values['ca-file'] ?? null,
    insecure: values.insecure,
    rate: values.rate === undefined ? null : positive('rate', values.rate),
    arrival: oneOf('arrival', values.arrival ?? 'uniform', 'uniform', 'poisson'),
    seed: values.seed === undefined ? 1n : seed(values.seed), // a BigInt: SplitMix64's state
    method: oneOf('method', values.method ?? 'GET', 'GET', 'POST', 'PUT'),
    bodySize: values['body-size'] === undefined ? null : whole('body-size', values['body-size'], 0, MAX_BODY_SIZE),
    record: oneOf('record', values.record, 'samples', 'histogram'),
    clientScope: oneOf('client-scope', values['client-scope'], 'per-worker', 'shared'),
    http: oneOf('http', values.http, '1.1', '2', '3'),
    upload: oneOf('upload', values.upload, 'whole', 'stream'),
    download: oneOf('download', values.download, 'whole', 'stream'),
    chunkSize: whole('chunk-size', values['chunk-size'], 1, MAX_CHUNK_SIZE),
    targetsFile: values.targets ?? null,
    phases: values.phases,
  };
  if (o.duration !== null && o.rate === null) throw new UsageError('--duration goes with --rate (an open loop)');
  if (o.duration !== null && o.requests !== null) throw new UsageError('--duration and --requests exclude each other');
  if (o.duration === null && o.requests === null) o.requests = DEFAULT_REQUESTS;
  if (o.rate !== null && o.rate / o.workers > MAX_RATE_PER_WORKER) {
    throw new UsageError(
      `--rate: at most ${MAX_RATE_PER_WORKER} requests/s per worker (a schedule finer than 1 µs), ` +
        `got ${o.rate} over ${o.workers} workers`,
    );
  }
  if (o.connection === 'new' && o.clientScope === 'shared') {
    throw new UsageError('--connection new does not go with --client-scope shared (a shared client is made once)');
  }
  if (o.targetsFile !== null && values.method !== undefined) throw new UsageError('--method goes without --targets (each target names its method)');
  if (o.targetsFile !== null && o.bodySize !== null) throw new UsageError('--body-size goes without --targets (each target names its body)');
  if (o.method === 'GET' && o.bodySize > 0) throw new UsageError('--body-size goes with --method POST or PUT (a GET sends no body)');
  if (o.upload === 'stream' && o.method === 'GET' && o.targetsFile === null) {
    throw new UsageError('--upload stream goes with --method POST or PUT, or --targets (a GET sends no body)');
  }
  if (o.http === '3' && o.targetsFile === null && !isHttps(o.url)) {
    throw new UsageError(`--http: 3 is HTTP/3 over QUIC, which needs https:// URLs, got '${o.url}'`);
  }
  if (o.caFile !== null && o.insecure) throw new UsageError('--ca-file and --insecure exclude each other');
  o.bodySize ??= 0;
  o.pattern = new Pattern(o.chunkSize);
  o.body = o.expected = null;
  if (o.targetsFile !== null) {
    o.targets = readTargets(o.targetsFile);
    const plain = o.targets.find((t) => !isHttps(t.url));
    if (o.http === '3' && plain) {
      throw new UsageError(`--http: 3 is HTTP/3 over QUIC, which needs https:// URLs, got '${plain.url}' in ${o.targetsFile}`);
    }
  } else {
    // the workload's one request: --url with --method and the pattern body, whose answer is checked
    const target = { method: o.method, url: o.url, body: null, size: 0, check: false };
    if (o.method !== 'GET') {
      if (o.upload === 'whole') o.body = target.body = uploadBody(o.bodySize);
      o.expected = o.pattern.answer(o.bodySize); // hashed chunk by chunk: a streamed body is never whole
      Object.assign(target, { size: o.bodySize, check: true });
    }
    o.targets = [target];
  }
  o.tls = { rejectUnauthorized: !o.insecure };
  if (o.caFile !== null) o.tls.ca = caFile(o.caFile);
  // what undici cannot do, once the command line is known to be good (docs/raw-format.md: exit 2 wins)
  if (o.http === '3') throw new Unsupported('HTTP/3 (undici 6 has no HTTP/3)');
  const plain = o.targets.find((t) => !isHttps(t.url));
  if (o.http === '2' && plain) {
    throw new Unsupported(`HTTP/2 over http:// (prior knowledge, ${plain.url}): undici 6 speaks HTTP/2 over TLS only`);
  }
  o.phaseKeys = phaseKeys(o); // client.phases (null: none recorded)
  return o;
}

export { uploadAnswer, uploadBody } from './body.mjs'; // where the tests and users have found them
