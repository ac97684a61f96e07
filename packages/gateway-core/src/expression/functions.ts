import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { keysOf } from './access.ts';
import { isMapLike, javaEquals, toNumber, toText } from './coercion.ts';
import { evaluationError } from './expression-error.ts';
import {
  find,
  fullMatch,
  isFound,
  javaSplit,
  parseJavaProperties,
  runtimeJavaRegex,
  URI_FUNCTIONS,
} from './java/index.ts';
import { javaTrim } from './methods.ts';

/**
 * The built-in functions, called without a prefix (`${matches(request.uri.path, '^/api')}`), with the
 * incumbent's names and null behaviour. A function is resolved and its arity checked when the
 * expression is compiled; arguments named in `regexArgs` are compiled once when they are constant.
 */
export interface BuiltinFunction {
  /** Smallest and largest number of arguments (Infinity for varargs). */
  arity: [number, number];
  /** Argument positions holding a Java regular expression, passed compiled when constant. */
  regexArgs?: number[];
  /** Argument positions holding a Java regular expression, checked when constant but passed as text. */
  patternArgs?: number[];
  /** False for functions whose result may change between calls with the same arguments. */
  pure: boolean;
  fn(args: unknown[]): unknown;
}

const nullable =
  (f: (s: string) => unknown) =>
  (args: unknown[]): unknown =>
    args[0] === null || args[0] === undefined ? null : f(toText(args[0]));

/**
 * A regex argument: precompiled at load time when constant, else compiled (and cached) now and held
 * to the run-time budget for `inputLength` characters of input.
 */
function regex(value: unknown, inputLength: number): RegExp {
  if (value instanceof RegExp) return value;
  if (value === null || value === undefined) throw evaluationError('the regular expression is null');
  return runtimeJavaRegex(toText(value), inputLength);
}

// Standard base64 is whole groups of four, padded, as the incumbents' decoder wants: a text whose
// length is not a multiple of four is refused. The URL form is written without padding, so there
// the last group may be short.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BASE64URL = /^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}(?:==)?|[A-Za-z0-9_-]{3}=?)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeBase64(s: string, alphabet: RegExp, encoding: 'base64' | 'base64url'): string | null {
  if (!alphabet.test(s)) return null;
  try {
    return utf8.decode(Buffer.from(s, encoding));
  } catch {
    return null;
  }
}

/** Java's Integer.parseInt: optional sign, digits of the radix, 32-bit range; anything else is null. */
function parseInteger(s: string, radix: number): number | null {
  if (!Number.isInteger(radix) || radix < 2 || radix > 36) return null;
  const digits = '0123456789abcdefghijklmnopqrstuvwxyz'.slice(0, radix);
  const body = s.replace(/^[+-]/, '').toLowerCase();
  if (body.length === 0 || [...body].some((c) => !digits.includes(c))) return null;
  const n = Number.parseInt(s, radix);
  return n >= -2147483648 && n <= 2147483647 ? n : null;
}

function readText(file: string): string | null {
  try {
    return readFileSync(path.resolve(file), 'utf8');
  } catch {
    return null;
  }
}

function contains(container: unknown, value: unknown): boolean {
  if (typeof container === 'string')
    return value !== null && value !== undefined && container.includes(toText(value));
  if (Array.isArray(container)) return container.some((v) => javaEquals(v, value));
  if (container instanceof Set) return [...container].some((v) => javaEquals(v, value));
  return false;
}

function length(value: unknown): number {
  if (typeof value === 'string' || Array.isArray(value)) return value.length;
  if (value instanceof Map || value instanceof Set) return value.size;
  if (isMapLike(value)) return Object.keys(value).length;
  // Model objects (headers, forms) expose their size like Java collections do.
  const size = value !== null && typeof value === 'object' ? (value as { size?: unknown }).size : undefined;
  return typeof size === 'number' ? size : 0;
}

function findsPattern(args: unknown[]): boolean {
  if (args[0] === null || args[0] === undefined) return false;
  const s = toText(args[0]);
  return isFound(regex(args[1], s.length), s);
}

function matchingGroups(value: unknown, re: unknown): (string | null)[] | null {
  if (value === null || value === undefined) return null;
  const s = toText(value);
  const match = find(regex(re, s.length), s);
  return match ? Array.from(match, (g) => g ?? null) : null;
}

function wholeMatch(value: unknown, re: unknown): boolean {
  if (value === null || value === undefined) return false;
  const s = toText(value);
  return fullMatch(regex(re, s.length), s);
}

function keyMatch(map: unknown, re: unknown): string | null {
  const keys = keysOf(map);
  if (!keys) return null;
  // Every key is matched: the budget covers them all.
  let total = 0;
  for (const key of keys) if (typeof key === 'string') total += key.length + 1;
  const pattern = regex(re, total);
  for (const key of keys) {
    if (typeof key === 'string' && fullMatch(pattern, key)) return key;
  }
  return null;
}

