import v8 from 'node:v8';
import { RE2JS } from 're2js';
import { ErrorCode, PorticoError } from '../../errors.ts';

/**
 * Every regular expression a route file or a request supplies runs in time linear in its input, so
 * that no pattern (`^(a+)+$`) and no input can hold a worker for seconds. The rule:
 *
 * 1. A pattern whose JavaScript translation V8's linear-time engine can run is compiled as usual, and
 *    V8 switches it to that engine once it backtracks too much (the flag set below): plain irregexp
 *    speed for ordinary input, linear time for hostile input.
 * 2. Any other pattern (its translation needs a look-ahead, case-insensitivity, a back reference ...)
 *    runs on RE2 (`re2js`, a pure JavaScript port of RE2/J), which is linear by construction, through
 *    a RegExp whose `exec` calls RE2: every caller keeps using it as a RegExp.
 * 3. A pattern RE2 cannot run either (a look-ahead, a back reference, an atomic group or possessive
 *    quantifier that the translation would need) is refused with `PORTICO_E_EXPRESSION`.
 *
 * RE2 reads the Java pattern itself (RE2/J's syntax is Java's for everything both engines support);
 * where its meaning differs, it is in rare input: `$` matches only at the very end (Java also before
 * a final line break), `.` excludes only `\n`, and case-insensitivity folds beyond ASCII.
 */
/** How many backtracks of one attempt V8 allows before it runs the pattern on its linear engine. */
const BACKTRACKS_BEFORE_FALLBACK = 100;
v8.setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
// V8 counts the backtracks of one attempt, at one position of the input: with its default of 50,000
// a pattern that backtracks a little at every position never switched, and was quadratic
// (`([a-z]+)=([^&]*)` against 64 KB of letters: 5.8 s; 30 ms with 100). Ordinary patterns on ordinary
// input stay under 100 and keep irregexp's speed (docs/departures.md, "Regular expressions").
v8.setFlagsFromString(`--regexp-backtracks-before-fallback=${BACKTRACKS_BEFORE_FALLBACK}`);
// Makes the `l` flag available: compiling with it is how we ask V8 whether its linear engine can run
// a pattern (it refuses at compile time when it cannot).
v8.setFlagsFromString('--enable-experimental-regexp-engine');

/** True when V8's linear-time engine can run `source` with `flags`. */
export function runsOnLinearEngine(source: string, flags: string): boolean {
  try {
    new RegExp(source, `${flags.replace(/[gyl]/g, '')}l`);
    return true;
  } catch {
    return false;
  }
}

const RE2_PATTERN = Symbol.for('portico.re2-pattern');

/**
 * A Java pattern that runs on RE2. It is a RegExp (its source is the JavaScript translation, never
 * run), so code that takes a RegExp accepts it; `exec`, which `test`, `String.prototype.match`,
 * `replace` and `split` all go through, asks RE2. Flags `g` and `y` follow `lastIndex` as usual.
 */
export class Re2RegExp extends RegExp {
  readonly [RE2_PATTERN]: RE2JS;
  /**
   * The same pattern with `$` read as the end of the input, when only Java's `$` kept it off V8's
   * linear engine: exactly Java's meaning for input that does not end with a line terminator.
   */
  readonly #endOfInputDollar: RegExp | undefined;

  /** Also the species constructor (`split` makes a sticky copy): `new Re2RegExp(existing, flags)`. */
  constructor(source: string | Re2RegExp, flags?: string, re2?: RE2JS, endOfInputDollar?: RegExp) {
    super(source, flags);
    const pattern = source instanceof Re2RegExp ? source[RE2_PATTERN] : re2;
    if (pattern === undefined) throw new TypeError('a Re2RegExp needs its RE2 pattern');
    this[RE2_PATTERN] = pattern;
    this.#endOfInputDollar = source instanceof Re2RegExp ? source.#endOfInputDollar : endOfInputDollar;
  }

