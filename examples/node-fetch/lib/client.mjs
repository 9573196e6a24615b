// A worker's client: its own undici Agent (one connection: connections 1, pipelining 1) handed to Node's
// built-in fetch as its dispatcher, or with --client-scope shared one Agent for every worker (up to W
// connections); and one request with its body sent (whole or streamed) and the whole answer read (into one
// buffer or in chunks).
import { Agent, buildConnector } from 'undici';
import { AnswerCheck, readBody, streamedBody } from './body.mjs';
import { now } from './clock.mjs';
import { ConnectTimes } from './phases.mjs';

/** An Agent and what its connections negotiated: `tls` ({version, cipher}) and `protocol` (ALPN's pick); with
 * --phases, `connects`: each new connection's connector time, for the request it was made for. */
export function makeAgent(o, shared = false) {
  const timeoutMs = o.timeout * 1000;
  const connector = buildConnector({ ...o.tls, timeout: timeoutMs, allowH2: o.http === '2' }); // ALPN offers h2
  const connects = o.phaseKeys ? new ConnectTimes(shared) : null;
  const seen = { tls: null, protocol: 'HTTP/1.1', connects };
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
      const start = connects === null ? 0 : now();
      connector(options, (err, socket) => {
        if (!err && connects !== null) connects.connected(socket, now() - start);
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

/** One request, `target` (the workload's, or a target's of --targets), with `agent`: its body sent whole or as
 * a stream of --chunk-size chunks (`duplex: 'half'`: the request's body is sent before the answer is read), the
 * answer read whole or in chunks. The workload's upload has its 200 answer checked (a DigestMismatch when it is
 * neither the /upload line nor the body echoed); a target's answer is not compared. Resolves to {status, bytes,
 * phases}: with a RequestPhases `rec` (--phases), the request's phases in the order of o.phaseKeys (null when
 * they cannot be told), else null; rejects on failure, after --timeout seconds at the latest (a TimeoutError). */
export async function request(agent, o, target, rec = null) {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`request timed out after ${o.timeout} s`, 'TimeoutError')),
    o.timeout * 1000,
  );
  try {
    const dispatcher = rec === null ? agent : rec.dispatcher(agent);
    const init = { method: target.method, dispatcher, signal: controller.signal };
    if (target.method !== 'GET' && o.upload === 'stream') {
      init.body = streamedBody(target.body ?? o.pattern, target.size, o.chunkSize);
      init.duplex = 'half';
    } else if (target.body !== null) {
      init.body = target.body;
    }
    const r = await fetch(target.url, init);
    // another status than 200 is the failure, its body not compared
    const check = target.check && r.status === 200 ? new AnswerCheck(o.expected, o.pattern, target.size) : null;
    const bytes = await readBody(r, o.download === 'stream' ? o.chunkSize : null, check);
    if (rec !== null) rec.end = now();
    check?.verify();
    return { status: r.status, bytes, phases: rec?.durations(o.phaseKeys) ?? null };
  } finally {
    clearTimeout(timer);
  }
}
