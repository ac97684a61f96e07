/**
 * Translation of `java.util.regex` patterns into JavaScript regular expressions (their meaning; how
 * they run, in time linear in their input, is regex.ts's business).
 *
 * Configurations written for the Java gateway carry Java patterns. This module parses such a
 * pattern the way `Pattern.compile` does and emits a JavaScript source (no `u` flag) with the same
 * meaning. Constructs whose meaning differs between the two engines are rewritten explicitly: `.`,
 * `^`, `$`, `\Z` and Java's line terminators, `\s`, `\v`, `\h`, `\R`, the ASCII POSIX classes, nested
 * classes, `\Q...\E` quoting, comments mode (which Java applies inside classes and escapes too),
 * octal and control escapes, back references to missing groups, inline flags anywhere in the
 * pattern, and case-insensitivity limited to ASCII unless UNICODE_CASE (`(?u)`) is on. Java
 * constructs JavaScript cannot express (possessive quantifiers, atomic groups, class intersection,
 * `\G`, `\X`, Unicode properties, CANON_EQ and UNICODE_CHARACTER_CLASS) are reported as
 * `PORTICO_E_EXPRESSION` errors, as are patterns Java rejects (bar a few oddities of its parser).
 *
 * Known differences, all around rare input: JavaScript matches UTF-16 code units, while Java's `.`
 * and negated classes take a surrogate pair as one character (`.` fully matches an emoji in Java),
 * and supplementary characters inside classes are rejected; a back reference to a group that has
 * not matched (yet) matches the empty string instead of failing; `\b` is ASCII-only as in Java 19+;
 * case-insensitive back references fold beyond ASCII.
 */
import { ErrorCode, PorticoError } from '../../errors.ts';
import {
  asciiCaseClosure,
  type CharSet,
  classBody,
  complement,
  DIGIT,
  HORIZONTAL_SPACE,
  isAsciiAlnum,
  literalUnit,
  MAX_CODE_UNIT,
  normalize,
  POSIX,
  type Range,
  SPACE,
  VERTICAL_SPACE,
  WORD,
} from './regex-char-sets.ts';

/**
 * A translated atom; `wrap` marks text that must be grouped before a quantifier can follow it, and
 * `quantified` replaces the text when a quantifier does follow.
 */
interface Atom {
  readonly text: string;
  readonly wrap: boolean;
  readonly quantified?: string;
}

/** The alternation being parsed: JS case-insensitivity at its start and modifier groups left open. */
interface Level {
  base: number;
  wrappers: number;
}

const FLAG_I = 1;
const FLAG_D = 2;
const FLAG_M = 4;
const FLAG_S = 8;
const FLAG_U = 16;
const FLAG_X = 32;

const INLINE_FLAGS: Readonly<Record<string, number>> = {
  i: FLAG_I,
  d: FLAG_D,
  m: FLAG_M,
  s: FLAG_S,
  u: FLAG_U,
  x: FLAG_X,
};

const BACKREF_MARK = '\uE000';

const LINE_BREAK = '(?:\\r\\n|[\\n\\x0B\\f\\r\\x85\\u2028\\u2029])';
/** Java repeats \R without going back into an iteration: \r alone only when no \n follows. */
const LINE_BREAK_REPEATED = '(?:\\r\\n|(?!\\r\\n)[\\n\\x0B\\f\\r\\x85\\u2028\\u2029])';

function isAsciiLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

function isJavaWhitespace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}

class Translator {
  readonly src: string;
  pos = 0;
  flags = 0;
  inQuote = false;
  groupCount = 0;
  readonly names = new Set<string>();
  leading = true;
  lookbehinds = 0;
  jsFlags = '';
  jsMultiline = false;
  /**
   * Translate a non-multiline `$` as the end of the input: exact for every input that does not end
   * with a line terminator, and free of the look-ahead that keeps V8's linear engine away.
   */
  readonly endOfInputDollar: boolean;

  constructor(src: string, options: { endOfInputDollar?: boolean } = {}) {
    this.src = src;
    this.endOfInputDollar = options.endOfInputDollar === true;
  }

