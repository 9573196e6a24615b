// The phases of a request (--phases, docs/raw-format.md, contract version 4), told by undici itself: the
// dispatch handler fetch gives the Agent is wrapped in one that takes the driver's clock at undici's calls, and
// the Agent's connector is timed. Without --phases nothing here runs: no wrapper, no clock read.
//
//   connect  the Agent's connector, from its call to its callback: the TCP connect and, over https://, the TLS
//            handshake (undici's connector does both and tells nothing between them: `connect+tls`), and the
//            name's lookup when a URL's host is a name (net.connect resolves it: `dns+connect...`)
//   send     onConnect (undici starts writing the request on its connection) -> onRequestSent (its last byte
//            written: to the socket over HTTP/1.1; over HTTP/2 handed to Node's http2 stream, which nghttp2
//            writes out after)
//   wait     onRequestSent -> onResponseStarted: over HTTP/1.1 llhttp's message begin, in the first read that
//            returns bytes of the answer; over HTTP/2 the stream's 'response', its headers read (Node's http2
//            tells no earlier byte; the headers of our answers come in one read)
//   receive  onResponseStarted -> the body read to its end
import diagnosticsChannel from 'node:diagnostics_channel';
import { isIP } from 'node:net';
import { now } from './clock.mjs';

/** client.phases for o: null without --phases, and with --client-scope shared over HTTP/2 (below). The first key
 * is the connector's time, named by what it spans; over http:// only, `tls` is listed on its own, 0. */
export function phaseKeys(o) {
  // one shared Agent over HTTP/2: undici tells no request which new connection it was written on (HTTP/1.1
  // tells it through the 'undici:client:sendHeaders' channel), so a connection's connect could not be given
  // to the request it was made for
  if (!o.phases || (o.clientScope === 'shared' && o.http === '2')) return null;
  const urls = o.targets.map((t) => new URL(t.url));
  const named = urls.some((u) => isIP(u.hostname.replace(/^\[(.*)\]$/, '$1')) === 0);
  const tls = urls.some((u) => u.protocol === 'https:');
  const connect = [named ? 'dns' : null, 'connect', tls ? 'tls' : null].filter((k) => k !== null).join('+');
  return tls ? [connect, 'send', 'wait', 'receive'] : [connect, 'tls', 'send', 'wait', 'receive'];
}

let writing = null; // the request whose onConnect ran last: undici publishes its sendHeaders right after
let subscribed = false;

/** Each new connection's connector time, for the request it was made for: with a worker's own Agent, the one
 * request it has in flight; with a shared one, the first request written on the connection. */
export class ConnectTimes {
  constructor(shared) {
    this.shared = shared;
    this.inFlight = null;
    this.bySocket = shared ? new WeakMap() : null;
    if (shared && !subscribed) {
      subscribed = true;
      diagnosticsChannel.subscribe('undici:client:sendHeaders', ({ socket }) => {
        const rec = writing;
        writing = null;
        const ns = rec?.connectTimes.bySocket?.get(socket);
        if (ns !== undefined) {
          rec.connect += ns;
          rec.connectTimes.bySocket.delete(socket);
        }
      });
    }
  }

  connected(socket, ns) {
    if (this.shared) this.bySocket.set(socket, ns);
    else if (this.inFlight !== null) this.inFlight.connect += ns;
  }
}

/** One request's times, ns of the driver's clock. */
export class RequestPhases {
  constructor(connectTimes) {
    this.connectTimes = connectTimes;
    this.dispatches = 0;
    this.writes = 0;
    this.connect = 0;
    this.written = 0;
    this.sent = 0;
    this.started = 0;
    this.end = 0;
    if (!connectTimes.shared) connectTimes.inFlight = this;
  }

  /** The dispatcher to give fetch: `agent`'s, with fetch's handler wrapped. */
  dispatcher(agent) {
    return {
      dispatch: (options, handler) => {
        this.dispatches++;
        return agent.dispatch(options, new PhaseHandler(handler, this));
      },
    };
  }

  /** The request's phases in the order of `keys` (phaseKeys), or null when they cannot be told: fetch
   * dispatched more than once (a redirect), undici wrote the request more than once, or a call did not come. */
  durations(keys) {
    if (this.dispatches !== 1 || this.writes !== 1 || this.sent === 0 || this.started === 0) return null;
    // the answer's first byte before the request's last one (a server that answers while the body comes in):
    // send ends at the first byte, wait is 0, and the rest of the writing overlaps receive, so that no time is
    // counted twice
    const sent = Math.min(this.sent, this.started);
    const phases = {
      send: Math.max(0, sent - this.written),
      wait: this.started - sent,
      receive: Math.max(0, this.end - this.started),
      tls: 0, // listed on its own over http:// only
    };
    return keys.map((k, i) => (i === 0 ? this.connect : phases[k]));
  }
}

/** fetch's dispatch handler, its calls passed on as they come (fetch's handler uses `this`), timed on the way. */
class PhaseHandler {
  constructor(handler, rec) {
    this.handler = handler;
    this.rec = rec;
  }

  onConnect(abort, context) {
    this.rec.writes++;
    this.rec.written = now();
    writing = this.rec;
    return this.handler.onConnect(abort, context);
  }

  onRequestSent() {
    this.rec.sent = now();
    return this.handler.onRequestSent?.();
  }

  onResponseStarted() {
    if (this.rec.started === 0) this.rec.started = now();
    return this.handler.onResponseStarted?.();
  }

  onBodySent(chunk) {
    return this.handler.onBodySent?.(chunk);
  }

  onHeaders(statusCode, headers, resume, statusText) {
    return this.handler.onHeaders(statusCode, headers, resume, statusText);
  }

  onData(chunk) {
    return this.handler.onData(chunk);
  }

  onComplete(trailers) {
    return this.handler.onComplete(trailers);
  }

  onError(err) {
    return this.handler.onError(err);
  }

  onUpgrade(statusCode, headers, socket) {
    return this.handler.onUpgrade(statusCode, headers, socket);
  }
}
