import { closeSync, mkdirSync, openSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { ErrorCode, type Logger, PorticoError } from '@portico/gateway-core';
import pino from 'pino';
import { bytes, JsonBytes } from './json-bytes.ts';
import type { AccessLogSettings } from './settings.ts';

/**
 * Bytes of lines the access log gathers before it hands them over to be written: each hand-over
 * is a write on libuv's thread pool, and with 8 KB (about 32 lines) its thread's wake-ups were 0.1
 * context switches per request on the gateway's core.
 */
const BUFFERED = 64 * 1024;
/** Bytes waiting to be written beyond which lines are dropped (a disk that cannot keep up), counted. */
const MAX_WAITING = 16 * 1024 * 1024;
/** A drop is logged at most this often. */
const LOG_DROPS_EVERY_MS = 60_000;
/** The longest a line waits in that buffer, in milliseconds. */
const FLUSH_MS = 1000;

/** The longest path an access log line carries; a longer one is cut there and marked with `…`. */
export const MAX_LOGGED_PATH = 1024;

/** One request's line, before it is written (the observer fills it in as the exchange goes). */
export interface AccessRecord {
  client: string | null;
  method: string;
  path: string | null;
  status: number | null;
  bytes: number;
  /** Milliseconds from the request's arrival to its response's end (or the connection's). */
  duration: number;
  route: string | null;
  transactionId: string | null;
}

/** pino's destination (SonicBoom) in its buffer mode: it takes bytes. */
interface ByteDestination {
  write(lines: Buffer): boolean;
  flush(): void;
  flushSync(): void;
  end(): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'drop', listener: (lines: Buffer) => void): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * The access log: one JSON line per request, in the form of the server's own logs (pino's `level`,
 * `time`, `pid`, and `msg` "access"), written asynchronously to a file (appended to; relative to the
 * instance directory) or standard output. What never goes in: the query (it may carry a token),
 * header fields (Authorization, cookies), the URI's user info.
 */
export class AccessLog {
  readonly #destination: ByteDestination;
  /** Written to a file (closed with the log), not standard output. */
  readonly #toFile: boolean;
  readonly #flusher: NodeJS.Timeout;

  /** Lines not yet handed to the destination, as bytes. */
  readonly #pending = new JsonBytes(BUFFERED + 4096);
  /** Lines dropped because too much was waiting to be written. */
  dropped = 0;