  fail(message: string, expected: string, at: number = this.pos): PorticoError {
    return new PorticoError(ErrorCode.EXPRESSION, `Java regular expression: ${message}`, {
      text: this.src,
      expected,
      column: Math.min(at, this.src.length) + 1,
    });
  }

  unsupported(construct: string, at: number): PorticoError {
    return this.fail(
      `${construct} is not supported`,
      `a Java regular expression without ${construct} (no JavaScript equivalent)`,
      at,
    );
  }

  translate(): { source: string; flags: string } {
    const body = this.parseAlternation(0);
    this.endLeading();
    const groups = this.groupCount;
    const source = body.replace(/\uE000(\d)/g, (_, d: string) =>
      Number(d) <= groups ? `(?:\\${d})` : '(?!)',
    );
    return { source, flags: this.jsFlags };
  }

  has(flag: number): boolean {
    return (this.flags & flag) !== 0;
  }

  atEnd(): boolean {
    return this.pos >= this.src.length;
  }

  /** In comments mode, skips whitespace and `#` comments, as Java does before most reads. */
  skipComments(): void {
    if (!this.has(FLAG_X) || this.inQuote) return;
    const src = this.src;
    while (this.pos < src.length && !this.inQuote) {
      const c = src.charCodeAt(this.pos);
      if (isJavaWhitespace(c)) {
        this.pos++;
      } else if (c === 0x23) {
        this.skipComment();
      } else {
        return;
      }
    }
  }

  /**
   * Skips a `#` comment up to a line separator, which stays (only \n and \r are then skipped as
   * blanks). Java removes `\Q...\E` quoting before it looks for comments, so a quote can begin
   * inside a comment and outlive it.
   */
  skipComment(): void {
    const src = this.src;
    this.pos++;
    while (this.pos < src.length) {
      const c = src.charCodeAt(this.pos);
      if (this.endsComment(c)) {
        // Inside a quote the separator was escaped; the comment ate the backslash, the blank is skipped.
        if (this.inQuote && (c === 0x0a || c === 0x0d)) this.pos++;
        return;
      }
      if (this.inQuote) {
        if (src.startsWith('\\E', this.pos)) this.inQuote = false;
        this.pos += this.inQuote ? 1 : 2;
      } else if (c === 0x5c && (src[this.pos + 1] === 'Q' || src[this.pos + 1] === '\\')) {
        this.inQuote = src[this.pos + 1] === 'Q';
        this.pos += 2;
      } else {
        this.pos++;
      }
    }
  }

  endsComment(c: number): boolean {
    if (this.has(FLAG_D)) return c === 0x0a;
    return c === 0x0a || c === 0x0d || c === 0x85 || c === 0x2028 || c === 0x2029;
  }

  /** The next character after skipping what comments mode ignores; the cursor stays on it. */
  look(): string | undefined {
    this.skipComments();
    return this.src[this.pos];
  }

  /** Skips `\Q`/`\E` boundaries and, in comments mode, whitespace and `#` comments. */
  settle(): void {
    const src = this.src;
    for (;;) {
      if (this.inQuote) {
        if (src.startsWith('\\E', this.pos)) {
          this.pos += 2;
          this.inQuote = false;
          continue;
        }
        return;
      }
      this.skipComments();
      if (src.startsWith('\\Q', this.pos)) {
        this.pos += 2;
        this.inQuote = true;
        continue;
      }
      return;
    }
  }

  /** The syntax character at the cursor, or undefined when at the end or inside `\Q...\E`. */
  syntax(): string | undefined {
    return this.inQuote ? undefined : this.src[this.pos];
  }

  endLeading(): void {
    if (!this.leading) return;
    this.leading = false;
    this.jsFlags =
      (this.has(FLAG_I) ? 'i' : '') + (this.has(FLAG_M) ? 'm' : '') + (this.has(FLAG_S) ? 's' : '');
    this.jsMultiline = this.has(FLAG_M);
  }

