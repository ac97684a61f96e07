import {
  type Bindings,
  bindingsFor,
  type Context,
  compile,
  compileJavaRegex,
  defineHeaplet,
  ErrorCode,
  type Expression,
  evaluateSettled,
  type Filter,
  type Handler,
  type HeapletContext,
  isPorticoError,
  type Logger,
  PorticoError,
  type Request,
  type Response,
  s,
} from '@portico/gateway-core';

/** What an attribute's value is, and how it is written in a Set-Cookie header. */
type AttributeKind = 'string' | 'boolean' | 'integer';

interface AttributeName {
  /** How the attribute is written in a header (`HttpOnly`), or `value` for the cookie's value. */
  written: string;
  kind: AttributeKind;
}

/** The attributes a rule may set, by their configuration names (case-insensitive, `-` or `_` or none). */
const ATTRIBUTES: Record<string, AttributeName> = {
  value: { written: 'value', kind: 'string' },
  domain: { written: 'Domain', kind: 'string' },
  path: { written: 'Path', kind: 'string' },
  expires: { written: 'Expires', kind: 'string' },
  maxage: { written: 'Max-Age', kind: 'integer' },
  secure: { written: 'Secure', kind: 'boolean' },
  httponly: { written: 'HttpOnly', kind: 'boolean' },
  samesite: { written: 'SameSite', kind: 'string' },
};

/** The characters a cookie value or an attribute value may not hold (they would end the header or the pair). */
const FORBIDDEN = /[;\p{Cc}]/u;

/** One attribute a rule sets: the attribute, and the value's expression (or constant). */
export interface AttributeUpdate {
  attribute: AttributeName;
  value: Expression<unknown> | string | boolean | number;
}

/** The updates for the cookies whose whole name matches `name`. */
export interface CookieRule {
  name: RegExp;
  updates: readonly AttributeUpdate[];
}

/** A Set-Cookie header cut into its parts, attribute order and spelling kept. */
interface SetCookie {
  name: string;
  value: string;
  attributes: { name: string; value: string | null }[];
}

function parse(header: string): SetCookie | undefined {
  const [pair = '', ...rest] = header.split(';');
  const eq = pair.indexOf('=');
  if (eq <= 0) return undefined;
  const attributes = rest
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      const at = part.indexOf('=');
      return at < 0
        ? { name: part, value: null }
        : { name: part.slice(0, at).trim(), value: part.slice(at + 1).trim() };
    });
  return { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), attributes };
}

function serialize(cookie: SetCookie): string {
  let text = `${cookie.name}=${cookie.value}`;
  for (const { name, value } of cookie.attributes)
    text += value === null ? `; ${name}` : `; ${name}=${value}`;
  return text;
}

function attributeIndex(cookie: SetCookie, written: string): number {
  const key = written.toLowerCase();
  return cookie.attributes.findIndex((a) => a.name.toLowerCase() === key);
}

/** The attribute's value now: the cookie's value, an attribute's, `true` for a flag that is there. */
function previousOf(cookie: SetCookie, attribute: AttributeName): unknown {
  if (attribute.written === 'value') return cookie.value;
  const at = attributeIndex(cookie, attribute.written);
  if (attribute.kind === 'boolean') return at >= 0;
  const value = at < 0 ? null : cookie.attributes[at]!.value;
  if (attribute.kind === 'integer' && value !== null && /^-?\d+$/.test(value)) return Number(value);
  return value;
}

/**
 * SetCookieUpdateFilter changes the attributes of the cookies the response sets: for each
 * `Set-Cookie` header whose cookie name matches a rule's pattern (the whole name), each attribute the
 * rule names takes the value its expression gives, evaluated per response with `previous` bound to
 * the attribute's value before. Rules apply in the order written, so a later one wins. A flag
 * (`secure`, `http-only`) is added for true and removed for false; a value expression that gives
 * null leaves the attribute as it was.
 */
export class SetCookieUpdateFilter implements Filter {
  readonly #rules: readonly CookieRule[];
  readonly #logger: Logger;