  /** The native RegExp that means the same as this pattern for `text`, when there is one. */
  nativeFor(text: string): RegExp | undefined {
    if (this.#endOfInputDollar === undefined || text.length === 0) return this.#endOfInputDollar;
    return LINE_TERMINATOR.test(text[text.length - 1]!) ? undefined : this.#endOfInputDollar;
  }

  override exec(input: string): RegExpExecArray | null {
    const text = String(input);
    const stateful = this.global || this.sticky;
    const from = stateful ? this.lastIndex : 0;
    const found = from <= text.length ? this.matchFrom(text, from) : null;
    if (found === null || (this.sticky && found.index !== from)) {
      if (stateful) this.lastIndex = 0;
      return null;
    }
    if (stateful) this.lastIndex = found.index + found[0].length;
    return found;
  }

  /** The first match starting at or after `from`, as `exec` reports it, without touching lastIndex. */
  matchFrom(text: string, from: number): RegExpExecArray | null {
    const native = this.nativeFor(text);
    if (native !== undefined) {
      const scanner = new RegExp(native.source, `${native.flags.replace(/[gy]/g, '')}g`);
      scanner.lastIndex = from;
      return scanner.exec(text);
    }
    const matcher = this[RE2_PATTERN].matcher(text);
    if (!matcher.find(from)) return null;
    const result = [] as unknown as RegExpExecArray;
    const count = matcher.groupCount();
    for (let group = 0; group <= count; group++) result.push(matcher.group(group) ?? (undefined as never));
    result.index = matcher.start();
    result.input = text;
    const names = Object.entries(this[RE2_PATTERN].namedGroups());
    if (names.length > 0) {
      const groups: Record<string, string> = Object.create(null);
      for (const [name, index] of names) groups[name] = result[index] as string;
      result.groups = groups;
    }
    return result;
  }

  /** Java's `Matcher.matches()`: the whole input (RE2's reading; see nativeFor for the usual case). */
  matchesWhole(text: string): boolean {
    return this[RE2_PATTERN].matcher(text).matches();
  }
}

export function isRe2RegExp(re: RegExp): re is Re2RegExp {
  return (re as Partial<Re2RegExp>)[RE2_PATTERN] !== undefined;
}

/**
 * The bounded form of a translated Java pattern: the native RegExp when V8's linear engine can take
 * over from it, else the pattern on RE2, else a coded error saying why it cannot run in linear time.
 */
export function boundedRegex(
  pattern: string,
  native: RegExp,
  withEndOfInputDollar: () => RegExp | undefined,
  linearOnly = false,
): RegExp {
  if (runsOnLinearEngine(native.source, native.flags)) return linearOnly ? onLinearEngine(native) : native;
  let re2: RE2JS;
  try {
    re2 = RE2JS.compile(pattern);
  } catch (cause) {
    const reason =
      cause instanceof Error ? cause.message.replace(/^error parsing regexp: /, '') : String(cause);
    throw new PorticoError(
      ErrorCode.EXPRESSION,
      `Java regular expression: it cannot run in time linear in its input (${reason})`,
      {
        text: pattern,
        expected:
          'a regular expression without look-ahead, back references, atomic groups or possessive quantifiers (every pattern must run in linear time)',
        cause,
      },
    );
  }
  const plain = withEndOfInputDollar();
  const linearPlain =
    plain !== undefined && runsOnLinearEngine(plain.source, plain.flags)
      ? linearOnly
        ? onLinearEngine(plain)
        : plain
      : undefined;
  return new Re2RegExp(native.source, native.flags, re2, linearPlain);
}

/**
 * `re` on V8's linear engine from the first character: for a pattern made at run time, whose cost
 * must follow its size. The backtracking engine's switch does not cover a pattern that backtracks
 * a little at each of many starting points (`a+b` against 64 KB of `a`: seconds, quadratic).
 */
function onLinearEngine(re: RegExp): RegExp {
  const flags = re.flags.replace(/[gyl]/g, '');
  try {
    // Searching from an index (split, replaceAll) needs the global form too, which V8's linear
    // engine refuses for some patterns it otherwise runs (a look-behind): those stay as they were.
    new RegExp(re.source, `${flags}gl`);
    return new RegExp(re.source, `${flags}l`);
  } catch {
    return re;
  }
}

/** A pattern's program size, in RE2 instructions; `estimated` when taken from its text (see below). */
export interface ProgramSize {
  readonly size: number;
  readonly estimated: boolean;
}

/**
 * The size of a pattern's program, in RE2 instructions: what matching costs per input character on
 * a linear engine (RE2's, and about the same for V8's, which also steps every thread of an automaton
 * per character). A counted repetition multiplies it: `(?i)(a|b){1000}x` is 16 characters and 3,003
 * instructions. A pattern RE2 does not read in Java's syntax is measured through its JavaScript
 * translation (look-arounds counted as groups); undefined when neither reads. With a re2js that
 * cannot measure programs, an upper bound estimated from the pattern's text.
 */
export function programSize(pattern: string, re: RegExp): ProgramSize | undefined {
  if (!MEASURES_PROGRAMS) return { size: estimatedProgramSize(pattern), estimated: true };
  if (isRe2RegExp(re)) return { size: re[RE2_PATTERN].programSize(), estimated: false };
  for (const source of [pattern, re2Syntax(re)]) {
    try {
      return { size: RE2JS.compile(source).programSize(), estimated: false };
    } catch {
      // try the next reading
    }
  }
  return undefined;
}

/**
 * Whether this re2js measures a compiled pattern (`programSize()`, in its README; 2.x has it). Asked
 * once, of a sample: a re2js without it gets estimates instead of a TypeError for every pattern made
 * at run time.
 */
const MEASURES_PROGRAMS = measuresPrograms(RE2JS.compile('a'));

function measuresPrograms(sample: RE2JS): boolean {
  try {
    return typeof sample.programSize === 'function' && Number.isInteger(sample.programSize());
  } catch {
    return false;
  }
}

/**
 * An upper bound of a pattern's program size read from its text alone: RE2 compiles no character of
 * a pattern to more than 3 instructions (a capture's parentheses are 2 each, `a` 1), plus 3 for every
 * program (the empty one has 3), and a counted repetition copies what it repeats up to its larger count (plus one for
 * `{n,}`). Multiplying by every count, nested or not, bounds both: `x{3}y{4}` (9 instructions) is
 * estimated at 27 × 4 × 5 = 540, `(?i)(a|b){1000}x` (3,003) at 51 × 1,001.
 */
export function estimatedProgramSize(pattern: string): number {
  let size = 3 + 3 * pattern.length;
  for (const [, low, comma, high] of pattern.matchAll(/\{(\d+)(,?)(\d*)\}/g)) {
    size *= (high === '' ? Number(low) + (comma === '' ? 0 : 1) : Number(high)) + 1;
  }
  return size;
}

/** A JavaScript translation in RE2's syntax, as far as size goes: flags inline, look-arounds as groups. */
function re2Syntax(re: RegExp): string {
  const flags = [...re.flags].filter((f) => f === 'i' || f === 'm' || f === 's').join('');
  const source = re.source
    .replace(/\\\\|\\u([0-9A-Fa-f]{4})/g, (found, hex: string | undefined) =>
      hex === undefined ? found : `\\x{${hex}}`,
    )
    .replace(/\(\?<?[=!]/g, '(?:');
  return flags === '' ? source : `(?${flags})${source}`;
}

/** Java's line terminators: what a non-multiline `$` may stand before at the end of the input. */
const LINE_TERMINATOR = /[\n\r\x85\u2028\u2029]/;