  /** Java's CASE_INSENSITIVE without UNICODE_CASE folds ASCII letters only. */
  asciiCaseInsensitive(): boolean {
    return this.has(FLAG_I) && !this.has(FLAG_U);
  }

  parseAlternation(depth: number): string {
    const level: Level = { base: this.flags & FLAG_I, wrappers: 0 };
    let out = '';
    for (;;) {
      this.settle();
      if (this.atEnd()) {
        if (depth > 0) throw this.fail('unclosed group', 'a closing parenthesis');
        break;
      }
      const c = this.syntax();
      if (c === ')') {
        if (depth === 0) throw this.fail("unmatched closing ')'", 'balanced parentheses');
        break;
      }
      if (c === '|') {
        this.pos++;
        this.endLeading();
        out += ')'.repeat(level.wrappers) + '|';
        level.wrappers = 0;
        const current = this.flags & FLAG_I;
        if (current !== level.base) {
          out += current !== 0 ? '(?i:' : '(?-i:';
          level.wrappers = 1;
        }
        continue;
      }
      out += this.parseTerm(level);
    }
    return out + ')'.repeat(level.wrappers);
  }

  parseTerm(level: Level): string {
    const atom = this.parseAtom(level);
    // Inline flags: a modifier group opening (or nothing), which no quantifier may follow.
    if (typeof atom === 'string') return atom;
    return this.parseQuantifier(atom);
  }

  parseQuantifier(atom: Atom): string {
    this.settle();
    const c = this.syntax();
    let quantifier: string;
    if (c === '*' || c === '+' || c === '?') {
      quantifier = c;
      this.pos++;
    } else if (c === '{') {
      quantifier = this.parseBraces();
    } else {
      return atom.text;
    }
    this.settle();
    const mode = this.syntax();
    if (mode === '?') {
      quantifier += '?';
      this.pos++;
    } else if (mode === '+') {
      throw this.unsupported('possessive quantifier', this.pos);
    }
    const text = atom.quantified ?? atom.text;
    return (atom.wrap ? `(?:${text})` : text) + quantifier;
  }

  parseBraces(): string {
    const start = this.pos;
    // Java wants a digit right after the brace; further reads skip what comments mode ignores.
    if (!isDigit(this.src.charCodeAt(start + 1))) {
      throw this.fail('illegal repetition', 'a quantifier {n}, {n,} or {n,m}', start);
    }
    this.pos++;
    const readNumber = (): string => {
      let digits = '';
      for (let c = this.look(); c !== undefined && c >= '0' && c <= '9'; c = this.look()) {
        digits += c;
        this.pos++;
      }
      if (Number(digits) > 0x7fffffff) {
        throw this.fail('illegal repetition', 'a repetition count below 2^31', start);
      }
      return digits;
    };
    const min = readNumber();
    let text = min;
    if (this.look() === ',') {
      this.pos++;
      const max = readNumber();
      if (max !== '' && Number(max) < Number(min)) {
        throw this.fail('illegal repetition range', 'a minimum not above the maximum', start);
      }
      text += ',' + max;
    }
    if (this.look() !== '}') throw this.fail('unclosed counted closure', 'a closing brace', start);
    this.pos++;
    return `{${text}}`;
  }

  parseAtom(level: Level): Atom | string {
    const start = this.pos;
    if (this.inQuote) {
      this.endLeading();
      return this.literal(this.readLiteralCodePoint());
    }
    const c = this.src[this.pos];
    if (c === '(') return this.parseGroup(level);
    this.endLeading();
    switch (c) {
      case '[': {
        const set = this.parseClass();
        return { text: this.emitSet(set.ranges, set.negated), wrap: false };
      }
      case '.':
        this.pos++;
        return { text: this.dot(), wrap: false };
      case '^':
        this.pos++;
        return { text: this.caret(), wrap: true };
      case '$':
        this.pos++;
        return { text: this.dollar(this.has(FLAG_M)), wrap: true };
      case '\\': {
        const escaped = this.parseEscape(false, false);
        if (typeof escaped === 'number') return this.literal(escaped);
        if ('ranges' in escaped) {
          return { text: escaped.js ?? this.emitSet(escaped.ranges, escaped.negated), wrap: false };
        }
        return escaped;
      }
      case '*':
      case '+':
      case '?':
        throw this.fail(`dangling meta character '${c}'`, 'something to repeat before the quantifier', start);
      case '{':
        // Java accepts a counted quantifier with nothing before it: it repeats the empty string.
        if (!isDigit(this.src.charCodeAt(start + 1))) {
          throw this.fail('illegal repetition', `an escaped '{' or a quantifier after an atom`, start);
        }
        return { text: '(?:)', wrap: false };
      default:
        return this.literal(this.readLiteralCodePoint());
    }
  }