  constructor(rules: readonly CookieRule[], logger: Logger) {
    this.#rules = rules;
    this.#logger = logger;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    const response = await next.handle(context, request);
    const headers = response.headers.getAll('set-cookie');
    if (headers.length === 0) return response;
    const bindings = bindingsFor(context, request, response) as Record<string, unknown>;
    const updated: string[] = [];
    let changed = false;
    for (const header of headers) {
      const cookie = parse(header);
      if (cookie === undefined) {
        updated.push(header);
        continue;
      }
      let touched = false;
      for (const rule of this.#rules) {
        rule.name.lastIndex = 0;
        if (!rule.name.test(cookie.name)) continue;
        for (const update of rule.updates) {
          if (await this.#apply(cookie, update, bindings)) touched = true;
        }
      }
      updated.push(touched ? serialize(cookie) : header);
      changed ||= touched;
    }
    if (changed) response.headers.set('Set-Cookie', updated);
    return response;
  }

  /** Applies one update; whether the cookie changed. */
  async #apply(
    cookie: SetCookie,
    update: AttributeUpdate,
    bindings: Record<string, unknown>,
  ): Promise<boolean> {
    const { attribute } = update;
    let value: unknown = update.value;
    if (typeof value === 'object' && value !== null) {
      bindings.previous = previousOf(cookie, attribute);
      try {
        let evaluated = evaluateSettled(value as Expression<unknown>, bindings as Bindings);
        if (evaluated instanceof Promise) evaluated = await evaluated;
        value = evaluated;
      } catch {
        value = null;
      }
    }
    if (value === null || value === undefined) return false;
    if (attribute.kind === 'boolean') {
      const on = value === true || (typeof value === 'string' && value.toLowerCase() === 'true');
      const at = attributeIndex(cookie, attribute.written);
      if (on && at < 0) cookie.attributes.push({ name: attribute.written, value: null });
      else if (!on && at >= 0) cookie.attributes.splice(at, 1);
      else return false;
      return true;
    }
    const text = String(value);
    if (FORBIDDEN.test(text) || (attribute.kind === 'integer' && !/^-?\d+$/.test(text))) {
      this.#logger.debug('a Set-Cookie attribute value cannot be written; the attribute is left as it was', {
        cookie: cookie.name,
        attribute: attribute.written,
      });
      return false;
    }
    if (attribute.written === 'value') {
      cookie.value = text;
      return true;
    }
    const at = attributeIndex(cookie, attribute.written);
    if (at >= 0) cookie.attributes[at] = { name: cookie.attributes[at]!.name, value: text };
    else cookie.attributes.push({ name: attribute.written, value: text });
    return true;
  }
}

const config = s.object({
  // cookie-name pattern → { attribute-name: value }.
  cookies: s.map(s.map(s.any())),
});

type Config = { cookies: Record<string, Record<string, unknown>> };

/** The rules as the filter applies them; a coded error names the pattern or attribute that is wrong. */
function rulesOf({ config, configAt }: HeapletContext<Config>): CookieRule[] {
  const rules: CookieRule[] = [];
  for (const [pattern, attributes] of Object.entries(config.cookies)) {
    let name: RegExp;
    try {
      // The whole name must match, as the incumbents match it; on the core's linear-time engine.
      name = compileJavaRegex(`^(?:${pattern})$`);
    } catch (error) {
      if (!isPorticoError(error)) throw error;
      throw new PorticoError(ErrorCode.CONFIG, 'the cookie name is not a regular expression', {
        ...configAt('cookies', pattern),
        expected: 'a regular expression matching cookie names',
      });
    }
    const updates: AttributeUpdate[] = [];
    for (const [written, value] of Object.entries(attributes)) {
      const attribute = ATTRIBUTES[written.toLowerCase().replace(/[-_]/g, '')];
      if (attribute === undefined) {
        throw new PorticoError(ErrorCode.CONFIG, `unknown Set-Cookie attribute '${written}'`, {
          ...configAt('cookies', pattern, written),
          expected: 'one of value, domain, path, expires, max-age, secure, http-only, SameSite',
        });
      }
      updates.push({ attribute, value: ruleValue(attribute, value, configAt('cookies', pattern, written)) });
    }
    if (updates.length === 0) {
      throw new PorticoError(ErrorCode.CONFIG, 'a cookie rule updates no attribute', {
        ...configAt('cookies', pattern),
        expected: 'at least one "attribute": value',
      });
    }
    rules.push({ name, updates });
  }
  if (rules.length === 0) {
    throw new PorticoError(ErrorCode.CONFIG, 'cookies is empty', {
      ...configAt('cookies'),
      expected: 'at least one cookie name pattern with the attributes to update',
    });
  }
  return rules;
}

/** A rule's value: a constant as written, or a compiled runtime expression of the attribute's kind. */
function ruleValue(
  attribute: AttributeName,
  value: unknown,
  at: { file?: string; jsonPath: string },
): AttributeUpdate['value'] {
  const expected =
    attribute.kind === 'boolean'
      ? 'a boolean, or an expression giving one'
      : attribute.kind === 'integer'
        ? 'an integer, or an expression giving one'
        : 'a string, or an expression giving one';
  if (typeof value === 'string') {
    if (!value.includes('${')) {
      if (attribute.kind === 'boolean' && !/^(true|false)$/i.test(value))
        throw new PorticoError(ErrorCode.CONFIG, `'${value}' is not a boolean`, { ...at, expected });
      if (attribute.kind === 'integer' && !/^-?\d+$/.test(value))
        throw new PorticoError(ErrorCode.CONFIG, `'${value}' is not an integer`, { ...at, expected });
      if (FORBIDDEN.test(value))
        throw new PorticoError(ErrorCode.CONFIG, 'the value holds ";" or a control character', {
          ...at,
          expected,
        });
      return attribute.kind === 'boolean' ? value.toLowerCase() === 'true' : value;
    }
    try {
      return compile(value, attribute.kind);
    } catch (error) {
      if (isPorticoError(error)) throw error.at(at);
      throw error;
    }
  }
  if (attribute.kind === 'boolean' && typeof value === 'boolean') return value;
  if (attribute.kind === 'integer' && Number.isInteger(value)) return value as number;
  throw new PorticoError(ErrorCode.CONFIG, "the value is not of the attribute's kind", { ...at, expected });
}

export const SetCookieUpdateFilterHeaplet = defineHeaplet({
  type: 'SetCookieUpdateFilter',
  kind: 'filter',
  config,
  create: (context) => new SetCookieUpdateFilter(rulesOf(context), context.logger),
});
