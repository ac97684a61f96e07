import { brandClass } from '../brand.ts';
import { EL_CALL, EL_GET, EL_KEYS, EL_SET, type ElObject, NO_SUCH_METHOD } from '../expression/access.ts';
import { toText } from '../expression/coercion.ts';

type HeaderValue = string | number | readonly (string | number)[];

/**
 * HTTP headers: names are case-insensitive, each name holds a list of values, and both the order in
 * which names first appeared and their original spelling are kept for the wire. In expressions,
 * `request.headers['X-Foo']` is the list of values (or null) and assigning to it replaces them.
 */
export class Headers implements ElObject {
  readonly #entries = new Map<string, { name: string; values: string[] }>();

  constructor(init?: Iterable<readonly [string, HeaderValue]> | Record<string, HeaderValue | undefined>) {
    if (!init) return;
    const pairs = Symbol.iterator in init ? init : Object.entries(init);
    for (const [name, value] of pairs as Iterable<readonly [string, HeaderValue | undefined]>) {
      if (value !== undefined) this.add(name, value);
    }
  }

  /** From Node's `rawHeaders` (name, value, name, value ...), keeping spelling and order. */
  static fromRaw(raw: readonly string[]): Headers {
    const headers = new Headers();
    for (let i = 0; i + 1 < raw.length; i += 2) headers.add(raw[i]!, raw[i + 1]!);
    return headers;
  }

  /** The first value, or undefined. */
  get(name: string): string | undefined {
    return this.#entries.get(name.toLowerCase())?.values[0];
  }

  /** Every value (a copy), or an empty list. */
  getAll(name: string): string[] {
    return [...(this.#entries.get(name.toLowerCase())?.values ?? [])];
  }

  has(name: string): boolean {
    return this.#entries.has(name.toLowerCase());
  }

  /** Replaces every value of the header. */
  set(name: string, value: HeaderValue): this {
    const values = toValues(value);
    if (values.length === 0) this.delete(name);
    else this.#entries.set(name.toLowerCase(), { name, values });
    return this;
  }

  /** Appends values, keeping the existing ones. */
  add(name: string, value: HeaderValue): this {
    const key = name.toLowerCase();
    const entry = this.#entries.get(key);
    // One string, the usual case (every header read off the wire): no intermediate list.
    if (typeof value === 'string') {
      if (entry) entry.values.push(value);
      else this.#entries.set(key, { name, values: [value] });
      return this;
    }
    if (entry) entry.values.push(...toValues(value));
    else this.set(name, value);
    return this;
  }

  delete(name: string): boolean {
    return this.#entries.delete(name.toLowerCase());
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Names as first spelled. */
  names(): string[] {
    return [...this.#entries.values()].map((e) => e.name);
  }

  /**
   * Calls `fn` with each name (as first spelled) and its values, in order. For the request path:
   * unlike the iterator, it allocates nothing per entry.
   */
  forEach(fn: (name: string, values: readonly string[]) => void): void {
    for (const entry of this.#entries.values()) fn(entry.name, entry.values);
  }

  *[Symbol.iterator](): IterableIterator<[string, string[]]> {
    for (const { name, values } of this.#entries.values()) yield [name, values];
  }

  /** `[name, value, name, value ...]`, one pair per value, for Node and undici. */
  toRaw(): string[] {
    const raw: string[] = [];
    for (const { name, values } of this.#entries.values()) for (const v of values) raw.push(name, v);
    return raw;
  }

  toJSON(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const { name, values } of this.#entries.values()) out[name] = [...values];
    return out;
  }

  clone(): Headers {
    const copy = new Headers();
    for (const { name, values } of this.#entries.values())
      copy.#entries.set(name.toLowerCase(), { name, values: [...values] });
    return copy;
  }

  toString(): string {
    return `{${[...this].map(([n, v]) => `${n}=[${v.join(', ')}]`).join(', ')}}`;
  }

  [EL_GET](key: string): unknown {
    const entry = this.#entries.get(key.toLowerCase());
    return entry ? entry.values : undefined;
  }

  [EL_KEYS](): string[] {
    return this.names();
  }

  [EL_SET](key: string, value: unknown): void {
    if (value === null || value === undefined) this.delete(key);
    else this.set(key, Array.isArray(value) ? value.map((v) => toText(v)) : toText(value));
  }

  [EL_CALL](name: string, args: unknown[]): unknown {
    const key = args.length > 0 ? toText(args[0]) : '';
    switch (`${name}/${args.length}`) {
      case 'get/1':
        return this[EL_GET](key) ?? null;
      case 'getFirst/1':
        return this.get(key) ?? null;
      case 'containsKey/1':
        return this.has(key);
      case 'keySet/0':
        return this.names();
      case 'values/0':
        return [...this].map(([, v]) => v);
      case 'size/0':
        return this.size;
      case 'isEmpty/0':
        return this.size === 0;
      default:
        return NO_SUCH_METHOD;
    }
  }
}

function toValues(value: HeaderValue): string[] {
  return typeof value === 'string' || typeof value === 'number' ? [String(value)] : value.map(String);
}

// Objects of these classes cross package boundaries (plugins make and read them): one identity for
// every copy of the core (brand.ts).
brandClass(Headers, 'Headers');
