import { brandClass } from '../brand.ts';
/**
 * Durations written in English in gateway configuration files: `10 seconds`, `1h30m`,
 * `23 hours 59 minutes and 59 seconds`, `unlimited`, `zero`.
 *
 * The total is kept as an exact bigint number of nanoseconds, so summing parts never rounds.
 */
import { ErrorCode, PorticoError } from '../errors.ts';

interface Unit {
  readonly singular: string;
  readonly plural: string;
  readonly nanos: bigint;
  readonly spellings: readonly string[];
}

// Largest first, because toString writes the parts in this order.
const UNITS: readonly Unit[] = [
  { singular: 'day', plural: 'days', nanos: 86_400_000_000_000n, spellings: ['days', 'day', 'd'] },
  { singular: 'hour', plural: 'hours', nanos: 3_600_000_000_000n, spellings: ['hours', 'hour', 'h'] },
  {
    singular: 'minute',
    plural: 'minutes',
    nanos: 60_000_000_000n,
    spellings: ['minutes', 'minute', 'min', 'm'],
  },
  {
    singular: 'second',
    plural: 'seconds',
    nanos: 1_000_000_000n,
    spellings: ['seconds', 'second', 'sec', 's'],
  },
  {
    singular: 'millisecond',
    plural: 'milliseconds',
    nanos: 1_000_000n,
    spellings: ['milliseconds', 'millisecond', 'millisec', 'millis', 'milli', 'ms'],
  },
  {
    singular: 'microsecond',
    plural: 'microseconds',
    nanos: 1_000n,
    // U+03BC (Greek small mu) and U+00B5 (micro sign) look alike; people type either.
    spellings: ['microseconds', 'microsecond', 'microsec', 'micros', 'micro', 'us', '\u03bcs', '\u00b5s'],
  },
  {
    singular: 'nanosecond',
    plural: 'nanoseconds',
    nanos: 1n,
    spellings: ['nanoseconds', 'nanosecond', 'nanosec', 'nanos', 'nano', 'ns'],
  },
];

// Compiled once: every accepted lower-case spelling to its unit.
const UNIT_BY_SPELLING: ReadonlyMap<string, Unit> = new Map(
  UNITS.flatMap((unit) => unit.spellings.map((spelling): [string, Unit] => [spelling, unit])),
);

// Words that are a whole duration by themselves. `none` is not in our documented list, but the
// incumbent accepts it and existing configuration files use it.
const STANDALONE: ReadonlyMap<string, 'unlimited' | 'zero'> = new Map([
  ['indefinite', 'unlimited'],
  ['infinity', 'unlimited'],
  ['undefined', 'unlimited'],
  ['unlimited', 'unlimited'],
  ['none', 'unlimited'],
  ['zero', 'zero'],
  ['disabled', 'zero'],
]);

// The largest finite duration: 2^63 - 1 nanoseconds (about 292 years), the range of the incumbent's
// and most runtimes' 64-bit nanosecond clocks. Bigints could go further, but a value past this would
// not survive being handed to those, and anything meant to be that long should say `unlimited`.
const MAX_NANOS = 2n ** 63n - 1n;

const EXPECTED_PART = "a number followed by a unit such as '10 seconds'";
const EXPECTED_TEXT = "a string such as '10 seconds', '1h30m' or 'unlimited'";

function fail(text: string | undefined, message: string, expected: string): never {
  throw new PorticoError(ErrorCode.DURATION, message, { text, expected });
}

interface Token {
  readonly kind: 'number' | 'word' | 'comma';
  /** As written for numbers and commas, lower case for words. */
  readonly text: string;
}

// Spaces between tokens are skipped, so `1h30m` and `1 h 30 m` read the same. The last branch takes any
// other single character (a whole code point, thanks to the `u` flag) so that it can be reported.
const TOKEN = /\s*(?:(\d+)|(\p{L}+)|(,)|(\S))/uy;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(text); match !== null; match = TOKEN.exec(text)) {
    const [, digits, letters, comma, other] = match;
    if (digits !== undefined) tokens.push({ kind: 'number', text: digits });
    else if (letters !== undefined) tokens.push({ kind: 'word', text: letters.toLowerCase() });
    else if (comma !== undefined) tokens.push({ kind: 'comma', text: comma });
    else if (other !== undefined) rejectCharacter(text, other, TOKEN.lastIndex - other.length);
  }
  return tokens;
}