  /** Reads one literal character, joining a surrogate pair into one code point as Java does. */
  readLiteralCodePoint(): number {
    const c = this.src.charCodeAt(this.pos);
    this.pos++;
    const low = this.src.charCodeAt(this.pos);
    if (isHighSurrogate(c) && isLowSurrogate(low)) {
      this.pos++;
      return (c - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
    }
    return c;
  }

  literal(codePoint: number): Atom {
    if (codePoint > MAX_CODE_UNIT) {
      const s = String.fromCodePoint(codePoint);
      return { text: literalUnit(s.charCodeAt(0)) + literalUnit(s.charCodeAt(1)), wrap: true };
    }
    const text = literalUnit(codePoint);
    if (codePoint >= 0x80 && this.asciiCaseInsensitive()) return { text: `(?-i:${text})`, wrap: false };
    return { text, wrap: false };
  }

  /** A character class for a set; under ASCII-only case-insensitivity JavaScript must not fold it. */
  emitSet(ranges: readonly Range[], negated: boolean): string {
    if (this.asciiCaseInsensitive() && ranges.some(([, hi]) => hi >= 0x80)) {
      return `(?-i:${negated ? '[^' : '['}${classBody(asciiCaseClosure(ranges))}])`;
    }
    return (negated ? '[^' : '[') + classBody(ranges) + ']';
  }

  startAnchor(): string {
    return this.jsMultiline ? '(?<![\\s\\S])' : '^';
  }

  endAnchor(): string {
    return this.jsMultiline ? '(?![\\s\\S])' : '$';
  }

  dot(): string {
    if (this.has(FLAG_S)) return '[\\s\\S]';
    if (this.has(FLAG_D)) return '[^\\n]';
    return '[^\\n\\r\\x85\\u2028\\u2029]';
  }

  caret(): string {
    if (!this.has(FLAG_M)) return this.startAnchor();
    // Java's multiline ^ never matches at the end of input, nor between \r and \n.
    const afterTerminator = this.has(FLAG_D) ? '(?<=\\n)' : '(?<=[\\n\\x85\\u2028\\u2029]|\\r(?!\\n))';
    return `(?=[\\s\\S])(?:${this.startAnchor()}|${afterTerminator})`;
  }

  dollar(multiline: boolean): string {
    const end = this.endAnchor();
    if (this.endOfInputDollar && !multiline) return end;
    if (this.has(FLAG_D)) return multiline ? `(?=\\n|${end})` : `(?=\\n?${end})`;
    if (multiline) return `(?:${end}|(?=[\\r\\x85\\u2028\\u2029])|(?<!\\r)(?=\\n))`;
    return `(?=(?:\\r\\n|(?<!\\r)\\n|[\\r\\x85\\u2028\\u2029])?${end})`;
  }

  /** The code units a set stands for inside an enclosing class (negation made explicit). */
  materialize(set: CharSet): readonly Range[] {
    if (!set.negated) return set.ranges;
    return complement(this.has(FLAG_I) ? asciiCaseClosure(set.ranges) : set.ranges);
  }

  parseGroup(level: Level): Atom | string {
    const src = this.src;
    const start = this.pos;
    this.pos++;
    let prefix = '(';
    let assertion = false;
    let lookbehind = false;
    let lookahead = false;
    const saved = this.flags;
    let scoped = saved;
    this.settle();
    if (!this.inQuote && src[this.pos] === '?') {
      this.pos++;
      const kind = src[this.pos];
      if (kind === ':') {
        this.pos++;
        prefix = '(?:';
      } else if (kind === '=' || kind === '!') {
        this.pos++;
        prefix = `(?${kind}`;
        assertion = true;
        lookahead = true;
      } else if (kind === '<') {
        this.pos++;
        const next = this.look();
        if (next === '=' || next === '!') {
          this.pos++;
          prefix = `(?<${next}`;
          assertion = true;
          lookbehind = true;
        } else {
          const name = this.parseGroupName();
          if (this.names.has(name)) {
            throw this.fail(
              `named capturing group <${name}> is already defined`,
              'unique group names',
              start,
            );
          }
          this.names.add(name);
          this.groupCount++;
          prefix = `(?<${name}>`;
        }
      } else if (kind === '>') {
        throw this.unsupported('atomic group (?>...)', start);
      } else {
        scoped = this.parseInlineFlags(start);
        const end = this.look();
        if (end === ')') {
          this.pos++;
          return this.applyInlineFlags(scoped, saved, level);
        }
        if (end !== ':') {
          throw this.fail(
            'unknown inline modifier',
            'one of (?:, (?=, (?!, (?<=, (?<!, (?<name>, (?flags) or (?flags:',
            start,
          );
        }
        this.pos++;
        this.flags = saved;
        prefix = this.modifierPrefix(saved & FLAG_I, scoped & FLAG_I);
      }
    } else {
      this.groupCount++;
    }
    this.endLeading();
    this.flags = scoped;
    // Java measures look-behinds for back references, but not through a look-ahead inside one.
    const lookbehinds = this.lookbehinds;
    if (lookbehind) this.lookbehinds++;
    if (lookahead) this.lookbehinds = 0;
    const body = this.parseAlternation(1);
    this.lookbehinds = lookbehinds;
    this.pos++;
    this.flags = saved;
    return { text: prefix + body + ')', wrap: assertion };
  }

  modifierPrefix(before: number, after: number): string {
    if (before === after) return '(?:';
    return after !== 0 ? '(?i:' : '(?-i:';
  }

  parseGroupName(): string {
    const start = this.pos;
    let name = '';
    for (let c = this.look(); c !== undefined && isAsciiAlnum(c.charCodeAt(0)); c = this.look()) {
      name += c;
      this.pos++;
    }
    if (name === '' || !isAsciiLetter(name.charCodeAt(0)) || this.look() !== '>') {
      throw this.fail(
        'invalid group name',
        'a group name of ASCII letters and digits starting with a letter, closed by >',
        start,
      );
    }
    this.pos++;
    return name;
  }

  parseInlineFlags(start: number): number {
    let flags = this.flags;
    let negate = false;
    for (let c = this.look(); c !== undefined; c = this.look()) {
      const bit = INLINE_FLAGS[c];
      if (c === '-' && !negate) {
        negate = true;
      } else if (bit !== undefined) {
        flags = negate ? flags & ~bit : flags | bit;
      } else if (c === 'U') {
        throw this.unsupported('the UNICODE_CHARACTER_CLASS flag (?U)', start);
      } else if (c === 'c') {
        throw this.unsupported('the CANON_EQ flag', start);
      } else {
        break;
      }
      this.pos++;
      // The flags just read govern how the rest of the group is read (comments mode).
      this.flags = flags;
    }
    return flags;
  }

  applyInlineFlags(flags: number, before: number, level: Level): string {
    this.flags = flags;
    const after = flags & FLAG_I;
    if (this.leading) {
      level.base = after;
      return '';
    }
    if ((before & FLAG_I) === after) return '';
    level.wrappers++;
    return this.modifierPrefix(before & FLAG_I, after);
  }

  parseClass(): CharSet {
    const src = this.src;
    const start = this.pos;
    this.pos++;
    let negated = false;
    if (src[this.pos] === '^') {
      negated = true;
      this.pos++;
    }
    const ranges: Range[] = [];
    let empty = true;
    for (;;) {
      this.settle();
      if (this.atEnd()) throw this.fail('unclosed character class', 'a closing bracket', start);
      const c = this.syntax();
      if (c === '[') {
        ranges.push(...this.materialize(this.parseClass()));
        empty = false;
        continue;
      }
      if (c === '&') {
        const at = this.pos;
        this.pos++;
        const next = this.look();
        this.pos = at;
        if (next === '&') throw this.unsupported('character class intersection (&&)', at);
      }
      if (c === ']' && !empty) {
        this.pos++;
        break;
      }
      empty = false;
      const first = this.parseClassAtom(false);
      if (typeof first !== 'number') {
        ranges.push(...this.materialize(first));
        continue;
      }
      this.settle();
      if (this.syntax() === '-') {
        const after = src[this.pos + 1];
        if (after !== undefined && after !== ']' && after !== '[') {
          const dash = this.pos;
          this.pos++;
          this.settle();
          if (this.atEnd()) throw this.fail('unclosed character class', 'a closing bracket', start);
          const last = this.parseClassAtom(true);
          if (typeof last !== 'number' || last < first) {
            throw this.fail('illegal character range', 'a range whose end is not below its start', dash);
          }
          ranges.push([first, last]);
          continue;
        }
      }
      ranges.push([first, first]);
    }
    return { ranges: normalize(ranges), negated };
  }

  parseClassAtom(rangeEnd: boolean): number | CharSet {
    const at = this.pos;
    let value: number | CharSet;
    if (!this.inQuote && this.src[this.pos] === '\\') {
      const escaped = this.parseEscape(true, rangeEnd);
      if (typeof escaped !== 'number' && !('ranges' in escaped)) {
        throw this.fail('escape not allowed in a character class', 'a character or class escape', at);
      }
      value = escaped;
    } else {
      value = this.readLiteralCodePoint();
    }
    if (typeof value === 'number') {
      if (value > MAX_CODE_UNIT) {
        throw this.unsupported('a supplementary code point in a character class', at);
      }
      if (isHighSurrogate(value) && this.followedByLowSurrogateEscape()) {
        throw this.unsupported('a supplementary code point in a character class', at);
      }
    }
    return value;
  }

  followedByLowSurrogateEscape(): boolean {
    if (this.inQuote || !this.src.startsWith('\\u', this.pos)) return false;
    const save = this.pos;
    this.pos += 2;
    const value = this.readHex(4);
    this.pos = save;
    return value >= 0 && isLowSurrogate(value);
  }

  /** Reads `count` hex digits (skipping what comments mode ignores); -1 if they are not there. */
  readHex(count: number): number {
    let value = 0;
    for (let k = 0; k < count; k++) {
      const digit = hexValue(this.look()?.charCodeAt(0) ?? -1);
      if (digit < 0) return -1;
      value = value * 16 + digit;
      this.pos++;
    }
    return value;
  }

  /**
   * Parses an escape at the cursor (a backslash). Returns a code point, a character set, or (outside
   * classes) a translated atom.
   */
  parseEscape(inClass: boolean, rangeEnd: boolean): number | CharSet | Atom {
    const src = this.src;
    const start = this.pos;
    this.pos++;
    if (this.atEnd()) throw this.fail('trailing backslash', 'a character after the backslash', start);
    const c = src[this.pos]!;
    const code = src.charCodeAt(this.pos);
    this.pos++;
    const notInClass = (what: string): void => {
      if (inClass) throw this.fail(`${what} is not allowed in a character class`, 'a class escape', start);
    };
    switch (c) {
      case '0':
        return this.parseOctal(start);
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9':
        notInClass('a back reference');
        this.noBackReferenceInLookbehind(start);
        return this.parseBackReference(code - 0x30);
      case 'a':
        return 0x07;
      case 'e':
        return 0x1b;
      case 'f':
        return 0x0c;
      case 'n':
        return 0x0a;
      case 'r':
        return 0x0d;
      case 't':
        return 0x09;
      case 'c':
        if (this.look() === undefined)
          throw this.fail('illegal control escape', 'a character after \\c', start);
        return this.readLiteralCodePoint() ^ 64;
      case 'x':
        return this.parseHexEscape(start);
      case 'u':
        return this.parseUnicodeEscape(start);
      case 'd':
        return { ranges: DIGIT, negated: false, js: '\\d' };
      case 'D':
        return { ranges: DIGIT, negated: true, js: '\\D' };
      case 'w':
        return { ranges: WORD, negated: false, js: '\\w' };
      case 'W':
        return { ranges: WORD, negated: true, js: '\\W' };
      case 's':
        return { ranges: SPACE, negated: false };
      case 'S':
        return { ranges: SPACE, negated: true };
      case 'h':
        return { ranges: HORIZONTAL_SPACE, negated: false };
      case 'H':
        return { ranges: HORIZONTAL_SPACE, negated: true };
      case 'v':
        // Java reads \v as VT (0x0B) where a single character is needed: a range bound.
        if (inClass && (rangeEnd || src[this.pos] === '-')) return 0x0b;
        return { ranges: VERTICAL_SPACE, negated: false };
      case 'V':
        return { ranges: VERTICAL_SPACE, negated: true };
      case 'p':
      case 'P':
        return this.parseProperty(c === 'P', start);
      case 'b':
        notInClass('\\b');
        if (this.look() === '{' && src[this.pos + 1] === 'g') {
          throw this.unsupported('\\b{g} grapheme cluster boundary', start);
        }
        return { text: '\\b', wrap: true };
      case 'B':
        notInClass('\\B');
        return { text: '\\B', wrap: true };
      case 'A':
        notInClass('\\A');
        return { text: this.startAnchor(), wrap: true };
      case 'z':
        notInClass('\\z');
        return { text: this.endAnchor(), wrap: true };
      case 'Z':
        notInClass('\\Z');
        return { text: this.dollar(false), wrap: true };
      case 'R':
        notInClass('\\R');
        return { text: LINE_BREAK, wrap: false, quantified: LINE_BREAK_REPEATED };
      case 'k':
        notInClass('a named back reference');
        this.noBackReferenceInLookbehind(start);
        return this.parseNamedBackReference(start);
      case 'G':
        throw this.unsupported('\\G (end of previous match)', start);
      case 'X':
        throw this.unsupported('\\X (grapheme cluster)', start);
      case 'N':
        throw this.unsupported('\\N{name} (named character)', start);
      default:
        if (isAsciiLetter(code)) {
          throw this.fail(
            `illegal/unsupported escape sequence \\${c}`,
            'a Java regular expression escape',
            start,
          );
        }
        this.pos--;
        return this.readLiteralCodePoint();
    }
  }

  parseOctal(start: number): number {
    const octal = (): number => {
      const c = this.look()?.charCodeAt(0) ?? -1;
      return c >= 0x30 && c <= 0x37 ? c - 0x30 : -1;
    };
    const first = octal();
    if (first < 0)
      throw this.fail('illegal octal escape sequence', 'one to three octal digits after \\0', start);
    this.pos++;
    const second = octal();
    if (second < 0) return first;
    this.pos++;
    const third = octal();
    if (third < 0 || first > 3) return first * 8 + second;
    this.pos++;
    return first * 64 + second * 8 + third;
  }

  parseHexEscape(start: number): number {
    if (this.look() === '{') {
      this.pos++;
      let value = 0;
      let digits = 0;
      for (let digit = hexValue(this.look()?.charCodeAt(0) ?? -1); digit >= 0; ) {
        value = value * 16 + digit;
        digits++;
        this.pos++;
        if (value > 0x10ffff) break;
        digit = hexValue(this.look()?.charCodeAt(0) ?? -1);
      }
      if (digits === 0 || value > 0x10ffff || this.look() !== '}') {
        throw this.fail('illegal hexadecimal escape sequence', 'a code point \\x{h...h} up to 10FFFF', start);
      }
      this.pos++;
      return value;
    }
    const value = this.readHex(2);
    if (value < 0) throw this.fail('illegal hexadecimal escape sequence', 'two hex digits after \\x', start);
    return value;
  }

  parseUnicodeEscape(start: number): number {
    const value = this.readHex(4);
    if (value < 0) throw this.fail('illegal Unicode escape sequence', 'four hex digits after \\u', start);
    if (isHighSurrogate(value)) {
      const save = this.pos;
      if (this.look() === '\\') {
        this.pos++;
        if (this.look() === 'u') {
          this.pos++;
          const low = this.readHex(4);
          if (low >= 0 && isLowSurrogate(low)) return (value - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
        }
      }
      this.pos = save;
    }
    return value;
  }

  parseProperty(negated: boolean, start: number): CharSet {
    const src = this.src;
    let name: string;
    const open = this.look();
    if (open === undefined) throw this.fail('illegal character family', 'a property name', start);
    if (open === '{') {
      const close = src.indexOf('}', this.pos);
      if (close < 0) throw this.fail('unclosed character family', 'a closing brace', start);
      name = src.slice(this.pos + 1, close);
      if (this.has(FLAG_X)) name = name.replace(/^[\t-\r ]+/, '');
      this.pos = close + 1;
    } else {
      name = open;
      this.pos++;
    }
    const ranges = Object.hasOwn(POSIX, name) ? POSIX[name] : undefined;
    if (ranges === undefined) throw this.unsupported(`the Unicode property \\p{${name}}`, start);
    return { ranges, negated };
  }

  noBackReferenceInLookbehind(start: number): void {
    if (this.lookbehinds > 0) {
      throw this.fail(
        'look-behind group does not have an obvious maximum length',
        'no back reference inside a look-behind',
        start,
      );
    }
  }

  parseBackReference(first: number): Atom {
    let ref = first;
    for (let c = this.look(); c !== undefined && c >= '0' && c <= '9'; c = this.look()) {
      const next = ref * 10 + Number(c);
      if (next > this.groupCount) break;
      ref = next;
      this.pos++;
    }
    // A group not opened yet is resolved once the whole pattern is read: Java never matches a
    // reference to a group that does not exist.
    if (ref > this.groupCount) return { text: BACKREF_MARK + String(ref), wrap: false };
    return { text: `(?:\\${ref})`, wrap: false };
  }

  parseNamedBackReference(start: number): Atom {
    if (this.look() !== '<') {
      throw this.fail('\\k is not followed by <name>', 'a named back reference \\k<name>', start);
    }
    this.pos++;
    const name = this.parseGroupName();
    if (!this.names.has(name)) {
      throw this.fail(`named capturing group <${name}> does not exist`, 'a group defined before', start);
    }
    return { text: `(?:\\k<${name}>)`, wrap: false };
  }
}

/**
 * The JavaScript translation of a Java pattern, with Java's meaning but no bound on its running
 * time: what the translation tests compare with Java. Everything that runs on input uses
 * `compileJavaRegex`.
 */
export function translateJavaRegex(pattern: string): RegExp {
  const { source, flags } = javaRegexSource(pattern);
  try {
    return new RegExp(source, flags);
  } catch (cause) {
    // V8 quotes the whole translation (`/.../u: Too many captures`): only its reason is kept, since
    // a pattern made at run time may come from the environment, and `text` names the pattern anyway.
    const message =
      cause instanceof Error ? cause.message.replace(`/${source}/${flags}: `, '') : String(cause);
    throw new PorticoError(ErrorCode.EXPRESSION, `Java regular expression: ${message}`, {
      text: pattern,
      expected: 'a valid regular expression',
      cause,
    });
  }
}

/**
 * The JavaScript source and flags of a Java pattern. With `endOfInputDollar`, a non-multiline `$`
 * is read as the end of the input: Java's meaning for every input that does not end with a line
 * terminator, in a form V8's linear engine can run (see Re2RegExp.nativeFor).
 */
export function javaRegexSource(
  pattern: string,
  options: { endOfInputDollar?: boolean } = {},
): { source: string; flags: string } {
  return new Translator(pattern, options).translate();
}
