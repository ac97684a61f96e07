import { evaluationError } from './expression-error.ts';

/**
 * Unified EL coercion rules, with JavaScript numbers standing in for Java's Long and Double.
 * A failed coercion throws an EvaluationError, which makes the whole expression yield null.
 */

/** A number as Java's `Double.valueOf` / `Long.valueOf` would read it (surrounding blanks allowed). */
const NUMERIC_TEXT = /^\s*[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)\s*$/;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Maps in the sense of EL: JavaScript Maps and plain objects. */
export function isMapLike(value: unknown): value is Map<unknown, unknown> | Record<string, unknown> {
  return value instanceof Map || isPlainObject(value);
}

/** Coerces to a number for arithmetic and numeric comparison: null and '' are 0. */
export function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (value === null || value === undefined || value === '') return 0;
  if (typeof value === 'string') {
    if (NUMERIC_TEXT.test(value)) return Number(value);
    throw evaluationError(`cannot convert ${describeValue(value)} to a number`);
  }
  if (typeof value === 'bigint') return Number(value);
  throw evaluationError(`cannot convert ${typeName(value)} to a number`);
}

/** True when a string would coerce to a number, for operators that pick a numeric comparison. */
export function isNumericText(value: string): boolean {
  return NUMERIC_TEXT.test(value);
}

/** Coerces to a boolean: null and '' are false; text is true only when it reads 'true' in any case. */
export function toBoolean(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (value === null || value === undefined) return false;
  if (typeof value === 'string') return value.length === 4 && value.toLowerCase() === 'true';
  throw evaluationError(`cannot convert ${typeName(value)} to a boolean`);
}

/** Coerces to text the way EL composes templates: null is '', collections print like Java's. */
export function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  // Only collections need the list of those being printed: none made for a number.
  return display(value, typeof value === 'object' ? [] : NOT_WITHIN);
}

const NOT_WITHIN: object[] = [];

/** How deep collections are printed; deeper ones print as `...`. */
const DISPLAY_DEPTH = 9;

/**
 * `within` holds the collections being printed around `value`: one of them met again prints as Java
 * prints a map or list holding itself (`(this Map)`, `(this Collection)`), not once more, so that a
 * map holding itself in several entries prints in time linear in its size, not once per path up to
 * the depth bound (exponential in the number of such entries).
 */
function display(value: unknown, within: object[]): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'function':
    case 'symbol':
      return typeName(value);
  }
  const object = value as object;
  if (within.includes(object))
    return Array.isArray(object) || object instanceof Set ? '(this Collection)' : '(this Map)';
  if (within.length >= DISPLAY_DEPTH) return '...';
  within.push(object);
  try {
    return displayObject(object, within);
  } finally {
    within.pop();
  }
}

function displayObject(value: object, within: object[]): string {
  if (Array.isArray(value)) return `[${value.map((v) => display(v, within)).join(', ')}]`;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (value instanceof Map) {
    return `{${[...value].map(([k, v]) => `${display(k, within)}=${display(v, within)}`).join(', ')}}`;
  }
  if (value instanceof Set) return `[${[...value].map((v) => display(v, within)).join(', ')}]`;
  if (isPlainObject(value)) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${k}=${display(v, within)}`)
      .join(', ')}}`;
  }
  if (value instanceof Date) return value.toISOString();
  // Model objects (URIs, headers, ...) print through their own toString.
  return String(value);
}

/** EL `empty`: null, '', and empty collections, maps and arrays. */
export function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return true;
  if (typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.length === 0;
  if (value instanceof Map || value instanceof Set) return value.size === 0;
  if (isPlainObject(value)) {
    for (const _ in value) return false;
    return true;
  }
  const size = (value as { size?: unknown }).size;
  return typeof size === 'number' ? size === 0 : false;
}

/** EL `==`: numeric when either side is a number, boolean when either is a boolean, else text or equals. */
export function elEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || a === undefined || b === null || b === undefined) return false;
  if (typeof a === 'number' || typeof b === 'number') return toNumber(a) === toNumber(b);
  if (typeof a === 'boolean' || typeof b === 'boolean') return toBoolean(a) === toBoolean(b);
  if (typeof a === 'string' || typeof b === 'string') return toText(a) === toText(b);
  return javaEquals(a, b);
}

/**
 * EL ordering: numeric when either side is a number, text when either is a string, booleans
 * false < true. Returns undefined when either side is null (every ordering operator is then false).
 */
export function elCompare(a: unknown, b: unknown): number | undefined {
  if (a === null || a === undefined || b === null || b === undefined) return undefined;
  if (typeof a === 'number' || typeof b === 'number') {
    const x = toNumber(a);
    const y = toNumber(b);
    return x < y ? -1 : x > y ? 1 : x === y ? 0 : undefined;
  }
  if (typeof a === 'string' || typeof b === 'string') {
    if (typeof a === 'object' || typeof b === 'object') {
      throw evaluationError(`cannot compare ${typeName(a)} with ${typeName(b)}`);
    }
    const x = toText(a);
    const y = toText(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Date && b instanceof Date) return Math.sign(a.getTime() - b.getTime());
  throw evaluationError(`cannot compare ${typeName(a)} with ${typeName(b)}`);
}

/** Java `equals`: no coercion; lists and maps compare element by element. */
export function javaEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b);
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => javaEquals(v, b[i]));
  }
  if (isMapLike(a) && isMapLike(b)) {
    const x = entries(a);
    const y = new Map(entries(b));
    return x.length === y.size && x.every(([k, v]) => y.has(k) && javaEquals(v, y.get(k)));
  }
  return false;
}

function entries(map: Map<unknown, unknown> | Record<string, unknown>): [unknown, unknown][] {
  return map instanceof Map ? [...map] : Object.entries(map);
}

/** How much of a text a message quotes: values often come from the request, of any size. */
const QUOTED_LIMIT = 64;

/** True while an expression that reads `env` or `system` evaluates (see withValuesHidden). */
let valuesHidden = false;

/**
 * Runs an evaluation whose messages describe values instead of quoting them: the expression reads
 * the environment, where operators keep passwords, and a typo must not print one into the log.
 * Evaluation is synchronous, so a flag set around it covers exactly its own messages.
 */
export function withValuesHidden<R>(run: () => R): R {
  const before = valuesHidden;
  valuesHidden = true;
  try {
    return run();
  } finally {
    valuesHidden = before;
  }
}

/** True inside withValuesHidden: an evaluation reading the environment is under way. */
export function valuesAreHidden(): boolean {
  return valuesHidden;
}

/** A value as a message describes it when it must not be shown: its size or type only. */
export function hiddenValue(value: unknown): string {
  return typeof value === 'string' ? `${value.length} characters` : typeName(value);
}

/**
 * A value as an evaluation message names it, in bounded time and length: text quoted (its first
 * QUOTED_LIMIT characters, then how many more), numbers and booleans as written, anything else by
 * its type (printing a list or map could be as long as a request body, or endless for one that
 * holds itself). Inside withValuesHidden, by its size or type only.
 */
export function describeValue(value: unknown): string {
  if (valuesHidden) return `a value (${hiddenValue(value)}, not shown)`;
  if (typeof value === 'string') {
    return value.length <= QUOTED_LIMIT
      ? JSON.stringify(value)
      : `${JSON.stringify(value.slice(0, QUOTED_LIMIT))}... (${value.length} characters)`;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return typeName(value);
}

export function typeName(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Map || isPlainObject(value)) return 'a map';
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'Object'})`;
  return `a ${typeof value}`;
}