// Signs and decimal points get their own messages: they are the likely mistakes.
function rejectCharacter(text: string, char: string, index: number): never {
  const after = text.slice(index + 1);
  if (char === '-' && /^\s*\d/.test(after)) {
    fail(text, `Invalid duration ${quote(text)}: durations cannot be negative`, EXPECTED_PART);
  }
  if (char === '.' && (/\d$/.test(text.slice(0, index)) || /^\d/.test(after))) {
    fail(
      text,
      `Invalid duration ${quote(text)}: numbers must be whole; write '1 hour 30 minutes', not '1.5 hours'`,
      'whole numbers of a unit, smaller units for fractions',
    );
  }
  fail(
    text,
    `Invalid duration ${quote(text)}: unexpected character ${quote(char)}`,
    "numbers, unit words, spaces, commas or 'and'",
  );
}

/** The total in nanoseconds, or null for unlimited. */
function parseNanos(text: unknown): bigint | null {
  if (typeof text !== 'string') {
    const kind = text === null ? 'null' : Array.isArray(text) ? 'an array' : `a ${typeof text}`;
    fail(undefined, `Invalid duration: a duration must be text, not ${kind}`, EXPECTED_TEXT);
  }
  const tokens = tokenize(text);
  if (tokens.length === 0) fail(text, 'Invalid duration: the text is empty', EXPECTED_TEXT);

  const standalone = tokens.find((token) => token.kind === 'word' && STANDALONE.has(token.text));
  if (standalone !== undefined) {
    if (tokens.length > 1) {
      fail(
        text,
        `Invalid duration ${quote(text)}: ${quote(standalone.text)} must stand alone`,
        `${quote(standalone.text)} by itself, or parts such as '10 seconds' without it`,
      );
    }
    return STANDALONE.get(standalone.text) === 'unlimited' ? null : 0n;
  }

  let total = 0n;
  let i = 0;
  for (;;) {
    const number = tokens[i];
    const word = tokens[i + 1];
    if (number === undefined) {
      fail(text, `Invalid duration ${quote(text)}: nothing follows the last separator`, EXPECTED_PART);
    }
    if (number.kind !== 'number') {
      const why = UNIT_BY_SPELLING.has(number.text)
        ? `the unit ${quote(number.text)} has no number before it`
        : `${quote(number.text)} is not a number`;
      fail(text, `Invalid duration ${quote(text)}: ${why}`, EXPECTED_PART);
    }
    if (word?.kind !== 'word') {
      fail(text, `Invalid duration ${quote(text)}: the number ${number.text} has no unit`, EXPECTED_PART);
    }
    const unit = UNIT_BY_SPELLING.get(word.text);
    if (unit === undefined) {
      fail(text, `Invalid duration ${quote(text)}: unknown unit ${quote(word.text)}`, expectedUnit());
    }
    // Checking the digit count first keeps BigInt from parsing a huge number only to reject it.
    if (number.text.replace(/^0+/, '').length > String(MAX_NANOS).length) tooLarge(text);
    total += BigInt(number.text) * unit.nanos;
    if (total > MAX_NANOS) tooLarge(text);

    i += 2;
    if (i === tokens.length) return total;
    // Between parts: spaces alone, a comma, `and`, or a comma then `and` (`1 hour, and 5 minutes`).
    if (tokens[i]?.kind === 'comma') i++;
    if (tokens[i]?.kind === 'word' && tokens[i]?.text === 'and') i++;
  }
}

function tooLarge(text: string | undefined): never {
  fail(
    text,
    `Invalid duration${text === undefined ? '' : ` ${quote(text)}`}: too large`,
    `at most ${MAX_NANOS} nanoseconds, about 292 years; 'unlimited' for no limit`,
  );
}

function expectedUnit(): string {
  return `one of the units ${UNITS.map((unit) => unit.plural).join(', ')}`;
}

function quote(text: string): string {
  return `'${text}'`;
}

/** A length of time: a whole number of nanoseconds from zero to about 292 years, or unlimited. */
export class Duration {
  static readonly UNLIMITED: Duration = new Duration(null);
  static readonly ZERO: Duration = new Duration(0n);

