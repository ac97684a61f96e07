/**
 * Java's `Matcher` operations on a compiled pattern, whichever engine runs it (a native RegExp, or a
 * Re2RegExp, asked for its native stand-in first): `matches()`, `find()`, `find(from)`. The
 * variants a native pattern needs (anchored, without state flags, global) are made once per pattern.
 */
import { isRe2RegExp } from './linear-regex.ts';

const anchoredVariants = new WeakMap<RegExp, RegExp>();
const plainVariants = new WeakMap<RegExp, RegExp>();
const globalVariants = new WeakMap<RegExp, RegExp>();

function withoutStateFlags(re: RegExp): string {
  return re.flags.replace(/[gy]/g, '');
}

/** Java `Matcher.matches()`: true when the whole of `s` matches `re`. */
export function fullMatch(re: RegExp, s: string): boolean {
  if (isRe2RegExp(re)) {
    const plain = re.nativeFor(s);
    return plain ? fullMatch(plain, s) : re.matchesWhole(s);
  }
  let anchored = anchoredVariants.get(re);
  if (anchored === undefined) {
    // Anchored by `^` and `$` without the m flag, also for a multiline pattern: the translation writes
    // every multiline anchor out (caret, dollar, startAnchor), so m changes nothing in its source, and
    // anchoring with look-arounds instead kept V8's linear engine from taking over a backtracking
    // match (`(?m)(a|aa)+b` on 28 a and a `c`: six seconds).
    const flags = withoutStateFlags(re).replace('m', '');
    anchored = new RegExp(`^(?:${re.source})$`, flags);
    anchoredVariants.set(re, anchored);
  }
  return anchored.test(s);
}

/** Java `Matcher.find()` on a fresh matcher: the first match in `s`, whatever `re.lastIndex` says. */
export function find(re: RegExp, s: string): RegExpExecArray | null {
  if (isRe2RegExp(re)) {
    const plain = re.nativeFor(s);
    return plain ? find(plain, s) : re.matchFrom(s, 0);
  }
  if (!re.global && !re.sticky) return re.exec(s);
  let plain = plainVariants.get(re);
  if (plain === undefined) {
    plain = new RegExp(re.source, withoutStateFlags(re));
    plainVariants.set(re, plain);
  }
  return plain.exec(s);
}

/**
 * Whether Java `Matcher.find()` finds a match in `s`: `find` without the match (a route condition
 * asks only this, and the match array it would make is garbage at once).
 */
export function isFound(re: RegExp, s: string): boolean {
  // The native pattern that means the same for `s` (the pattern itself, or the linear engine's
  // stand-in); test() on one without state flags neither reads nor writes lastIndex.
  const native = isRe2RegExp(re) ? re.nativeFor(s) : re;
  if (native !== undefined && !native.global && !native.sticky) return native.test(s);
  return find(re, s) !== null;
}

/** Java `Matcher.find(from)`: the first match that starts at or after index `from` of `s`. */
export function findFrom(re: RegExp, s: string, from: number): RegExpExecArray | null {
  if (isRe2RegExp(re)) {
    const plain = re.nativeFor(s);
    if (plain) return findFrom(plain, s, from);
    return from <= s.length ? re.matchFrom(s, from) : null;
  }
  let scanner = globalVariants.get(re);
  if (scanner === undefined) {
    scanner = new RegExp(re.source, withoutStateFlags(re) + 'g');
    globalVariants.set(re, scanner);
  }
  scanner.lastIndex = from;
  return scanner.exec(s);
}
