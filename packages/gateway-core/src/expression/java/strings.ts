/**
 * `java.lang.String` operations whose JavaScript namesakes behave differently: regex splitting,
 * regex replacement with `Matcher` replacement syntax, and literal replacement of all occurrences.
 * Regular expressions are Java patterns (see `regex.ts`).
 */
import { ErrorCode, PorticoError } from '../../errors.ts';
import { findFrom } from './regex-matching.ts';
import { runtimeJavaRegex } from './runtime-regex.ts';

/**
 * The matches Java's `Matcher.find()` reports one after the other: after an empty match the next
 * search starts one code unit further, after a non-empty one it starts where the match ended.
 */
function* javaMatches(re: RegExp, s: string): Generator<RegExpExecArray> {
  let first = -1;
  let last = 0;
  for (;;) {
    const from = last === first ? last + 1 : last;
    if (from > s.length) return;
    const m = findFrom(re, s, from);
    if (m === null) return;
    first = m.index;
    last = m.index + m[0].length;
    yield m;
  }
}

/** A pattern compiled at load, or one made at run time and held to its budget for input `s`. */
export function patternFor(regex: string | RegExp, s: string): RegExp {
  return typeof regex === 'string' ? runtimeJavaRegex(regex, s.length) : regex;
}

/**
 * Java `String.split(regex, limit)`. Capture groups never add elements to the result. `regex` is a
 * compiled Java pattern or, when made at run time, its text.
 */
export function javaSplit(s: string, regex: string | RegExp, limit = 0): string[] {
  const re = patternFor(regex, s);
  const max = Math.trunc(limit);
  const limited = max > 0;
  const parts: string[] = [];
  let index = 0;
  for (const m of javaMatches(re, s)) {
    const start = m.index;
    const end = start + m[0].length;
    if (!limited || parts.length < max - 1) {
      // Since Java 8 a zero-width match at the start never yields a leading empty string.
      if (index === 0 && start === 0 && end === 0) continue;
      parts.push(s.slice(index, start));
      index = end;
    } else {
      parts.push(s.slice(index));
      index = end;
      break;
    }
  }
  if (index === 0) return [s];
  if (!limited || parts.length < max) parts.push(s.slice(index));
  if (max === 0) {
    let size = parts.length;
    while (size > 0 && parts[size - 1] === '') size--;
    parts.length = size;
  }
  return parts;
}

/** A parsed replacement: literal text, a group number, or a group name. */
type ReplacementPart = string | number | { readonly name: string };

function replacementError(replacement: string, message: string): PorticoError {
  return new PorticoError(ErrorCode.EXPRESSION, `Replacement string: ${message}`, {
    text: replacement,
    expected: 'a Java replacement string: $n or ${name} for groups, \\ to quote the next character',
  });
}

/**
 * The longest text a replacement may make (16 Mi characters, 32 MB): one call with a target and a
 * replacement both from the request (`x.replace('a', y)`, `x.replaceAll('', y)`) multiplies their
 * lengths, and two 16 KB header values made 256 Mi characters, V8's limit, in one evaluation.
 */
export const MAX_REPLACED_LENGTH = 16 * 1024 * 1024;

function tooLong(method: string, length: number): PorticoError {
  return new PorticoError(
    ErrorCode.EXPRESSION,
    `${method}: the result would be ${length} characters, more than the ${MAX_REPLACED_LENGTH} allowed`,
    { expected: `a result of at most ${MAX_REPLACED_LENGTH} characters` },
  );
}

function isAsciiDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

function isAsciiAlnum(c: string | undefined): boolean {
  return c !== undefined && /^[A-Za-z0-9]$/.test(c);
}

