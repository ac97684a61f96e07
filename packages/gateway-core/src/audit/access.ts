import type { ClientInfo } from '../context/context.ts';
import { ErrorCode, isPorticoError } from '../errors.ts';
import { parseCookieHeaders } from '../http/cookies.ts';
import { parseForm } from '../http/entity.ts';
import type { Headers } from '../http/headers.ts';
import type { Uri } from '../http/uri.ts';
import type { AuditEvent } from './handler.ts';

/** The brand of what a route's `auditService` must be (an AuditService). */
export const ACCESS_AUDITOR: unique symbol = Symbol.for('portico.accessAuditor') as never;

/** The incumbents' name for the access events a gateway sends. */
export const ACCESS_EVENT_NAME = 'OPENIG-HTTP-ACCESS';

/**
 * What a route's `auditService` is to the route: something that takes the record of each exchange
 * through the route. The core knows no more of the audit service than this (it is a plugin).
 */
export interface AccessAuditor {
  readonly [ACCESS_AUDITOR]: true;
  /**
   * True when it keeps nothing (the default no-op service, a service whose handlers are all
   * disabled): the route then records nothing, at no cost.
   */
  readonly silent?: boolean;
  /**
   * One exchange through a route, once its answer settled (a response, or a failure). Called on the
   * request path: it must return at once and never throw (it queues; the event is made later).
   */
  access(record: AccessRecord): void;
  /**
   * Resolves once what was given to `access` so far has been delivered (or given up): a route that
   * is removed or replaced waits for it before its heap goes.
   */
  flush(): Promise<void>;
}

/**
 * The facts of one exchange through a route, as the route saw them: the request as it entered the
 * route (before any filter changed it), and the answer.
 */
export interface AccessRecord {
  /** When the request entered the route, in milliseconds since the epoch. */
  readonly started: number;
  /** Milliseconds from then until the answer settled. */
  readonly elapsed: number;
  readonly transactionId: string;
  readonly client: ClientInfo;
  readonly method: string;
  /** The URI the request entered the route with. */
  readonly uri: Uri;
  /** The headers the request entered the route with. */
  readonly headers: Headers;
  /** The status of the response, or of the gateway's own answer to a failure. */
  readonly status: number;
  /** The response's headers; undefined when the exchange failed. */
  readonly responseHeaders: Headers | undefined;
}

export function isAccessAuditor(value: unknown): value is AccessAuditor {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[ACCESS_AUDITOR] === true &&
    typeof (value as AccessAuditor).access === 'function'
  );
}

/**
 * The status a failure that escaped a route's filters is answered with: 413 for a body past its
 * bound, the upstream's 502 or 504, else 500.
 */
export function failureStatus(error: unknown): number {
  if (isPorticoError(error, ErrorCode.ENTITY_TOO_LARGE)) return 413;
  if (isPorticoError(error, ErrorCode.UPSTREAM))
    return (error as { upstreamStatus?: number }).upstreamStatus ?? 502;
  return 500;
}

/**
 * The access event of a record, as the incumbents' gateway makes it: `eventName`
 * OPENIG-HTTP-ACCESS, the ISO-8601 UTC `timestamp` of the request's arrival, `server` and `client`
 * addresses, `http.request` from the request as it entered the route (`path` is the scheme and
 * authority with the raw path, without the query, which `queryParameters` holds; the Cookie field
 * as `cookies`), `http.response` headers, and `response` with `status` FAILED for 4xx and 5xx (SUCCESSFUL otherwise), the
 * `statusCode` as a string and `elapsedTime` in milliseconds.
 */
export function accessEvent(record: AccessRecord, id: string): AuditEvent {
  const { uri, client } = record;
  const authority = uri.authority;
  const path = `${uri.scheme ?? (client.isSecure ? 'https' : 'http')}://${authority ?? ''}${uri.rawPath}`;
  // The Cookie field is not among the headers: its first value is given as cookies, name → value
  // (the last of a repeated name), as the incumbents' event builder does.
  const headers = headersObject(record.headers, true);
  const cookies: Record<string, string> = {};
  const cookieField = record.headers.get('cookie');
  if (cookieField !== undefined)
    for (const [name, found] of Object.entries(parseCookieHeaders([cookieField])))
      cookies[name] = found[found.length - 1]!.value;
  return {
    _id: id,
    timestamp: isoTimestamp(record.started),
    eventName: ACCESS_EVENT_NAME,
    transactionId: record.transactionId,
    server: { ip: client.localAddress, port: client.localPort },
    client: { ip: client.remoteAddress, port: client.remotePort },
    http: {
      request: {
        secure: client.isSecure,
        method: record.method,
        path,
        queryParameters: uri.rawQuery === null ? {} : parseForm(uri.rawQuery),
        headers,
        cookies,
      },
      ...(record.responseHeaders === undefined
        ? {}
        : { response: { headers: headersObject(record.responseHeaders, false) } }),
    },
    response: {
      status: record.status >= 400 ? 'FAILED' : 'SUCCESSFUL',
      statusCode: String(record.status),
      elapsedTime: record.elapsed,
      elapsedTimeUnits: 'MILLISECONDS',
    },
  };
}

/**
 * Name → values, the name as it first arrived, fields whose names differ only in case together (the
 * Cookie field left out of a request's): what `Headers.toJSON` gives, made from the fields without
 * grouping them into the Headers' own map first (this runs for every audited exchange, twice).
 */
function headersObject(headers: Headers, withoutCookie: boolean): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const keys: Record<string, string> = {};
  headers.forEachField((name, value) => {
    const lower = name.toLowerCase();
    if (withoutCookie && lower === 'cookie') return;
    const key = (keys[lower] ??= name);
    const values = out[key];
    if (values === undefined) out[key] = [value];
    else values.push(value);
  });
  return out;
}

/** The last millisecond formatted, and its text: many events of a busy second share one. */
let lastMillis = Number.NaN;
let lastText = '';

/** ISO-8601 in UTC, to the millisecond (`2026-01-02T03:04:05.006Z`). */
function isoTimestamp(millis: number): string {
  if (millis !== lastMillis) {
    lastMillis = millis;
    lastText = new Date(millis).toISOString();
  }
  return lastText;
}
