import { ErrorCode, PorticoError } from '../errors.ts';
import type { QueryFilter, QueryValue } from './handler.ts';

/** The longest `_queryFilter` read; a longer one is refused before it is looked at. */
export const MAX_QUERY_FILTER_LENGTH = 4096;
/** How deeply parentheses and `!` may nest. */
const MAX_DEPTH = 32;

const COMPARISONS = new Set(['eq', 'co', 'sw', 'gt', 'ge', 'lt', 'le']);

/**
 * Parses a `_queryFilter` in the incumbents' query filter syntax, the part of it audit queries use:
 * `true`, `false`, `<pointer> eq|co|sw|gt|ge|lt|le <JSON value>`, `<pointer> pr`, `and`, `or`, `!`
 * and parentheses (`and` binds tighter than `or`). A pointer may leave out its leading `/`. One pass
 * over the text, nesting bounded: a filter that breaks the syntax, or is longer than
 * MAX_QUERY_FILTER_LENGTH, is a PORTICO_E_BAD_REQUEST error saying where.
 */
export function parseQueryFilter(text: string): QueryFilter {
  if (text.length > MAX_QUERY_FILTER_LENGTH)
    throw bad(`the query filter is longer than ${MAX_QUERY_FILTER_LENGTH} characters`);
  const parser = new Parser(text);
  const filter = parser.or(0);
  parser.skipSpace();
  if (!parser.atEnd()) throw parser.error('unexpected text');
  return filter;
}

class Parser {
  readonly #text: string;
  #pos = 0;

  constructor(text: string) {
    this.#text = text;
  }

  atEnd(): boolean {
    return this.#pos >= this.#text.length;
  }

