import { closeSync, mkdirSync, openSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { ErrorCode, type Logger, PorticoError } from '@portico/gateway-core';
import pino from 'pino';
import type { AccessLogSettings } from './settings.ts';

/**
 * Characters of lines the access log gathers before it hands them over to be written: each hand-over
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

/**
 * The access log: one JSON line per request, in the form of the server's own logs (pino's `level`,
 * `time`, `pid`, and `msg` "access"), written asynchronously to a file (appended to; relative to the
 * instance directory) or standard output. What never goes in: the query (it may carry a token),
 * header fields (Authorization, cookies), the URI's user info.
 */
export class AccessLog {
  readonly #destination: pino.DestinationStream & {
    flush(): void;
    flushSync(): void;
    end(): void;
    on(event: 'error', listener: (error: Error) => void): unknown;
    on(event: 'drop', listener: (lines: string) => void): unknown;
  };
  readonly #flusher: NodeJS.Timeout;

  /** Lines not yet handed to the destination. */
  #pending = '';
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
    // Lines are gathered here and handed over BUFFERED characters at a time (and at least every
    // FLUSH_MS): a write per line cost a system call on the thread pool per request. Gathered here,
    // not by the destination's minLength, which measured the length of its whole buffer anew (a
    // copy of it) at every line.
    this.#destination = pino.destination({
      dest,
      sync: false,
      mkdir: true,
      append: true,
      // SonicBoom's bound on what waits to be written (pino's option type does not list it).
      ...{ maxLength: where.maxWaiting ?? MAX_WAITING },
    });
    const { logger } = where;
    this.#destination.on('error', (error: Error) =>
      logger.error('the access log cannot be written', { error: error.message }),
    );
    let loggedAt = Number.NEGATIVE_INFINITY;
    this.#destination.on('drop', (lines: string) => {
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
    const lines = this.#pending;
    this.#pending = '';
    this.#destination.write(lines);
  }

  /**
   * The line as pino writes an info record (level 30, epoch milliseconds, the pid), made by hand:
   * pino's own serialisation (its hooks, serializers and a generic walk of the record) was most
   * of what a line cost.
   */
  write(r: AccessRecord): void {
    this.#pending +=
      `{"level":30,"time":${Date.now()},"pid":${PID},"msg":"access","client":${text(r.client)},` +
      `"method":${text(r.method)},"path":${text(r.path)},"status":${r.status ?? 'null'},` +
      `"bytes":${r.bytes},"duration":${r.duration},"route":${text(r.route)},` +
      `"transactionId":${text(r.transactionId)}}\n`;
    if (this.#pending.length >= BUFFERED) this.#handOver();
  }

  /** Writes what is buffered, then closes a file; standard output stays open. */
  close(logger: Logger): void {
    clearInterval(this.#flusher);
    try {
      this.#handOver();
      this.#destination.flushSync();
    } catch (error) {
      logger.warn('the access log could not be flushed', { error: String(error) });
    }
  }
}

const PID = process.pid;

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

function countLines(text: string): number {
  let lines = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines++;
  return lines;
}

/** A string as a JSON value, or null. */
const text = (value: string | null): string => (value === null ? 'null' : JSON.stringify(value));

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
