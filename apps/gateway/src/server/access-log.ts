import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import type { Logger } from '@portico/gateway-core';
import pino from 'pino';
import type { AccessLogSettings } from './settings.ts';

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
  readonly #destination: pino.DestinationStream & { flushSync(): void; end(): void };
  readonly #logger: pino.Logger;

  constructor(settings: AccessLogSettings, base: string) {
    const dest = settings.file === undefined ? 1 : path.resolve(base, settings.file);
    this.#destination = pino.destination({ dest, sync: false, mkdir: true, append: true });
    this.#logger = pino({ base: { pid: process.pid } }, this.#destination);
  }

  write(record: AccessRecord): void {
    this.#logger.info(record, 'access');
  }

  /** Writes what is buffered, then closes a file; standard output stays open. */
  close(logger: Logger): void {
    try {
      this.#destination.flushSync();
    } catch (error) {
      logger.warn('the access log could not be flushed', { error: String(error) });
    }
  }
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