  skipSpace(): void {
    while (this.#pos < this.#text.length && isSpace(this.#text.charCodeAt(this.#pos))) this.#pos++;
  }

  error(message: string): PorticoError {
    return bad(`${message} at position ${this.#pos + 1} of the query filter`);
  }

  or(depth: number): QueryFilter {
    const operands = [this.and(depth)];
    while (this.#keyword('or')) operands.push(this.and(depth));
    return operands.length === 1 ? operands[0]! : { op: 'or', operands };
  }

  and(depth: number): QueryFilter {
    const operands = [this.#unary(depth)];
    while (this.#keyword('and')) operands.push(this.#unary(depth));
    return operands.length === 1 ? operands[0]! : { op: 'and', operands };
  }

  #unary(depth: number): QueryFilter {
    if (depth >= MAX_DEPTH) throw this.error(`nested deeper than ${MAX_DEPTH}`);
    this.skipSpace();
    const c = this.#text[this.#pos];
    if (c === '!') {
      this.#pos++;
      return { op: 'not', operand: this.#unary(depth + 1) };
    }
    if (c === '(') {
      this.#pos++;
      const inner = this.or(depth + 1);
      this.skipSpace();
      if (this.#text[this.#pos] !== ')') throw this.error("')' expected");
      this.#pos++;
      return inner;
    }
    const word = this.#word();
    if (word === '') throw this.error('a filter expected');
    if (word === 'true' || word === 'false') return { op: word };
    const field = word.startsWith('/') ? word : `/${word}`;
    const op = this.#word();
    if (op === 'pr') return { op: 'pr', field };
    if (!COMPARISONS.has(op))
      throw this.error(`an operator (eq, co, sw, gt, ge, lt, le, pr) expected, not '${op}'`);
    return { op: op as 'eq', field, value: this.#value() };
  }

  /** The next run of characters up to a space or a parenthesis. */
  #word(): string {
    this.skipSpace();
    const start = this.#pos;
    while (this.#pos < this.#text.length && !endsWord(this.#text.charCodeAt(this.#pos))) this.#pos++;
    return this.#text.slice(start, this.#pos);
  }

  #keyword(word: string): boolean {
    this.skipSpace();
    const end = this.#pos + word.length;
    if (
      this.#text.startsWith(word, this.#pos) &&
      (end === this.#text.length || isSpace(this.#text.charCodeAt(end)) || '(!'.includes(this.#text[end]!))
    ) {
      this.#pos = end;
      return true;
    }
    return false;
  }

  /** A JSON string, number, boolean or null. */
  #value(): QueryValue {
    this.skipSpace();
    const start = this.#pos;
    if (this.#text[this.#pos] === '"') {
      this.#pos++;
      while (this.#pos < this.#text.length && this.#text[this.#pos] !== '"')
        this.#pos += this.#text[this.#pos] === '\\' ? 2 : 1;
      if (this.#pos >= this.#text.length) throw this.error('unterminated string');
      this.#pos++;
    } else {
      this.#word();
    }
    const literal = this.#text.slice(start, this.#pos);
    let value: unknown;
    try {
      value = JSON.parse(literal);
    } catch {
      this.#pos = start;
      throw this.error('a JSON string, number, boolean or null expected');
    }
    if (typeof value === 'object' && value !== null) {
      this.#pos = start;
      throw this.error('a JSON string, number, boolean or null expected');
    }
    return value as QueryValue;
  }
}

/** Space, tab, line feed, vertical tab, form feed, carriage return, no-break space. */
function isSpace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13) || code === 0xa0;
}

/** A character that ends a pointer, an operator or an unquoted value: a space or a parenthesis. */
function endsWord(code: number): boolean {
  return isSpace(code) || code === 40 || code === 41;
}

function bad(message: string): PorticoError {
  return new PorticoError(ErrorCode.BAD_REQUEST, message, {});
}

/**
 * Whether `event` matches `filter`. A pointer naming an array matches when one of its items does;
 * `gt`, `ge`, `lt` and `le` compare numbers with numbers and strings with strings (ISO timestamps
 * order as text), anything else never matches; `co` and `sw` take strings only, case-sensitive.
 */
export function matchesQueryFilter(filter: QueryFilter, event: unknown): boolean {
  switch (filter.op) {
    case 'true':
      return true;
    case 'false':
      return false;
    case 'and':
      return filter.operands.every((f) => matchesQueryFilter(f, event));
    case 'or':
      return filter.operands.some((f) => matchesQueryFilter(f, event));
    case 'not':
      return !matchesQueryFilter(filter.operand, event);
    case 'pr': {
      const found = pointerValue(event, filter.field);
      return found !== undefined && found !== null;
    }
    default: {
      const found = pointerValue(event, filter.field);
      const values = Array.isArray(found) ? found : [found];
      return values.some((value) => compare(filter.op, value, filter.value));
    }
  }
}

function compare(op: string, actual: unknown, expected: QueryValue): boolean {
  switch (op) {
    case 'eq':
      return actual === expected;
    case 'co':
      return typeof actual === 'string' && typeof expected === 'string' && actual.includes(expected);
    case 'sw':
      return typeof actual === 'string' && typeof expected === 'string' && actual.startsWith(expected);
  }
  const comparable =
    (typeof actual === 'number' && typeof expected === 'number') ||
    (typeof actual === 'string' && typeof expected === 'string');
  if (!comparable) return false;
  const a = actual as number | string;
  const b = expected as number | string;
  return op === 'gt' ? a > b : op === 'ge' ? a >= b : op === 'lt' ? a < b : a <= b;
}

/** The value a JSON pointer names in `value` (`~1` is `/`, `~0` is `~`), or undefined. */
export function pointerValue(value: unknown, pointer: string): unknown {
  if (pointer === '' || pointer === '/') return value;
  let current = value;
  for (const raw of pointer.slice(1).split('/')) {
    if (typeof current !== 'object' || current === null) return undefined;
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    current = Object.hasOwn(current, key) ? (current as Record<string, unknown>)[key] : undefined;
  }
  return current;
}
