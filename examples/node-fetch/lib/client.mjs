// A worker's client: its own undici Agent (one connection: connections 1, pipelining 1) handed to Node's
// built-in fetch as its dispatcher, or with --client-scope shared one Agent for every worker (up to W
// connections); and one request with the whole body read.
import { Agent, buildConnector } from 'undici';
import { DigestMismatch } from './failures.mjs';

/** An Agent and what its connections negotiated: `tls` ({version, cipher}) and `protocol` (ALPN's pick). */
export function makeAgent(o, shared = false) {
  const timeoutMs = o.timeout * 1000;
  const connector = buildConnector({ ...o.tls, timeout: timeoutMs, allowH2: o.http === '2' }); // ALPN offers h2
  const seen = { tls: null, protocol: 'HTTP/1.1' };
  const agent = new Agent({
    // shared: one connection per worker at most; HTTP/2 multiplexes the workers' streams on one (undici's
    // default pipelining: 1 over HTTP/1.1, unbounded over HTTP/2)
    connections: shared ? o.workers : 1,
    ...(shared ? {} : { pipelining: 1 }),
    allowH2: o.http === '2',
    // the whole request is bounded by the abort timer of request(); undici's own idle timeouts are off
    headersTimeout: 0,
    bodyTimeout: 0,
    // a connection idle between two open-loop requests is kept (undici's default closes it after 4 s)
    keepAliveTimeout: 600_000,
    keepAliveMaxTimeout: 600_000,
    connect(options, callback) {
      connector(options, (err, socket) => {
        if (!err && typeof socket.getProtocol === 'function') {
          seen.tls ??= { version: socket.getProtocol(), cipher: socket.getCipher()?.standardName ?? null };
          seen.protocol = socket.alpnProtocol === 'h2' ? 'HTTP/2' : 'HTTP/1.1';
        }
        callback(err, socket);
      });
    },
  });
  return { agent, seen };
}

/** One request of the workload with `agent`: a GET, or with --method POST/PUT an upload whose answer is
 * checked (a 200 with another body is a DigestMismatch). Resolves to {status, bytes}; rejects on failure,
 * after --timeout seconds at the latest (a TimeoutError). */
export async function request(agent, o) {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`request timed out after ${o.timeout} s`, 'TimeoutError')),
    o.timeout * 1000,
  );
  try {
    if (o.body === null) {
      const r = await fetch(o.url, { dispatcher: agent, signal: controller.signal });
      const body = await r.arrayBuffer(); // the whole body
      return { status: r.status, bytes: body.byteLength };
    }
    const r = await fetch(o.url, { method: o.method, body: o.body, dispatcher: agent, signal: controller.signal });
    const body = Buffer.from(await r.arrayBuffer());
    if (r.status === 200 && !body.equals(o.expected)) throw new DigestMismatch(body, o.expected);
    return { status: r.status, bytes: body.length };
  } finally {
    clearTimeout(timer);
  }
}
