// Failure reasons (docs/raw-format.md, "Failure reasons"): "status <code>" for a response other than 200,
// otherwise "<Class>: <message>" with the classes every harness shares. fetch rejects with a TypeError
// ("fetch failed", "terminated") whose `cause` chain holds undici's or the socket's error and its code.

/** An upload answered with 200 but neither with the length and digest of the body sent nor with the body itself
 * (an echo of `size` bytes). `got` is the answer's start (101 bytes are enough to show it), `nbytes` its length. */
export class DigestMismatch extends Error {
  constructor(got, expected, size = null, nbytes = got.length) {
    const shown = got.length <= 100 ? got.toString('latin1') : `${got.subarray(0, 100).toString('latin1')}...`;
    const echo = size === null ? '' : ` or the ${size} bytes sent`;
    super(`upload digest mismatch: got '${shown}', expected '${expected.toString()}'${echo}`);
    this.name = 'DigestMismatch';
    this.nbytes = nbytes;
  }
}

/** A request that ended after --timeout, which bounds the whole request: a TimeoutError, whatever it returned
 * (the abort timer stops a request at T; the harness's own clock may read a little later). */
export class Overtime extends Error {
  constructor(tookNs, timeoutS) {
    super(`the request took ${(tookNs / 1e9).toFixed(3)} s, past --timeout ${timeoutS} s`);
    this.name = 'Overtime';
  }
}

function chain(err) {
  const out = [];
  for (let e = err; e instanceof Object && out.length < 5; e = e.cause) out.push(e);
  return out;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const CONNECTION_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH',
  'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);

/** The contract's class of an error from fetch (or from reading a body). */
export function failureClass(err) {
  if (err instanceof DigestMismatch) return 'Error';
  if (err instanceof Overtime) return 'TimeoutError';
  const errors = chain(err);
  const codes = errors.map((e) => String(e.code ?? ''));
  const names = errors.map((e) => String(e.name ?? ''));
  const text = errors.map((e) => String(e.message ?? '')).join(' ').toLowerCase();
  if (names.includes('TimeoutError') || codes.some((c) => TIMEOUT_CODES.has(c))) return 'TimeoutError';
  if (names.includes('AbortError')) return 'Cancelled';
  if (codes.some((c) => /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(c))) return 'TLSError';
  if (codes.includes('ERR_INVALID_URL') || text.includes('invalid url') || text.includes('unknown scheme') ||
      text.includes('url scheme must be') || text.includes('bad port')) {
    return 'InvalidUrl';
  }
  if (codes.some((c) => c.startsWith('HPE_'))) return 'ProtocolError'; // llhttp: status line, headers, chunks
  if (codes.some((c) => CONNECTION_CODES.has(c)) || text.includes('other side closed')) return 'ConnectionError';
  if (codes.includes('UND_ERR_INVALID_ARG') || text.includes('is not a valid http method')) return 'InvalidRequest';
  return 'Error';
}

/** A failure's reason: its class, then each error of the cause chain (name, code, message) on one line. */
export function describe(err) {
  const cls = failureClass(err);
  if (err instanceof DigestMismatch || err instanceof Overtime) return `${cls}: ${err.message}`;
  const parts = chain(err).map((e) => {
    const named = typeof e.code === 'string' && !String(e.message).includes(e.code); // not DOMException's numbers
    const code = named ? ` [${e.code}]` : '';
    return `${e.name ?? 'Error'}: ${e.message ?? String(e)}${code}`;
  });
  return `${cls}: ${parts.join(' <- ').replace(/\s+/g, ' ')}`;
}
