/**
 * Percent-decoding of what clients send (paths, queries, form fields) without an exception per
 * malformed escape. `decodeURIComponent` throws on a `%` without two hex digits or on bytes that are
 * not UTF-8, and a throw costs microseconds: decoding escape by escape after a failure let a client
 * make every malformed escape of a long path or form body cost one. What `decodeURIComponent`
 * accepts is checked first, by one linear scan.
 */

const H = '[0-9A-F]';
const CONTINUATION = `%[89AB]${H}`;
/** One character as escaped UTF-8, as RFC 3629 allows it (no overlong forms, no surrogates). */
const ESCAPED_CHARACTER = [
  `%[0-7]${H}`,
  `%C[2-9A-F]${CONTINUATION}`,
  `%D${H}${CONTINUATION}`,
  `%E0%[AB]${H}${CONTINUATION}`,
  `%E[1-9A-CEF]${CONTINUATION}${CONTINUATION}`,
  `%ED%[89]${H}${CONTINUATION}`,
  `%F0%[9AB]${H}${CONTINUATION}${CONTINUATION}`,
  `%F[1-3]${CONTINUATION}${CONTINUATION}${CONTINUATION}`,
  `%F4%8${H}${CONTINUATION}${CONTINUATION}`,
].join('|');
/**
 * Text `decodeURIComponent` decodes without throwing. Linear: after a `%` at most one alternative can
 * match (they differ by their first two hex digits).
 */
const WELL_FORMED = new RegExp(`^(?:[^%]|${ESCAPED_CHARACTER})*$`, 'i');
/** A run of consecutive escapes. */
const ESCAPE_RUNS = /(?:%[0-9A-Fa-f]{2})+/g;

/** Percent-decoding that leaves each malformed escape, or run of escapes, as it is. */
export function decodeLeniently(raw: string): string {
  if (!raw.includes('%')) return raw;
  if (WELL_FORMED.test(raw)) return decodeURIComponent(raw);
  return raw.replace(ESCAPE_RUNS, (run) => (WELL_FORMED.test(run) ? decodeURIComponent(run) : run));
}

/** What `decodeURIComponent` gives, or undefined where it would throw; never throws. */
export function decodeStrictly(raw: string): string | undefined {
  if (!raw.includes('%')) return raw;
  return WELL_FORMED.test(raw) ? decodeURIComponent(raw) : undefined;
}
