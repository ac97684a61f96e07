/**
 * The character sets of `java.util.regex` as sets of UTF-16 code units, and how a set is written in
 * a JavaScript pattern: Java's predefined and POSIX classes (US-ASCII, as without
 * UNICODE_CHARACTER_CLASS), the range arithmetic nested and negated classes need, ASCII-only case
 * folding, and the escapes that keep an emitted literal or class unambiguous. No parsing here: the
 * translator (regex-translation.ts) reads the pattern and asks these for its output.
 */

export type Range = readonly [number, number];

/** A set of UTF-16 code units; `js` is a shorter equivalent to emit outside character classes. */
export interface CharSet {
  readonly ranges: readonly Range[];
  readonly negated: boolean;
  readonly js?: string;
}

/** The largest UTF-16 code unit: a class holds code units (supplementary characters are refused). */
export const MAX_CODE_UNIT = 0xffff;

export const DIGIT: readonly Range[] = [[0x30, 0x39]];
export const WORD: readonly Range[] = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
export const SPACE: readonly Range[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
];
export const HORIZONTAL_SPACE: readonly Range[] = [
  [0x09, 0x09],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x180e, 0x180e],
  [0x2000, 0x200a],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
];
export const VERTICAL_SPACE: readonly Range[] = [
  [0x0a, 0x0d],
  [0x85, 0x85],
  [0x2028, 0x2029],
];

/** The US-ASCII POSIX classes of `java.util.regex.Pattern` (without UNICODE_CHARACTER_CLASS). */
export const POSIX: Readonly<Record<string, readonly Range[]>> = {
  Lower: [[0x61, 0x7a]],
  Upper: [[0x41, 0x5a]],
  ASCII: [[0x00, 0x7f]],
  Alpha: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  Digit: DIGIT,
  Alnum: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  Punct: [
    [0x21, 0x2f],
    [0x3a, 0x40],
    [0x5b, 0x60],
    [0x7b, 0x7e],
  ],
  Graph: [[0x21, 0x7e]],
  Print: [[0x20, 0x7e]],
  Blank: [
    [0x09, 0x09],
    [0x20, 0x20],
  ],
  Cntrl: [
    [0x00, 0x1f],
    [0x7f, 0x7f],
  ],
  XDigit: [
    [0x30, 0x39],
    [0x41, 0x46],
    [0x61, 0x66],
  ],
  Space: SPACE,
};

export function normalize(ranges: readonly Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = merged[merged.length - 1];
    if (last !== undefined && lo <= last[1] + 1) {
      if (hi > last[1]) last[1] = hi;
    } else {
      merged.push([lo, hi]);
    }
  }
  return merged;
}

export function complement(ranges: readonly Range[]): Range[] {
  const result: Range[] = [];
  let next = 0;
  for (const [lo, hi] of normalize(ranges)) {
    if (lo > next) result.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_UNIT) result.push([next, MAX_CODE_UNIT]);
  return result;
}

/** Adds the other case of every ASCII letter, as Java's CASE_INSENSITIVE does without UNICODE_CASE. */
export function asciiCaseClosure(ranges: readonly Range[]): Range[] {
  const result: Range[] = [...ranges];
  for (const [lo, hi] of ranges) {
    const upperLo = Math.max(lo, 0x41);
    const upperHi = Math.min(hi, 0x5a);
    if (upperLo <= upperHi) result.push([upperLo + 32, upperHi + 32]);
    const lowerLo = Math.max(lo, 0x61);
    const lowerHi = Math.min(hi, 0x7a);
    if (lowerLo <= lowerHi) result.push([lowerLo - 32, lowerHi - 32]);
  }
  return normalize(result);
}

export function isAsciiAlnum(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

function hexEscape(c: number): string {
  return c < 0x100
    ? '\\x' + c.toString(16).toUpperCase().padStart(2, '0')
    : '\\u' + c.toString(16).toUpperCase().padStart(4, '0');
}

function classChar(c: number): string {
  return isAsciiAlnum(c) ? String.fromCharCode(c) : hexEscape(c);
}

export function classBody(ranges: readonly Range[]): string {
  let body = '';
  for (const [lo, hi] of ranges) {
    body += classChar(lo);
    if (hi === lo + 1) body += classChar(hi);
    else if (hi > lo) body += '-' + classChar(hi);
  }
  return body;
}

/** One code unit as a JavaScript literal outside classes, safe next to anything that follows. */
export function literalUnit(c: number): string {
  if (isAsciiAlnum(c) || c === 0x20) return String.fromCharCode(c);
  if (c > 0x20 && c < 0x7f) return '\\' + String.fromCharCode(c);
  return hexEscape(c);
}
