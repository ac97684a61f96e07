import { type Bindings, isPorticoError, Request, Response, Uri } from '@portico/gateway-core';
import { UsageError } from './output.ts';

/**
 * The bindings of `portico eval --bindings FILE`: `request` and `response`, given as plain JSON, become
 * the same model objects a route sees (a parsed URI, case-insensitive headers, an entity that reads as
 * text, JSON or a form), so an expression evaluates in the file as it would at run time. Every other
 * binding is used as written.
 */
export function modelBindings(plain: Record<string, unknown>, file: string): Bindings {
  const bindings: Record<string, unknown> = { ...plain };
  if (plain.request !== undefined && plain.request !== null) {
    bindings.request = requestOf(objectAt(plain.request, file, '$.request'), file);
  }
  if (plain.response !== undefined && plain.response !== null) {
    bindings.response = responseOf(objectAt(plain.response, file, '$.response'), file);
  }
  return bindings as Bindings;
}

type Plain = Record<string, unknown>;

function requestOf(fields: Plain, file: string): Request {
  const method = fields.method ?? 'GET';
  if (typeof method !== 'string') throw misfit(file, '$.request.method', 'an HTTP method');
  const version = fields.version ?? 'HTTP/1.1';
  if (typeof version !== 'string')
    throw misfit(file, '$.request.version', 'an HTTP version such as HTTP/1.1');
  return new Request({
    method,
    uri: uriOf(fields.uri ?? '/', file),
    version,
    headers: headersOf(fields.headers, file, '$.request.headers'),
    entity: entityOf(fields.entity),
  });
}

function responseOf(fields: Plain, file: string): Response {
  const status = fields.status ?? 200;
  if (!Number.isInteger(status) || (status as number) < 100 || (status as number) > 599)
    throw misfit(file, '$.response.status', 'a status from 100 to 599');
  const reason = fields.reason;
  if (reason !== undefined && typeof reason !== 'string') throw misfit(file, '$.response.reason', 'a string');
  return new Response({
    status: status as number,
    ...(reason === undefined ? {} : { reason }),
    headers: headersOf(fields.headers, file, '$.response.headers'),
    entity: entityOf(fields.entity),
  });
}

/** A URI string (`http://x/a?b=1`, `/a?b=1`), or its parts (`{"path": "/a", "query": "b=1"}`). */
function uriOf(value: unknown, file: string): Uri {
  if (typeof value === 'string') {
    try {
      return Uri.parse(value);
    } catch (error) {
      throw misfit(file, '$.request.uri', isPorticoError(error) ? error.message : 'a URI');
    }
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const parts = value as Plain;
    const text = (key: string) => (typeof parts[key] === 'string' ? (parts[key] as string) : null);
    const uri = new Uri({
      scheme: text('scheme') ?? 'http',
      host: text('host') ?? 'localhost',
      port: typeof parts.port === 'number' ? parts.port : null,
    });
    uri.path = text('path') ?? '/';
    if (text('query') !== null) uri.query = text('query');
    return uri;
  }
  throw misfit(file, '$.request.uri', 'a URI string, or an object with path, query, host ...');
}

/** `{"Name": "value"}` or `{"Name": ["v1", "v2"]}`; names are looked up without regard to case. */
function headersOf(value: unknown, file: string, at: string): Record<string, string[]> {
  if (value === undefined || value === null) return {};
  const fields = objectAt(value, file, at);
  const headers: Record<string, string[]> = {};
  for (const [name, given] of Object.entries(fields)) {
    const values = Array.isArray(given) ? given : [given];
    if (!values.every((v) => typeof v === 'string' || typeof v === 'number'))
      throw misfit(file, `${at}.${name}`, 'a string, or an array of strings');
    headers[name] = values.map(String);
  }
  return headers;
}

/** Text as it is; any other JSON value as its JSON text (`request.entity.json` reads it back). */
function entityOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function objectAt(value: unknown, file: string, at: string): Plain {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw misfit(file, at, 'a JSON object');
  return value as Plain;
}

/** A binding of the wrong shape: one line naming it, without the usage text. */
function misfit(file: string, at: string, expected: string): UsageError {
  return new UsageError(`${file} ${at}: expected ${expected}`, { usage: false });
}
