import { type Bindings, type Expression, evaluateSettled, PorticoError, Schema } from '@portico/gateway-core';
import { EL_GET, EL_KEYS, type ElObject } from '@portico/gateway-core/expressions';
import {
  ArraySchema,
  ExpressionSchema,
  fail,
  INVALID,
  MapSchema,
  type ParseContext,
  type Parsed,
} from '@portico/gateway-core/schema';

/** The filter's own error codes, beside the core's (listed in the README). */
export const JwtBuilderErrorCode = {
  /** The template gave no map, or a value JSON cannot carry: the request is answered 500. */
  TEMPLATE: 'PORTICO_E_JWT_BUILDER_TEMPLATE',
  /** The key named does not fit the algorithm (its curve, its size); a load-time error. */
  KEY: 'PORTICO_E_JWT_BUILDER_KEY',
} as const;

/**
 * The `template` setting compiled: one expression giving the whole map, or a map whose values are
 * expressions, constants, or lists and maps of them, nested as deep as the JSON is.
 */
type TemplateNode =
  | { kind: 'constant'; value: unknown }
  | { kind: 'expression'; expression: Expression<unknown> }
  | { kind: 'list'; items: TemplateNode[] }
  | { kind: 'map'; entries: [string, TemplateNode][] };

export type ClaimsTemplate = TemplateNode & { kind: 'expression' | 'map' };

const MAP_OR_EXPRESSION = 'a map of claims, or an expression giving one';

export class ClaimsTemplateSchema extends Schema<ClaimsTemplate> {
  readonly expected = MAP_OR_EXPRESSION;
  // Not #private: Schema.clone() copies own properties only.
  private readonly expression = new ExpressionSchema('any');
  // The core's schemas walk lists and maps, noting each value a configuration token gave, so that
  // an expression a token completed is shown as written, without the token's value.
  private readonly items = new ArraySchema(new TemplateNodeSchema(this));
  private readonly entries = new MapSchema(new TemplateNodeSchema(this));

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<ClaimsTemplate> {
    if (typeof value !== 'string' && !isPlainObject(value)) {
      return fail(ctx, path, 'the template is neither a map nor an expression', MAP_OR_EXPRESSION);
    }
    const node = this.node(value, path, ctx);
    return node === INVALID ? INVALID : (node as ClaimsTemplate);
  }

  /** @internal One value of the template, at `path`. */
  node(value: unknown, path: string, ctx: ParseContext): Parsed<TemplateNode> {
    if (typeof value === 'string') {
      const expression = this.expression.parseValue(value, path, ctx);
      return expression === INVALID ? INVALID : { kind: 'expression', expression };
    }
    if (Array.isArray(value)) {
      const items = this.items.parseValue(value, path, ctx);
      return items === INVALID ? INVALID : { kind: 'list', items };
    }
    if (isPlainObject(value)) {
      // Every entry is parsed, so that each bad expression of the template is reported at once.
      const entries = this.entries.parseValue(value, path, ctx);
      return entries === INVALID ? INVALID : { kind: 'map', entries: Object.entries(entries) };
    }
    return { kind: 'constant', value };
  }

  jsonSchema() {
    return this.withDescription({ type: ['object', 'string'] });
  }
}

/** A value inside the template, for the core's list and map schemas to parse. */
class TemplateNodeSchema extends Schema<TemplateNode> {
  readonly expected = 'a claim: a value, or an expression giving one';
  private readonly template: ClaimsTemplateSchema;

  constructor(template: ClaimsTemplateSchema) {
    super();
    this.template = template;
  }

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<TemplateNode> {
    return this.template.node(value, path, ctx);
  }

  jsonSchema() {
    return {};
  }
}

/**
 * The claims of one request: the template evaluated and made JSON. A claim whose value is null is
 * left out (so is a null entry of a nested map); a null in a list keeps its place.
 */
export async function evaluateClaims(
  template: ClaimsTemplate,
  bindings: Bindings,
): Promise<Record<string, unknown>> {
  const claims = toJson(await evaluate(template, bindings), 'the template', 0);
  if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) {
    throw templateError(`the template gave ${describe(claims)}, not a map of claims`);
  }
  return claims as Record<string, unknown>;
}

async function evaluate(node: TemplateNode, bindings: Bindings): Promise<unknown> {
  switch (node.kind) {
    case 'constant':
      return node.value;
    case 'expression':
      // Settled: a value may read a lazy map (a SqlAttributesFilter's row) still loading.
      return evaluateSettled(node.expression, bindings);
    case 'list':
      return Promise.all(node.items.map((item) => evaluate(item, bindings)));
    case 'map': {
      const values = await Promise.all(node.entries.map(([, item]) => evaluate(item, bindings)));
      return Object.fromEntries(node.entries.map(([key], index) => [key, values[index]]));
    }
  }
}

// Deeper than any claim set needs; a value that refers to itself would otherwise never end.
const MAX_DEPTH = 64;

/**
 * A JSON value from what an expression gave: strings, finite numbers, booleans, lists and maps,
 * including the map-like objects expressions read (a lazy map, the headers). Anything else (a
 * function, a non-finite number, an object of a class) is an error naming where it is.
 */
function toJson(value: unknown, where: string, depth: number): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (depth > MAX_DEPTH) throw templateError(`${where} nests deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) return value.map((item, index) => toJson(item, `${where}[${index}]`, depth + 1));
  const entries = entriesOf(value);
  if (entries === undefined) throw templateError(`${where} is ${describe(value)}, which JSON cannot carry`);
  const map: Record<string, unknown> = {};
  for (const [key, item] of entries) {
    const json = toJson(item, where === 'the template' ? `the claim '${key}'` : `${where}.${key}`, depth + 1);
    if (json !== null) map[key] = json;
  }
  return map;
}

function entriesOf(value: unknown): [string, unknown][] | undefined {
  if (isPlainObject(value)) return Object.entries(value);
  if (value instanceof Map) return [...value].map(([key, item]) => [String(key), item]);
  const el = value as ElObject;
  if (typeof value === 'object' && typeof el[EL_KEYS] === 'function' && typeof el[EL_GET] === 'function') {
    return el[EL_KEYS]().map((key) => [key, el[EL_GET]!(key)]);
  }
  return undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return `an object of type ${value.constructor?.name ?? 'unknown'}`;
  if (typeof value === 'number') return `the number ${value}`;
  return `a ${typeof value}`;
}

function templateError(message: string): PorticoError {
  return new PorticoError(JwtBuilderErrorCode.TEMPLATE, message);
}
