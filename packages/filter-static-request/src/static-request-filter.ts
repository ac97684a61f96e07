import {
  type Bindings,
  bindingsFor,
  type Context,
  defineHeaplet,
  type Expression,
  evaluateSettled,
  type Filter,
  type Handler,
  type Logger,
  Request,
  Response,
  s,
  Uri,
} from '@portico/gateway-core';
import { encodeForm, encodeQuery } from '@portico/gateway-core/http-helpers';

/** RFC 9110 tokens: method and field names. */
const VERSION = /^HTTP\/\d+(\.\d+)?$/;

type Templates = Readonly<Record<string, readonly Expression<string>[]>>;

export interface StaticRequestSettings {
  /** Upper case. */
  method: string;
  uri: Expression<string>;
  version: string;
  /** Header name → value templates; a null value is left out. */
  headers: Templates;
  /** Parameter name → value templates; a null value is left out. */
  form?: Templates;
  entity?: Expression<string>;
}

/**
 * Replaces the request with one built from configuration: method, URI, version, headers, and a
 * body from `entity` or `form`. A form goes in the body (`application/x-www-form-urlencoded`) of a
 * POST and in the query string of any other method. Every value is a template evaluated against
 * the incoming request, which the next handler never sees.
 */
export class StaticRequestFilter implements Filter {
  readonly #settings: StaticRequestSettings;
  readonly #headers: readonly (readonly [string, readonly Expression<string>[]])[];
  readonly #form: readonly (readonly [string, readonly Expression<string>[]])[] | undefined;
  readonly #readsBody: boolean;
  readonly #logger: Logger;

  constructor(settings: StaticRequestSettings, logger: Logger) {
    this.#settings = settings;
    this.#headers = Object.entries(settings.headers);
    this.#form = settings.form && Object.entries(settings.form);
    this.#logger = logger;
    const expressions = [
      settings.uri,
      settings.entity,
      ...this.#headers.flatMap(([, values]) => values),
      ...(this.#form ?? []).flatMap(([, values]) => values),
    ];
    this.#readsBody = expressions.some((e) => e?.readsRequestBody === true);
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    if (this.#readsBody) await request.entity.bytes();
    const bindings = bindingsFor(context, request);
    // Values are evaluated settled (they may read a lazy map still loading); this filter builds a
    // new request anyway, so it takes the few promises that costs.
    const uri = await this.#uri(bindings);
    if (!uri) return Response.empty(500);
    const { method, version, entity } = this.#settings;
    const replacement = new Request({ method, uri, version });
    for (const [name, value] of await evaluated(this.#headers, bindings))
      replacement.headers.add(name, value);
    if (entity) {
      const body = await evaluateSettled(entity, bindings);
      if (body !== null) setBody(replacement, body);
    }
    if (this.#form) {
      const fields = await evaluated(this.#form, bindings);
      if (method === 'POST') {
        setBody(replacement, encodeForm(fields));
        replacement.headers.set('Content-Type', 'application/x-www-form-urlencoded');
      } else if (fields.length > 0) {
        const query = encodeQuery(fields);
        const existing = replacement.uri.rawQuery;
        replacement.uri = replacement.uri.with({ rawQuery: existing ? `${existing}&${query}` : query });
      }
    }
    return next.handle(context, replacement);
  }

  /** The evaluated URI, or undefined (logged) when it is null or not a URI. */
  async #uri(bindings: Bindings): Promise<Uri | undefined> {
    const text = await evaluateSettled(this.#settings.uri, bindings);
    if (text === null) {
      this.#logger.error('the request URI evaluated to null', { uri: this.#settings.uri.text });
      return undefined;
    }
    try {
      return Uri.parse(text);
    } catch {
      this.#logger.error('the request URI is not a valid URI', { uri: this.#settings.uri.text, value: text });
      return undefined;
    }
  }
}

/** Every value that does not evaluate to null, as [name, value] pairs in configuration order. */
async function evaluated(
  templates: readonly (readonly [string, readonly Expression<string>[]])[],
  bindings: Bindings,
): Promise<[string, string][]> {
  const out: [string, string][] = [];
  for (const [name, values] of templates) {
    for (const value of values) {
      const text = await evaluateSettled(value, bindings);
      if (text !== null) out.push([name, text]);
    }
  }
  return out;
}

function setBody(request: Request, body: string): void {
  request.entity.setContent(body);
  request.headers.set('Content-Length', Buffer.byteLength(body));
}

const headerTemplates = s.map(s.array(s.expression('string')), { key: s.headerName() });

/** A URI written as plain text is checked when the configuration loads. */
function badUri(uri: Expression<unknown>): string | undefined {
  if (!uri.isConstant) return undefined;
  const text = String(uri.evaluate());
  try {
    const parsed = Uri.parse(text);
    return parsed.scheme && parsed.host ? undefined : `'${text}' is not a fully qualified URI`;
  } catch {
    return `'${text}' is not a URI`;
  }
}

export const StaticRequestFilterHeaplet = defineHeaplet({
  type: 'StaticRequestFilter',
  kind: 'filter',
  config: s
    .object({
      method: s.token('an HTTP method'),
      uri: s
        .expression('string')
        .refine(badUri, 'a fully qualified URI such as "http://app.example.com/login"'),
      version: s
        .string()
        .default('HTTP/1.1')
        .refine(
          (v) => (VERSION.test(v) ? undefined : `'${v}' is not an HTTP version`),
          'an HTTP version such as HTTP/1.1',
        ),
      headers: headerTemplates.default({}),
      form: s.map(s.array(s.expression('string'))).optional(),
      entity: s.expression('string').optional(),
    })
    .refine(
      (c) =>
        c.form !== undefined && c.entity !== undefined && c.method.toUpperCase() === 'POST'
          ? 'form and entity both give the body of a POST: keep one'
          : undefined,
      'either form or entity when the method is POST',
      () => 'entity',
    ),
  create: ({ config, logger }) =>
    new StaticRequestFilter(
      {
        method: config.method.toUpperCase(),
        uri: config.uri,
        version: config.version,
        headers: config.headers as Templates,
        ...(config.form === undefined ? {} : { form: config.form as Templates }),
        ...(config.entity === undefined ? {} : { entity: config.entity }),
      },
      logger,
    ),
});
