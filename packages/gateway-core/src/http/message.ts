import { brandClass } from '../brand.ts';
import { EL_GET, EL_SET, type ElObject } from '../expression/access.ts';
import { toNumber, toText } from '../expression/coercion.ts';
import { parseCookieHeaders, type RequestCookie } from './cookies.ts';
import { Entity, type EntityContent, parseForm } from './entity.ts';
import { Headers } from './headers.ts';
import { Status } from './status.ts';
import { Uri } from './uri.ts';

/**
 * A request as filters and handlers see it. Everything is mutable: filters change the request before
 * passing it on. In expressions: `request.method`, `request.uri.path`, `request.headers['X']`,
 * `request.cookies['name'][0].value`, `request.queryParams['q'][0]`, `request.entity.json`.
 */
export class Request implements ElObject {
  method: string;
  #uri: Uri;
  version: string;
  headers: Headers;
  entity: Entity;

  constructor(init: {
    method?: string;
    uri: Uri | string;
    version?: string;
    headers?: Headers | ConstructorParameters<typeof Headers>[0];
    entity?: Entity | EntityContent;
  }) {
    this.method = (init.method ?? 'GET').toUpperCase();
    this.#uri = typeof init.uri === 'string' ? Uri.parse(init.uri) : init.uri;
    this.version = init.version ?? 'HTTP/1.1';
    this.headers = init.headers instanceof Headers ? init.headers : new Headers(init.headers);
    this.entity = init.entity instanceof Entity ? init.entity : new Entity(init.entity ?? null);
  }

  get uri(): Uri {
    return this.#uri;
  }
  set uri(value: Uri | string) {
    this.#uri = typeof value === 'string' ? Uri.parse(value) : value;
  }

  /** Cookies of the `Cookie` headers, parsed when asked for. */
  get cookies(): Record<string, RequestCookie[]> {
    return parseCookieHeaders(this.headers.getAll('cookie'));
  }

  /** The query string as name → values. */
  get queryParams(): Record<string, string[]> {
    return parseForm(this.#uri.rawQuery ?? '');
  }

  /** Query parameters plus, when the body is a buffered form, its fields. */
  get form(): Record<string, string[]> {
    const form = this.queryParams;
    const type = this.headers.get('content-type') ?? '';
    if (type.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
      const body = this.entity[EL_GET]('form') as Record<string, string[]> | undefined;
      // A loop, not push(...v): a field repeated many thousand times would overflow the stack.
      for (const [k, v] of Object.entries(body ?? {})) {
        const values = (form[k] ??= []);
        for (const value of v) values.push(value);
      }
    }
    return form;
  }

  [EL_SET](key: string, value: unknown): void {
    switch (key) {
      case 'method':
        this.method = toText(value).toUpperCase();
        break;
      case 'uri':
        // A copy: `${contexts.router.originalUri}` assigned and then changed must stay as it was.
        if (value !== null && value !== undefined)
          this.uri = this.#uri.rewrittenAs(value instanceof Uri ? value : toText(value));
        break;
      case 'version':
        this.version = toText(value);
        break;
      case 'entity':
        this.entity.setContent(value === null || value === undefined ? null : toText(value));
        break;
    }
  }
}

/**
 * A response. `status` is the number; expressions read `response.status.code` and
 * `response.status.reasonPhrase` as in the incumbents.
 */
export class Response implements ElObject {
  status: number;
  reason: string | undefined;
  version: string;
  headers: Headers;
  entity: Entity;
  /** What went wrong, when the response stands for a failure (e.g. the upstream was unreachable). */
  cause: Error | undefined;

  constructor(
    init: {
      status?: number;
      reason?: string;
      version?: string;
      headers?: Headers | ConstructorParameters<typeof Headers>[0];
      entity?: Entity | EntityContent;
      cause?: Error;
    } = {},
  ) {
    this.status = init.status ?? 200;
    this.reason = init.reason;
    this.version = init.version ?? 'HTTP/1.1';
    this.headers = init.headers instanceof Headers ? init.headers : new Headers(init.headers);
    this.entity = init.entity instanceof Entity ? init.entity : new Entity(init.entity ?? null);
    this.cause = init.cause;
  }

  /** A complete response with a text body, its Content-Type and Content-Length set. */
  static text(status: number, body: string, contentType = 'text/plain; charset=UTF-8'): Response {
    return new Response({
      status,
      headers: { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(body)) },
      entity: body,
    });
  }

  /** A complete response with a JSON body. */
  static json(status: number, value: unknown): Response {
    return Response.text(status, `${JSON.stringify(value, null, 2)}\n`, 'application/json; charset=UTF-8');
  }

  /** A response without a body (`Content-Length: 0`). */
  static empty(status: number): Response {
    return new Response({ status, headers: { 'Content-Length': '0' } });
  }

  [EL_GET](key: string): unknown {
    switch (key) {
      case 'status':
        return new Status(this.status, this.reason);
      case 'headers':
        return this.headers;
      case 'entity':
        return this.entity;
      case 'version':
        return this.version;
      case 'cause':
        return this.cause?.message;
      case 'reason':
        return this.reason;
      default:
        return undefined;
    }
  }

  [EL_SET](key: string, value: unknown): void {
    if (key === 'status') this.status = toNumber(value);
    else if (key === 'reason')
      this.reason = value === null || value === undefined ? undefined : toText(value);
    else if (key === 'entity')
      this.entity.setContent(value === null || value === undefined ? null : toText(value));
  }
}

// Objects of these classes cross package boundaries (plugins make and read them): one identity for
// every copy of the core (brand.ts).
brandClass(Request, 'Request');
brandClass(Response, 'Response');