  /**
   * Opens the log: a file that cannot be created or appended to is a coded error naming
   * `$.accessLog.file` (`file` is admin.json's path), found as the server starts rather than as
   * the first line is written. A write that fails later (a full disk) is logged, not thrown.
   */
  constructor(
    settings: AccessLogSettings,
    base: string,
    where: { file: string | undefined; logger: Logger; maxWaiting?: number },
  ) {
    const dest = settings.file === undefined ? 1 : path.resolve(base, settings.file);
    if (typeof dest === 'string') openable(dest, where.file);
    this.#toFile = typeof dest === 'string';
    // Lines are written as bytes into a buffer and handed over BUFFERED bytes at a time (and at
    // least every FLUSH_MS): a write per line cost a system call on the thread pool per request.
    // Gathered here, not by the destination's minLength, which measured the length of its whole
    // buffer anew at every line; as bytes, not strings, which kept ~20 objects per line alive until
    // the hand-over, long enough to be promoted (a line cost ~17 % of a proxied request's CPU).
    // SonicBoom's types know only its text mode; in buffer mode its write takes bytes.
    this.#destination = pino.destination({
      dest,
      sync: false,
      mkdir: true,
      append: true,
      contentMode: 'buffer',
      // SonicBoom's bound on what waits to be written (pino's option type does not list it).
      ...{ maxLength: where.maxWaiting ?? MAX_WAITING },
    }) as unknown as ByteDestination;
    const { logger } = where;
    this.#destination.on('error', (error: Error) =>
      logger.error('the access log cannot be written', { error: error.message }),
    );
    let loggedAt = Number.NEGATIVE_INFINITY;
    this.#destination.on('drop', (lines: Buffer) => {
      this.dropped += countLines(lines);
      const now = Date.now();
      if (now - loggedAt < LOG_DROPS_EVERY_MS) return;
      loggedAt = now;
      logger.warn('access log lines dropped: the file cannot be written as fast as requests end', {
        dropped: this.dropped,
      });
    });
    this.#flusher = setInterval(() => this.#handOver(), FLUSH_MS).unref();
  }

  #handOver(): void {
    if (this.#pending.length === 0) return;
    this.#destination.write(this.#pending.take(BUFFERED + 4096));
  }

  /**
   * The line as pino writes an info record (level 30, epoch milliseconds, the pid), made by hand:
   * pino's own serialisation (its hooks, serializers and a generic walk of the record) was most
   * of what a line cost.
   */
  write(r: AccessRecord): void {
    const out = this.#pending;
    out.constant(LINE_START);
    out.epochMillis(Date.now());
    out.constant(AFTER_TIME);
    textOrNull(out, r.client);
    out.constant(METHOD);
    out.string(r.method);
    out.constant(PATH);
    textOrNull(out, r.path);
    out.constant(STATUS);
    if (r.status === null) out.constant(NULL);
    else out.number(r.status);
    out.constant(BYTES);
    out.number(r.bytes);
    out.constant(DURATION);
    out.thousandths(Math.round(r.duration * 1000));
    out.constant(ROUTE);
    textOrNull(out, r.route);
    out.constant(TRANSACTION);
    textOrNull(out, r.transactionId);
    out.constant(LINE_END);
    if (out.length >= BUFFERED) this.#handOver();
  }

  /**
   * Writes what is buffered, then closes a file once every write has landed (at most 5 s);
   * standard output is flushed and stays open.
   */
  async close(logger: Logger): Promise<void> {
    clearInterval(this.#flusher);
    this.#handOver();
    const destination = this.#destination;
    if (!this.#toFile) {
      try {
        destination.flushSync();
      } catch (error) {
        logger.warn('the access log could not be flushed', { error: String(error) });
      }
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        logger.warn('the access log was not written whole within 5 s of closing');
        resolve();
      }, 5000).unref();
      destination.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      destination.end();
    });
  }
}

const LINE_START = bytes('{"level":30,"time":');
const AFTER_TIME = bytes(`,"pid":${process.pid},"msg":"access","client":`);
const METHOD = bytes(',"method":');
const PATH = bytes(',"path":');
const STATUS = bytes(',"status":');
const BYTES = bytes(',"bytes":');
const DURATION = bytes(',"duration":');
const ROUTE = bytes(',"route":');
const TRANSACTION = bytes(',"transactionId":');
const LINE_END = bytes('}\n');
const NULL = bytes('null');

/** A string as a JSON value, or null. */
function textOrNull(out: JsonBytes, value: string | null): void {
  if (value === null) out.constant(NULL);
  else out.string(value);
}

/** Creates the file's directory and the file (or opens it to append), or throws why it cannot. */
function openable(file: string, adminFile: string | undefined): void {
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    closeSync(openSync(file, 'a'));
  } catch (error) {
    throw new PorticoError(
      ErrorCode.CONFIG,
      `the access log ${file} cannot be written: ${(error as Error).message}`,
      {
        ...(adminFile === undefined ? {} : { file: adminFile }),
        jsonPath: '$.accessLog.file',
        expected: 'a file the gateway may create and append to, relative to the instance directory',
      },
    );
  }
}

function countLines(lines: Buffer): number {
  let count = 0;
  for (let at = lines.indexOf(0x0a); at !== -1; at = lines.indexOf(0x0a, at + 1)) count++;
  return count;
}

/** The path as logged: bounded (`MAX_LOGGED_PATH`), never with its query. */
export function loggedPath(rawPath: string): string {
  return rawPath.length <= MAX_LOGGED_PATH ? rawPath : `${rawPath.slice(0, MAX_LOGGED_PATH)}…`;
}

/** A refused request's path: its target up to the query, bounded (it was not parsed). */
export function refusedPath(req: IncomingMessage): string | null {
  const target = req.url;
  if (target === undefined) return null;
  const query = target.indexOf('?');
  return loggedPath(query === -1 ? target : target.slice(0, query));
}

/** What the response carried: its status once its head was sent, else none. */
export function sentStatus(res: ServerResponse): number | null {
  return res.headersSent ? res.statusCode : null;
}
