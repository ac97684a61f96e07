import { EL_CALL, type ElObject, getProperty, NO_SUCH_METHOD } from './access.ts';
import { elEquals, isMapLike, javaEquals, toNumber, toText, typeName } from './coercion.ts';
import { evaluationError } from './expression-error.ts';
import {
  fullMatch,
  javaReplaceAll,
  javaReplaceFirst,
  javaSplit,
  javaStringReplace,
  patternFor,
} from './java/index.ts';

/**
 * The Java methods configurations call on values (`request.uri.path.startsWith('/api')`). Each
 * table maps a method name to its implementation; arguments arrive as evaluated and are coerced the
 * way Java would bind them. Calling a method no table has returns NO_SUCH_METHOD, which the caller
 * reports as a warning and turns into null.
 */
type Method<T> = (self: T, args: unknown[]) => unknown;

/** A required string argument: null is Java's NullPointerException. */
function text(args: unknown[], i: number, method: string): string {
  const value = args[i];
  if (value === null || value === undefined) throw evaluationError(`${method}: argument ${i + 1} is null`);
  return toText(value);
}

/**
 * A regex argument: the pattern the compiler compiled at load when it was constant (REGEX_METHOD_ARGS),
 * else its text, which the method holds to the run-time budget against its input.
 */
function pattern(args: unknown[], i: number, method: string): string | RegExp {
  const value = args[i];
  return value instanceof RegExp ? value : text(args, i, method);
}

function int(args: unknown[], i: number, method: string): number {
  const n = toNumber(args[i]);
  if (!Number.isInteger(n)) throw evaluationError(`${method}: argument ${i + 1} is not an integer`);
  return n;
}

function checkRange(s: string, begin: number, end: number, method: string): void {
  if (begin < 0 || end > s.length || begin > end) {
    throw evaluationError(`${method}(${begin}, ${end}) is out of range for a string of length ${s.length}`);
  }
}

const STRING_METHODS: Record<string, { arity: number[]; fn: Method<string> }> = {
  startsWith: {
    arity: [1, 2],
    fn: (s, a) => s.startsWith(text(a, 0, 'startsWith'), a.length > 1 ? int(a, 1, 'startsWith') : 0),
  },
  endsWith: { arity: [1], fn: (s, a) => s.endsWith(text(a, 0, 'endsWith')) },
  contains: { arity: [1], fn: (s, a) => s.includes(text(a, 0, 'contains')) },
  indexOf: {
    arity: [1, 2],
    fn: (s, a) => s.indexOf(text(a, 0, 'indexOf'), a.length > 1 ? Math.max(0, int(a, 1, 'indexOf')) : 0),
  },
  lastIndexOf: {
    arity: [1, 2],
    fn: (s, a) => {
      const from = a.length > 1 ? int(a, 1, 'lastIndexOf') : Number.POSITIVE_INFINITY;
      return from < 0 ? -1 : s.lastIndexOf(text(a, 0, 'lastIndexOf'), from);
    },
  },
  substring: {
    arity: [1, 2],
    fn: (s, a) => {
      const begin = int(a, 0, 'substring');
      const end = a.length > 1 ? int(a, 1, 'substring') : s.length;
      checkRange(s, begin, end, 'substring');
      return s.substring(begin, end);
    },
  },
  charAt: {
    arity: [1],
    fn: (s, a) => {
      const i = int(a, 0, 'charAt');
      checkRange(s, i, i + 1, 'charAt');
      return s[i];
    },
  },
  toLowerCase: { arity: [0], fn: (s) => s.toLowerCase() },
  toUpperCase: { arity: [0], fn: (s) => s.toUpperCase() },
  trim: { arity: [0], fn: (s) => javaTrim(s) },
  strip: { arity: [0], fn: (s) => s.trim() },
  length: { arity: [0], fn: (s) => s.length },
  isEmpty: { arity: [0], fn: (s) => s.length === 0 },
  isBlank: { arity: [0], fn: (s) => s.trim().length === 0 },
  split: {
    arity: [1, 2],
    fn: (s, a) => javaSplit(s, pattern(a, 0, 'split'), a.length > 1 ? int(a, 1, 'split') : 0),
  },
  replace: { arity: [2], fn: (s, a) => javaStringReplace(s, text(a, 0, 'replace'), text(a, 1, 'replace')) },
  replaceAll: {
    arity: [2],
    fn: (s, a) => javaReplaceAll(s, pattern(a, 0, 'replaceAll'), text(a, 1, 'replaceAll')),
  },
  replaceFirst: {
    arity: [2],
    fn: (s, a) => javaReplaceFirst(s, pattern(a, 0, 'replaceFirst'), text(a, 1, 'replaceFirst')),
  },
  // Java's String.matches is a whole-string match, unlike the `matches` function, which finds.
  matches: {
    arity: [1],
    fn: (s, a) => fullMatch(patternFor(pattern(a, 0, 'matches'), s), s),
  },
  equals: { arity: [1], fn: (s, a) => s === a[0] },
  equalsIgnoreCase: {
    arity: [1],
    fn: (s, a) => typeof a[0] === 'string' && s.toLowerCase() === a[0].toLowerCase(),
  },
  concat: { arity: [1], fn: (s, a) => s + text(a, 0, 'concat') },
  compareTo: {
    arity: [1],
    fn: (s, a) => {
      const t = text(a, 0, 'compareTo');
      return s < t ? -1 : s > t ? 1 : 0;
    },
  },
};

