import { Schema } from '@portico/gateway-core';
import {
  childPath,
  fail,
  INVALID,
  type ParseContext,
  type Parsed,
  ReferenceSchema,
} from '@portico/gateway-core/schema';
import { originOf } from './goto-policy.ts';
import { isRegistration, type RegistrationHandle } from './registration.ts';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** An inline entry without `type` as a declaration of `inlineType`, its other fields its configuration. */
function declarationOf(item: unknown, inlineType: string | undefined): unknown {
  if (inlineType === undefined || !isRecord(item) || 'type' in item) return item;
  const { name, comment: _, ...config } = item;
  return { ...(typeof name === 'string' ? { name } : {}), type: inlineType, config };
}

/**
 * Registrations as the configurations write them: one reference (`"registrations": "OidcRelyingParty"`)
 * or an array of them, each a heap name or an inline declaration. With `inlineType`, an inline entry
 * without a `type` is a declaration of that type (OpenIG 3 wrote its providers so: `{"name": "google",
 * "clientId": ...}`), its other fields its configuration.
 */
export class RegistrationsSchema extends Schema<RegistrationHandle[]> {
  readonly expected: string;
  // Not #private: Schema.clone() copies own properties only.
  private readonly item: ReferenceSchema<RegistrationHandle>;
  private readonly inlineType: string | undefined;

  constructor(what: string, inlineType?: string) {
    super();
    this.item = new ReferenceSchema<RegistrationHandle>('object').is(isRegistration, what);
    this.inlineType = inlineType;
    this.expected = `${this.item.expected}, or an array of them`;
  }

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<RegistrationHandle[]> {
    const items = Array.isArray(value) ? value : [value];
    const at = (i: number) => (Array.isArray(value) ? `${path}[${i}]` : path);
    const out = items.map((item, i) =>
      this.item.parseValue(declarationOf(item, this.inlineType), at(i), ctx),
    );
    return out.includes(INVALID as never) ? INVALID : (out as RegistrationHandle[]);
  }

  jsonSchema() {
    const one = this.item.jsonSchema();
    return this.withDescription({ oneOf: [one, { type: 'array', items: one }] });
  }
}

/** The origin of an http(s) URL that is nothing more than an origin (no path, query or user). */
function originOnly(text: string): string | undefined {
  const origin = originOf(text);
  if (origin === undefined) return undefined;
  const url = new URL(text);
  return url.pathname === '/' && url.search === '' && url.hash === '' && url.username === ''
    ? origin
    : undefined;
}

/** The origins `goto` may lead to besides the gateway's own: `scheme://host[:port]`, nothing more. */
export class OriginsSchema extends Schema<string[]> {
  readonly expected = 'an array of origins such as "https://app.example.com"';

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<string[]> {
    if (!Array.isArray(value)) return fail(ctx, path, 'the allowed origins are not an array', this.expected);
    let ok = true;
    const out: string[] = [];
    value.forEach((item, i) => {
      const origin = typeof item === 'string' ? originOnly(item) : undefined;
      if (origin === undefined) {
        fail(ctx, `${path}[${i}]`, `${JSON.stringify(item)} is not an http(s) origin`, this.expected);
        ok = false;
      } else out.push(origin);
    });
    return ok ? out : INVALID;
  }

  jsonSchema() {
    return this.withDescription({ type: 'array', items: { type: 'string', format: 'uri' } });
  }
}

/** How many registrations a raw `registrations` or `providers` setting lists. */
const countOf = (value: unknown) =>
  value === undefined || value === null ? 0 : Array.isArray(value) ? value.length : 1;

/**
 * The filter's configuration as a whole, around its object schema: what needs more than one field.
 * - The loginHandler rule (required with zero or several registrations, OpenIG 3/4 providers
 *   counted), checked on what is written even when other settings fail, so that `portico validate`
 *   reports it with them.
 * - OpenIG 3's filter-level `providerHandler` reached its inline providers: an inline provider (no
 *   `type`) naming no handler of its own is given the filter's, when the filter names one by name.
 */
export class OAuth2ClientConfigSchema<T> extends Schema<T> {
  readonly expected: string;
  // Not #private: Schema.clone() copies own properties only.
  private readonly inner: Schema<T>;

  constructor(inner: Schema<T>) {
    super();
    this.inner = inner;
    this.expected = inner.expected;
  }

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<T> {
    const parsed = this.inner.parseValue(withProviderHandler(value), path, ctx);
    if (!isRecord(value) || value.loginHandler !== undefined) return parsed;
    const count = countOf(value.registrations) + countOf(value.providers);
    if (count === 1) return parsed;
    const why =
      count === 0
        ? 'a loginHandler is required when the filter has no registration (users choose or discover their provider)'
        : `a loginHandler is required when the filter has ${count} registrations (users choose among them)`;
    return fail(
      ctx,
      childPath(path, 'loginHandler'),
      why,
      'a loginHandler, unless there is exactly one registration',
    );
  }

  jsonSchema() {
    return this.inner.jsonSchema();
  }
}

function withProviderHandler(value: unknown): unknown {
  if (!isRecord(value) || typeof value.providerHandler !== 'string' || value.providers === undefined)
    return value;
  const handler = value.providerHandler;
  const needs = (p: unknown) => isRecord(p) && !('type' in p) && !('providerHandler' in p);
  const listed = Array.isArray(value.providers) ? value.providers : [value.providers];
  if (!listed.some(needs)) return value;
  const given = listed.map((p) => (needs(p) ? { ...(p as object), providerHandler: handler } : p));
  return { ...value, providers: Array.isArray(value.providers) ? given : given[0] };
}
