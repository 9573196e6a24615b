// Request and response bodies (docs/raw-format.md, "Request bodies" and "Streamed bodies"): the contract's
// pattern, a streamed upload made chunk by chunk as fetch pulls it, a response read whole or in chunks, and the
// check of an upload's answer (the /upload line, or the body itself echoed back), made as it is read.
import { createHash } from 'node:crypto';
import { DigestMismatch } from './failures.mjs';

const ALPHABET = Buffer.from('abcdefghijklmnopqrstuvwxyz');
const PERIOD = ALPHABET.length;
const SHOWN_BYTES = 101; // a DigestMismatch shows 100 bytes of the answer and "..." when there are more

/** The contract's request body in one buffer: byte i is 'a' + (i mod 26). */
export function uploadBody(size) {
  const body = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i += PERIOD) ALPHABET.copy(body, i, 0, Math.min(PERIOD, size - i));
  return body;
}

/** What the server's /upload answers to `body`: "<length> <sha256 hex>". */
export function uploadAnswer(body) {
  return Buffer.from(`${body.length} ${createHash('sha256').update(body).digest('hex')}`);
}

/** One chunk's worth of the pattern, and 25 bytes more: the body's bytes at any offset, up to a chunk of them,
 * are a view of it. One is shared, read-only, by every worker, so a streamed body of any length costs one chunk
 * of memory. */
export class Pattern {
  constructor(chunk) {
    this.chunk = chunk;
    this.window = uploadBody(chunk + PERIOD - 1);
  }

  /** The body's bytes [off, off + n), n at most a chunk: a view of the shared window, not to be written to. */
  at(off, n) {
    const start = off % PERIOD;
    return this.window.subarray(start, start + n);
  }

  /** Whether `bytes` are the body's from offset `off` on, compared a chunk at a time. */
  matches(off, bytes) {
    for (let i = 0; i < bytes.length; i += this.chunk) {
      const n = Math.min(this.chunk, bytes.length - i);
      if (!this.at(off + i, n).equals(bytes.subarray(i, i + n))) return false;
    }
    return true;
  }

  /** What /upload answers to a body of `size` pattern bytes, hashed a chunk at a time. */
  answer(size) {
    const h = createHash('sha256');
    for (let off = 0; off < size; off += this.chunk) h.update(this.at(off, Math.min(this.chunk, size - off)));
    return Buffer.from(`${size} ${h.digest('hex')}`);
  }
}

/** A --upload stream body: a ReadableStream of chunks of at most `chunk` bytes of `src` (the Pattern, or a
 * target's body in a Buffer), each made when fetch pulls it (highWaterMark 0: nothing is made ahead). */
export function streamedBody(src, size, chunk) {
  const at = src instanceof Pattern ? (off, n) => src.at(off, n) : (off, n) => src.subarray(off, off + n);
  let off = 0;
  return new ReadableStream(
    {
      pull(controller) {
        if (off < size) {
          const n = Math.min(chunk, size - off);
          controller.enqueue(at(off, n));
          off += n;
        }
        if (off >= size) controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}

/** Checks an upload's answer as it is read, without keeping it: it is correct when it is the /upload line of the
 * body sent, or the body itself (POST /echo answers it back). Both are followed along the way; the answer's
 * length at its end picks which one it had to be. */
export class AnswerCheck {
  constructor(line, pattern, size) {
    this.line = line; // what /upload answers to the body
    this.pattern = pattern; // the body sent, for an echo
    this.size = size; // the body's length
    this.n = 0; // the answer's bytes so far
    this.lineOK = this.echoOK = true; // the answer so far is a prefix of the line, of the body
    this.head = []; // the answer's first bytes, for the failure's reason
    this.headBytes = 0;
  }

  /** The answer's next bytes (a Uint8Array). */
  feed(bytes) {
    const end = this.n + bytes.length;
    this.lineOK &&= end <= this.line.length && this.line.subarray(this.n, end).equals(bytes);
    this.echoOK &&= end <= this.size && this.pattern.matches(this.n, bytes);
    if (this.headBytes < SHOWN_BYTES) {
      const part = bytes.subarray(0, SHOWN_BYTES - this.headBytes);
      this.head.push(Buffer.from(part)); // a copy, which does not keep the chunk's whole buffer alive
      this.headBytes += part.length;
    }
    this.n = end;
  }

  /** Throws a DigestMismatch unless the whole answer was the line or the echo. */
  verify() {
    if ((this.lineOK && this.n === this.line.length) || (this.echoOK && this.n === this.size)) return;
    throw new DigestMismatch(Buffer.concat(this.head), this.line, this.size, this.n);
  }
}

/** Reads a response's body to its end: whole (arrayBuffer(): one buffer) or, with `chunk` (--download stream),
 * from the body's reader, each piece of at most `chunk` bytes counted, checked when `check` is given, and
 * dropped. Resolves to the bytes read; a failure while reading carries the bytes read so far (`nbytes`). */
export async function readBody(response, chunk, check) {
  if (chunk === null) {
    const body = Buffer.from(await response.arrayBuffer());
    check?.feed(body);
    return body.length;
  }
  if (response.body === null) return 0; // a status without a body
  const reader = response.body.getReader();
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return total;
      // undici offers what the socket gave; a piece of more than C bytes is taken C at a time
      for (let i = 0; i < value.byteLength; i += chunk) {
        const piece = value.subarray(i, i + chunk);
        total += piece.byteLength;
        check?.feed(piece);
      }
    }
  } catch (err) {
    if (err instanceof Object) err.nbytes = total;
    throw err;
  }
}