/**
 * The string methods taking a Java regular expression, and the argument that holds it: the compiler
 * compiles a constant one at load and passes it compiled when the method is called on a string.
 */
export const REGEX_METHOD_ARGS: Readonly<Record<string, number>> = Object.freeze({
  split: 0,
  replaceAll: 0,
  replaceFirst: 0,
  matches: 0,
});

const LIST_METHODS: Record<string, { arity: number[]; fn: Method<unknown[]> }> = {
  get: { arity: [1], fn: (l, a) => getProperty(l, int(a, 0, 'get')) },
  size: { arity: [0], fn: (l) => l.length },
  isEmpty: { arity: [0], fn: (l) => l.length === 0 },
  contains: { arity: [1], fn: (l, a) => l.some((v) => javaEquals(v, a[0])) },
  indexOf: { arity: [1], fn: (l, a) => l.findIndex((v) => javaEquals(v, a[0])) },
};

type MapLike = Map<unknown, unknown> | Record<string, unknown>;
const keysOf = (m: MapLike) => (m instanceof Map ? [...m.keys()] : Object.keys(m));
const MAP_METHODS: Record<string, { arity: number[]; fn: Method<MapLike> }> = {
  get: { arity: [1], fn: (m, a) => getProperty(m, a[0]) },
  containsKey: {
    arity: [1],
    fn: (m, a) => (m instanceof Map ? m.has(a[0]) : Object.hasOwn(m, toText(a[0]))),
  },
  keySet: { arity: [0], fn: (m) => keysOf(m) },
  values: { arity: [0], fn: (m) => (m instanceof Map ? [...m.values()] : Object.values(m)) },
  size: { arity: [0], fn: (m) => keysOf(m).length },
  isEmpty: { arity: [0], fn: (m) => keysOf(m).length === 0 },
};

/** Methods every value has. */
const OBJECT_METHODS: Record<string, { arity: number[]; fn: Method<unknown> }> = {
  toString: { arity: [0], fn: (v: unknown) => toText(v) },
  equals: { arity: [1], fn: (v, a) => javaEquals(v, a[0]) || (typeof v !== 'object' && elEquals(v, a[0])) },
};

function lookup(self: unknown, name: string) {
  const table: Record<string, { arity: number[]; fn: Method<any> }> | undefined =
    typeof self === 'string'
      ? STRING_METHODS
      : Array.isArray(self)
        ? LIST_METHODS
        : isMapLike(self)
          ? MAP_METHODS
          : undefined;
  if (table && Object.hasOwn(table, name)) return table[name];
  return Object.hasOwn(OBJECT_METHODS, name) ? OBJECT_METHODS[name] : undefined;
}

/** Java's String.trim: removes every character up to U+0020 at both ends, and nothing else. */
export function javaTrim(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) <= 0x20) start++;
  while (end > start && s.charCodeAt(end - 1) <= 0x20) end--;
  return s.slice(start, end);
}

/** Every method name some value understands, for compile-time hints. */
export const KNOWN_METHOD_NAMES: ReadonlySet<string> = new Set([
  ...Object.keys(STRING_METHODS),
  ...Object.keys(LIST_METHODS),
  ...Object.keys(MAP_METHODS),
  ...Object.keys(OBJECT_METHODS),
]);

/**
 * Calls `self.name(...args)`. Null `self` is Java's NullPointerException (an evaluation error);
 * an unknown method yields NO_SUCH_METHOD.
 */
export function callMethod(self: unknown, name: string, args: unknown[]): unknown {
  if (self === null || self === undefined) throw evaluationError(`cannot call ${name}() on null`);
  const protocol = typeof self === 'object' ? (self as ElObject)[EL_CALL] : undefined;
  if (typeof protocol === 'function') {
    const result = protocol.call(self, name, args);
    if (result !== NO_SUCH_METHOD) return result ?? null;
  }
  const method = lookup(self, name);
  if (!method) return NO_SUCH_METHOD;
  if (!method.arity.includes(args.length)) {
    throw evaluationError(`${name}() on ${typeName(self)} takes ${method.arity.join(' or ')} argument(s)`);
  }
  return method.fn(self, args) ?? null;
}
