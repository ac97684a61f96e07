/**
 * A set of header field names asked about in any case, for the request path: only a name of a length
 * the set holds is lower-cased to be looked up, so the usual fields (Date, Content-Type, ...) cost no
 * new string each time they pass.
 */
export class FieldNameSet {
  readonly #names: ReadonlySet<string>;
  readonly #lengths: ReadonlySet<number>;

  /** `names` in lower case. */
  constructor(names: Iterable<string>) {
    this.#names = new Set(names);
    this.#lengths = new Set([...this.#names].map((name) => name.length));
  }

  has(name: string): boolean {
    return this.#lengths.has(name.length) && this.#names.has(name.toLowerCase());
  }
}

/** Whether two field names are the same name: ASCII letters in any case, nothing allocated. */
export function sameFieldName(a: string, b: string): boolean {
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