  readonly isUnlimited: boolean;
  readonly isZero: boolean;
  /** null when unlimited. */
  readonly #nanos: bigint | null;

  private constructor(nanos: bigint | null) {
    this.#nanos = nanos;
    this.isUnlimited = nanos === null;
    this.isZero = nanos === 0n;
    Object.freeze(this);
  }

  /** Reads English such as `10 seconds`, `1h30m` or `unlimited`; throws PorticoError(DURATION). */
  static parse(text: string): Duration {
    const nanos = parseNanos(text);
    return nanos === null ? Duration.UNLIMITED : Duration.ofNanos(nanos);
  }

  /** Fractions are rounded to the nearest nanosecond; Infinity gives UNLIMITED (as toMillis does back). */
  static ofMillis(ms: number): Duration {
    return fromNumber(ms, 1_000_000n);
  }

  /** Fractions are rounded to the nearest nanosecond; Infinity gives UNLIMITED (as toSeconds does back). */
  static ofSeconds(s: number): Duration {
    return fromNumber(s, 1_000_000_000n);
  }

  static ofNanos(n: bigint): Duration {
    if (typeof n !== 'bigint' || n < 0n) {
      fail(String(n), `Invalid duration: ${String(n)} is not a non-negative bigint`, 'a bigint >= 0n');
    }
    if (n > MAX_NANOS) tooLarge(`${n} nanoseconds`);
    return n === 0n ? Duration.ZERO : new Duration(n);
  }

  /** Throws for UNLIMITED, which has no number of nanoseconds. */
  toNanos(): bigint {
    if (this.#nanos === null) {
      fail('unlimited', 'An unlimited duration has no length in nanoseconds', 'a finite duration');
    }
    return this.#nanos;
  }

  /** Infinity when unlimited; whole milliseconds, rounded down. */
  toMillis(): number {
    return this.#nanos === null ? Infinity : Number(this.#nanos / 1_000_000n);
  }

  /** Infinity when unlimited; may be fractional. */
  toSeconds(): number {
    if (this.#nanos === null) return Infinity;
    // Whole and fractional parts apart, so that large values keep their nanoseconds as far as a double can.
    return Number(this.#nanos / 1_000_000_000n) + Number(this.#nanos % 1_000_000_000n) / 1e9;
  }

  /** Negative, zero or positive; UNLIMITED is above every finite duration. */
  compareTo(other: Duration): number {
    const a = this.#nanos;
    const b = other.#nanos;
    if (a === null || b === null) return Number(a === null) - Number(b === null);
    return a < b ? -1 : a > b ? 1 : 0;
  }

  equals(other: Duration): boolean {
    return other instanceof Duration && this.compareTo(other) === 0;
  }

  /** Canonical English that parses back to an equal Duration, e.g. '1 day 2 hours 3 milliseconds'. */
  toString(): string {
    if (this.#nanos === null) return 'unlimited';
    if (this.#nanos === 0n) return 'zero';
    const parts: string[] = [];
    let rest = this.#nanos;
    for (const unit of UNITS) {
      const count = rest / unit.nanos;
      rest %= unit.nanos;
      if (count > 0n) parts.push(`${count} ${count === 1n ? unit.singular : unit.plural}`);
    }
    return parts.join(' ');
  }

  toJSON(): string {
    return this.toString();
  }
}

function fromNumber(value: number, nanosPerUnit: bigint): Duration {
  if (value === Infinity) return Duration.UNLIMITED;
  if (typeof value !== 'number' || !(value >= 0)) {
    fail(String(value), `Invalid duration: ${String(value)} is not a non-negative number`, 'a number >= 0');
  }
  // Whole numbers convert exactly; fractions have to go through a double anyway.
  const nanos = Number.isInteger(value)
    ? BigInt(value) * nanosPerUnit
    : BigInt(Math.round(value * Number(nanosPerUnit)));
  return Duration.ofNanos(nanos);
}

/** Same as Duration.parse. */
export function parseDuration(text: string): Duration {
  return Duration.parse(text);
}

// Objects of these classes cross package boundaries (plugins make and read them): one identity for
// every copy of the core (brand.ts).
brandClass(Duration, 'Duration');
