/**
 * A set of header field names asked about in any case, for the request path: a name is compared
 * with the set's names of its length, letter by letter, so asking makes no lower-cased copy.
 */
export class FieldNameSet {
  /** The set's names (lower case) by their length. */
  readonly #byLength: (readonly string[] | undefined)[] = [];

  /** `names` in lower case. */
  constructor(names: Iterable<string>) {
    for (const name of new Set(names)) {
      const same = this.#byLength[name.length];
      this.#byLength[name.length] = same === undefined ? [name] : [...same, name];
    }
  }

  has(name: string): boolean {
    const candidates = this.#byLength[name.length];
    if (candidates === undefined) return false;
    for (const candidate of candidates) if (equalIgnoringAsciiCase(name, candidate)) return true;
    return false;
  }
}

/**
 * Whether two strings are equal when ASCII letters are compared in any case, as header field names
 * and host names are (non-ASCII characters must match exactly); allocates nothing.
 */
export function equalIgnoringAsciiCase(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  if (a === b) return true;
  for (let i = 0; i < a.length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y && toLowerAscii(x) !== toLowerAscii(y)) return false;
  }
  return true;
}

function toLowerAscii(code: number): number {
  return code >= 65 && code <= 90 ? code + 32 : code;
}

/**
 * A name's key for lookups by name, agreeing with equalIgnoringAsciiCase: ASCII letters in lower
 * case, every other character as it is (`toLowerCase` alone would make the Kelvin sign a `k`).
 */
export function fieldKey(name: string): string {
  for (let i = 0; i < name.length; i++)
    if (name.charCodeAt(i) > 127) return name.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
  return name.toLowerCase();
}