/** Parses a `Matcher.appendReplacement` replacement against the groups of the pattern matched. */
function parseReplacement(replacement: string, match: RegExpExecArray): ReplacementPart[] {
  const groupCount = match.length - 1;
  const parts: ReplacementPart[] = [];
  let text = '';
  let i = 0;
  while (i < replacement.length) {
    const c = replacement[i]!;
    if (c === '\\') {
      i++;
      if (i === replacement.length) throw replacementError(replacement, 'character to be escaped is missing');
      text += replacement[i];
      i++;
      continue;
    }
    if (c !== '$') {
      text += c;
      i++;
      continue;
    }
    i++;
    if (i === replacement.length) {
      throw replacementError(replacement, 'illegal group reference: group index is missing');
    }
    if (text !== '') parts.push(text);
    text = '';
    if (replacement[i] === '{') {
      i++;
      const from = i;
      while (isAsciiAlnum(replacement[i])) i++;
      const name = replacement.slice(from, i);
      if (name === '') throw replacementError(replacement, 'named capturing group has 0 length name');
      if (replacement[i] !== '}') {
        throw replacementError(replacement, "named capturing group is missing trailing '}'");
      }
      if (isAsciiDigit(name[0])) {
        throw replacementError(replacement, `capturing group name {${name}} starts with digit character`);
      }
      if (match.groups === undefined || !Object.hasOwn(match.groups, name)) {
        throw replacementError(replacement, `no group with name {${name}}`);
      }
      parts.push({ name });
      i++;
      continue;
    }
    if (!isAsciiDigit(replacement[i])) throw replacementError(replacement, 'illegal group reference');
    let group = Number(replacement[i]);
    i++;
    while (isAsciiDigit(replacement[i])) {
      const next = group * 10 + Number(replacement[i]);
      if (next > groupCount) break;
      group = next;
      i++;
    }
    if (group > groupCount) throw replacementError(replacement, `no group ${group}`);
    parts.push(group);
  }
  if (text !== '') parts.push(text);
  return parts;
}

function expand(parts: readonly ReplacementPart[], match: RegExpExecArray): string {
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') out += part;
    else if (typeof part === 'number') out += match[part] ?? '';
    else out += match.groups?.[part.name] ?? '';
  }
  return out;
}

function replace(s: string, regex: string | RegExp, replacement: string, all: boolean): string {
  const re = patternFor(regex, s);
  let parts: ReplacementPart[] | undefined;
  let out = '';
  let tail = 0;
  for (const m of javaMatches(re, s)) {
    // Like Java, the replacement is only read (and only rejected) once something matched.
    parts ??= parseReplacement(replacement, m);
    out += s.slice(tail, m.index) + expand(parts, m);
    if (out.length > MAX_REPLACED_LENGTH) throw tooLong(all ? 'replaceAll' : 'replaceFirst', out.length);
    tail = m.index + m[0].length;
    if (!all) break;
  }
  return parts === undefined ? s : out + s.slice(tail);
}

/** Java `String.replaceAll(regex, replacement)` with `Matcher` replacement syntax. */
export function javaReplaceAll(s: string, regex: string | RegExp, replacement: string): string {
  return replace(s, regex, replacement, true);
}

/** Java `String.replaceFirst(regex, replacement)` with `Matcher` replacement syntax. */
export function javaReplaceFirst(s: string, regex: string | RegExp, replacement: string): string {
  return replace(s, regex, replacement, false);
}

/**
 * Java `String.replace(CharSequence, CharSequence)`: every occurrence of `target`, left to right,
 * literally. An empty target inserts the replacement before every code unit and at the end.
 */
export function javaStringReplace(s: string, target: string, replacement: string): string {
  if (target !== '') {
    const pieces = s.split(target);
    const length = s.length + (pieces.length - 1) * (replacement.length - target.length);
    if (length > MAX_REPLACED_LENGTH) throw tooLong('replace', length);
    return pieces.join(replacement);
  }
  const length = s.length + (s.length + 1) * replacement.length;
  if (length > MAX_REPLACED_LENGTH) throw tooLong('replace', length);
  let out = replacement;
  for (let i = 0; i < s.length; i++) out += s[i] + replacement;
  return out;
}
