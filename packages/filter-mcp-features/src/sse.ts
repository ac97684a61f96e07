import { Transform, type TransformCallback } from 'node:stream';
import { ErrorCode, PorticoError } from '@portico/gateway-core';

const LF = 0x0a;
const CR = 0x0d;

/**
 * A Server-Sent Events stream rewritten event by event as it flows (the WHATWG parsing rules: lines
 * end with CRLF, LF or CR; an empty line ends an event; `data` lines join with LF). Each complete
 * event is handed to `rewrite` with its data, and goes out at once: the stream is never held back
 * past the event being read, and an event is bounded by `maxEventBytes` (past it the stream fails,
 * since an event that cannot be judged cannot be passed either). An event `rewrite` leaves alone
 * goes out with its own lines; one it changes goes out with its `data` lines replaced by one.
 */
export class SseRewriter extends Transform {
  readonly #rewrite: (data: string) => string | undefined;
  readonly #maxEventBytes: number;
  /** The bytes of the line being read, in pieces. */
  #line: Buffer[] = [];
  #lineBytes = 0;
  /** The lines of the event being read, as they came (terminators left out). */
  #event: string[] = [];
  #eventBytes = 0;
  /** The previous chunk ended with CR. */
  #afterCr = false;
  #started = false;

  /**
   * `rewrite` gets an event's data and returns the data to send instead, or undefined to send the
   * event as it came.
   */
  constructor(rewrite: (data: string) => string | undefined, maxEventBytes: number, prelude = '') {
    super();
    this.#rewrite = rewrite;
    this.#maxEventBytes = maxEventBytes;
    if (prelude !== '') this.push(prelude);
  }

  override _transform(chunk: Buffer | string, _encoding: BufferEncoding, callback: TransformCallback): void {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (!this.#started) {
      this.#started = true;
      // A byte order mark is left out, as every client skips it: events the filter adds go first.
      if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
    }
    let out = '';
    let start = 0;
    let at = 0;
    // A CR ended the previous chunk: an LF starting this one is the same line end.
    if (this.#afterCr && bytes[0] === LF) start = at = 1;
    this.#afterCr = false;
    try {
      for (; at < bytes.length; at++) {
        const byte = bytes[at];
        if (byte !== LF && byte !== CR) continue;
        out += this.#endLine(bytes.subarray(start, at));
        if (byte === CR) {
          if (at + 1 === bytes.length) this.#afterCr = true;
          else if (bytes[at + 1] === LF) at++;
        }
        start = at + 1;
      }
      if (start < bytes.length) this.#addToLine(bytes.subarray(start));
    } catch (error) {
      callback(error as Error);
      return;
    }
    if (out !== '') this.push(out);
    callback();
  }

  override _flush(callback: TransformCallback): void {
    // An event the stream ends inside is not dispatched by any client (WHATWG): nor sent on.
    callback();
  }

  #addToLine(piece: Buffer): void {
    this.#lineBytes += piece.length;
    this.#checkSize(0);
    // A copy: the chunk belongs to its producer, who may reuse it.
    this.#line.push(Buffer.from(piece));
  }

  #checkSize(more: number): void {
    if (this.#eventBytes + this.#lineBytes + more > this.#maxEventBytes)
      throw new PorticoError(
        ErrorCode.ENTITY_TOO_LARGE,
        `an event of the MCP server's stream is larger than ${this.#maxEventBytes} bytes`,
        { expected: `events of at most ${this.#maxEventBytes} bytes` },
      );
  }

  /** A line has ended: returns what goes out (an event, when the line was empty). */
  #endLine(rest: Buffer): string {
    this.#checkSize(rest.length);
    const line =
      this.#line.length === 0
        ? rest.toString('utf8')
        : Buffer.concat([...this.#line, rest], this.#lineBytes + rest.length).toString('utf8');
    this.#line = [];
    this.#lineBytes = 0;
    if (line !== '') {
      this.#event.push(line);
      this.#eventBytes += Buffer.byteLength(line) + 1;
      return '';
    }
    const event = this.#event;
    this.#event = [];
    this.#eventBytes = 0;
    return event.length === 0 ? '\n' : this.#dispatch(event);
  }

  #dispatch(lines: string[]): string {
    let data: string | undefined;
    for (const line of lines) {
      const value = dataValue(line);
      if (value !== undefined) data = data === undefined ? value : `${data}\n${value}`;
    }
    const replaced = data === undefined ? undefined : this.#rewrite(data);
    if (replaced === undefined) return `${lines.join('\n')}\n\n`;
    const out: string[] = [];
    let written = false;
    for (const line of lines) {
      if (dataValue(line) === undefined) out.push(line);
      else if (!written) {
        written = true;
        for (const part of replaced.split('\n')) out.push(`data: ${part}`);
      }
    }
    return `${out.join('\n')}\n\n`;
  }
}

/** The value of a `data` field line (`data: x`, `data:x`, `data`), else undefined. */
function dataValue(line: string): string | undefined {
  if (!line.startsWith('data')) return undefined;
  if (line.length === 4) return '';
  if (line[4] !== ':') return undefined;
  return line[5] === ' ' ? line.slice(6) : line.slice(5);
}

/** An event carrying one JSON-RPC message (or batch), as MCP servers write them. */
export function messageEvent(payload: unknown): string {
  return `event: message\ndata: ${JSON.stringify(payload)}\n\n`;
}