function join(values: unknown, separator: unknown): string | null {
  if (values === null || values === undefined) return null;
  const list = Array.isArray(values) ? values : [values];
  return list
    .map((v) => toText(v))
    .join(separator === null || separator === undefined ? '' : toText(separator));
}

const fn = (arity: [number, number], f: (args: unknown[]) => unknown, extra: Partial<BuiltinFunction> = {}) =>
  ({ arity, pure: true, fn: f, ...extra }) satisfies BuiltinFunction;

const uriFunctions = Object.fromEntries(
  Object.entries(URI_FUNCTIONS).map(([name, f]) => [name, fn([1, 1], (a) => f(a[0]))]),
);

export const FUNCTIONS: Readonly<Record<string, BuiltinFunction>> = Object.freeze({
  array: fn([0, Number.POSITIVE_INFINITY], (a) =>
    a.map((v) => (v === null || v === undefined ? null : toText(v))),
  ),
  bool: fn([1, 1], (a) => (typeof a[0] === 'boolean' ? a[0] : toText(a[0]).toLowerCase() === 'true')),
  boolean: fn([1, 1], (a) => (typeof a[0] === 'boolean' ? a[0] : toText(a[0]).toLowerCase() === 'true')),
  contains: fn([2, 2], (a) => contains(a[0], a[1])),
  decodeBase64: fn(
    [1, 1],
    nullable((s) => decodeBase64(s, BASE64, 'base64')),
  ),
  decodeBase64url: fn(
    [1, 1],
    nullable((s) => decodeBase64(s, BASE64URL, 'base64url')),
  ),
  encodeBase64: fn(
    [1, 1],
    nullable((s) => Buffer.from(s, 'utf8').toString('base64')),
  ),
  encodeBase64url: fn(
    [1, 1],
    nullable((s) => Buffer.from(s, 'utf8').toString('base64url')),
  ),
  escapeJson: fn(
    [1, 1],
    nullable((s) => JSON.stringify(s).slice(1, -1)),
  ),
  fileToUrl: fn(
    [1, 1],
    nullable((s) => pathToFileURL(path.resolve(s)).href),
  ),
  indexOf: fn([2, 2], (a) =>
    a[0] === null || a[0] === undefined || a[1] === null || a[1] === undefined
      ? -1
      : toText(a[0]).indexOf(toText(a[1])),
  ),
  integer: fn(
    [1, 1],
    nullable((s) => parseInteger(s, 10)),
  ),
  integerWithRadix: fn([2, 2], (a) =>
    a[0] === null || a[0] === undefined ? null : parseInteger(toText(a[0]), toNumber(a[1])),
  ),
  join: fn([2, 2], (a) => join(a[0], a[1])),
  keyMatch: fn([2, 2], (a) => keyMatch(a[0], a[1]), { regexArgs: [1] }),
  length: fn([1, 1], (a) => length(a[0])),
  matches: fn([2, 2], findsPattern, { regexArgs: [1] }),
  matchingGroups: fn([2, 2], (a) => matchingGroups(a[0], a[1]), { regexArgs: [1] }),
  // The newer incumbents' names: `find` is `matches` (used as route conditions in real
  // configurations), `findGroups` is `matchingGroups`, `matchesWithRegex` matches the whole string.
  find: fn([2, 2], findsPattern, { regexArgs: [1] }),
  findGroups: fn([2, 2], (a) => matchingGroups(a[0], a[1]), { regexArgs: [1] }),
  matchesWithRegex: fn([2, 2], (a) => wholeMatch(a[0], a[1]), { regexArgs: [1] }),
  pathToUrl: fn(
    [1, 1],
    nullable((s) => pathToFileURL(path.resolve(s)).href),
  ),
  read: fn([1, 1], nullable(readText), { pure: false }),
  readProperties: fn(
    [1, 1],
    nullable((s) => {
      const content = readText(s);
      return content === null ? null : parseJavaProperties(content);
    }),
    { pure: false },
  ),
  split: fn(
    [2, 2],
    (a) => (a[0] === null || a[0] === undefined ? null : javaSplit(toText(a[0]), splitPattern(a[1]))),
    {
      regexArgs: [1],
    },
  ),
  toLowerCase: fn(
    [1, 1],
    nullable((s) => s.toLowerCase()),
  ),
  toString: fn([1, 1], (a) => (a[0] === null || a[0] === undefined ? null : toText(a[0]))),
  toUpperCase: fn(
    [1, 1],
    nullable((s) => s.toUpperCase()),
  ),
  trim: fn([1, 1], nullable(javaTrim)),
  ...uriFunctions,
});

/** `split` takes the pattern compiled at load, or its text (javaSplit holds it to the budget). */
function splitPattern(value: unknown): string | RegExp {
  if (value instanceof RegExp) return value;
  if (value === null || value === undefined) throw evaluationError('split: the regular expression is null');
  return toText(value);
}

export function lookupFunction(name: string): BuiltinFunction | undefined {
  return Object.hasOwn(FUNCTIONS, name) ? FUNCTIONS[name] : undefined;
}
