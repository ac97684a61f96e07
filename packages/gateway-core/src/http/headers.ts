import { brandClass } from '../brand.ts';
import { EL_CALL, EL_GET, EL_KEYS, EL_SET, type ElObject, NO_SUCH_METHOD } from '../expression/access.ts';
import { toText } from '../expression/coercion.ts';
import { equalIgnoringAsciiCase, fieldKey } from './field-names.ts';

type HeaderValue = string | number | readonly (string | number)[];

type Entry = { name: string; values: string[] };

/** The fields of a message with none. */
const NO_FIELDS: readonly string[] = Object.freeze([]);

/**
 * HTTP headers: names are case-insensitive, each name holds a list of values, and both the order in
 * which names first appeared and their original spelling are kept for the wire. In expressions,
 * `request.headers['X-Foo']` is the list of values (or null) and assigning to it replaces them.
 *
 * Headers read off the wire (`fromRaw`) stay the list they arrived as until something changes them or
 * asks for them by name as a whole (`names`, `forEach`, the iterator, expressions): most requests and
 * responses cross a gateway with a lookup or two and no change, and a Map with an entry and a list per
 * field cost every message about 0.7 KB. While unchanged, `forEachField` and `toRaw` give the fields
 * exactly as they arrived, each line in its place; once changed, the values of one name are given
 * together where the name first appeared. Both orders keep the values of one name in order, which is
 * the only order HTTP gives a meaning to (RFC 9110 §5.3).
 */
export class Headers implements ElObject {
  /** The fields as they arrived (name, value, ...; never changed in place), or undefined once grouped. */
  #fields: readonly string[] | undefined = NO_FIELDS;
  #grouped: Map<string, Entry> | undefined;

  constructor(init?: Iterable<readonly [string, HeaderValue]> | Record<string, HeaderValue | undefined>) {
    if (!init) return;
    const pairs = Symbol.iterator in init ? init : Object.entries(init);
    for (const [name, value] of pairs as Iterable<readonly [string, HeaderValue | undefined]>) {
      if (value !== undefined) this.add(name, value);
    }
  }

  /**
   * From Node's or undici's raw form (name, value, name, value ...), keeping spelling and order. The
   * list is kept as it is and read when asked: it must not change afterwards.
   */
  static fromRaw(raw: readonly string[]): Headers {
    const headers = new Headers();
    headers.#fields = raw;
    return headers;
  }

  /** By lower-case name, grouped on first need from the fields as they arrived. */
  get #entries(): Map<string, Entry> {
    if (this.#grouped !== undefined) return this.#grouped;
    const grouped = new Map<string, Entry>();
    const fields = this.#fields!;
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const name = fields[i]!;
      const key = fieldKey(name);
      const entry = grouped.get(key);
      if (entry) entry.values.push(fields[i + 1]!);
      else grouped.set(key, { name, values: [fields[i + 1]!] });
    }
    this.#fields = undefined;
    this.#grouped = grouped;
    return grouped;
  }

  /** The first value, or undefined. */
  get(name: string): string | undefined {
    const fields = this.#fields;
    if (fields === undefined) return this.#entries.get(fieldKey(name))?.values[0];
    const at = fieldIndex(fields, name, 0);
    return at < 0 ? undefined : fields[at + 1];
  }

  /** Every value (a copy), or an empty list. */
  getAll(name: string): string[] {
    const fields = this.#fields;
    if (fields === undefined) return [...(this.#entries.get(fieldKey(name))?.values ?? [])];
    // Literals, not pushes onto an empty list: a first push reserves room for 17 values.
    const first = fieldIndex(fields, name, 0);
    if (first < 0) return [];
    const values = [fields[first + 1]!];
    for (let at = fieldIndex(fields, name, first + 2); at >= 0; at = fieldIndex(fields, name, at + 2))
      values.push(fields[at + 1]!);
    return values;
  }

  has(name: string): boolean {
    const fields = this.#fields;
    if (fields === undefined) return this.#entries.has(fieldKey(name));
    return fieldIndex(fields, name, 0) >= 0;
  }

  /** Replaces every value of the header. */
  set(name: string, value: HeaderValue): this {
    const values = toValues(value);
    if (values.length === 0) this.delete(name);
    else this.#entries.set(fieldKey(name), { name, values });
    return this;
  }

  /** Appends values, keeping the existing ones. */
  add(name: string, value: HeaderValue): this {
    const key = fieldKey(name);
    const entry = this.#entries.get(key);
    // One string, the usual case (every header read off the wire): no intermediate list.
    if (typeof value === 'string') {
      if (entry) entry.values.push(value);
      else this.#entries.set(key, { name, values: [value] });
      return this;
    }
    // A loop, not push(...): an expression's list (a form field a client repeated) may be long enough
    // to overflow the stack as arguments.
    if (entry) for (const each of toValues(value)) entry.values.push(each);
    else this.set(name, value);
    return this;
  }

  delete(name: string): boolean {
    const fields = this.#fields;
    if (fields === undefined) return this.#entries.delete(fieldKey(name));
    // A copy without the name's fields: the list may be Node's own, and a removal (the connection's
    // fields on arrival) is no reason to group the rest.
    const first = fieldIndex(fields, name, 0);
    if (first < 0) return false;
    const kept = fields.slice(0, first);
    for (let i = first + 2; i + 1 < fields.length; i += 2)
      if (!equalIgnoringAsciiCase(fields[i]!, name)) kept.push(fields[i]!, fields[i + 1]!);
    this.#fields = kept;
    return true;
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

  /**
   * Calls `fn` with each value and its name, one call per field line as the wire carries it: the
   * fields as they arrived while unchanged, else each name's values together. Groups nothing and
   * allocates nothing, for writing a message.
   */
  forEachField(fn: (name: string, value: string) => void): void {
    const fields = this.#fields;
    if (fields !== undefined) {
      for (let i = 0; i + 1 < fields.length; i += 2) fn(fields[i]!, fields[i + 1]!);
      return;
    }
    for (const { name, values } of this.#entries.values()) for (const value of values) fn(name, value);
  }

  *[Symbol.iterator](): IterableIterator<[string, string[]]> {
    for (const { name, values } of this.#entries.values()) yield [name, values];
  }

  /** `[name, value, name, value ...]`, one pair per value, for Node and undici. */
  toRaw(): string[] {
    const fields = this.#fields;
    if (fields !== undefined) return fields.length % 2 === 0 ? fields.slice() : fields.slice(0, -1);
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
    // The arrived fields are never changed in place: the copy may share them.
    if (this.#fields !== undefined) {
      copy.#fields = this.#fields;
      return copy;
    }
    for (const { name, values } of this.#entries.values())
      copy.#entries.set(fieldKey(name), { name, values: [...values] });
    return copy;
  }

  toString(): string {
    return `{${[...this].map(([n, v]) => `${n}=[${v.join(', ')}]`).join(', ')}}`;
  }

  [EL_GET](key: string): unknown {
    const entry = this.#entries.get(fieldKey(key));
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

/**
 * Each field line of `headers` as `Headers.forEachField` gives them, also for Headers made by a copy
 * of the core older than that method (npm may install one beside a plugin) and for a plugin's own
 * iterable of [name, values] pairs.
 */
export function forEachFieldOf(
  headers: Headers | Iterable<readonly [string, readonly string[]]>,
  fn: (name: string, value: string) => void,
): void {
  const ours = headers as Partial<Headers>;
  if (typeof ours.forEachField === 'function') ours.forEachField(fn);
  else
    for (const [name, values] of headers as Iterable<readonly [string, readonly string[]]>)
      for (const value of values) fn(name, value);
}

/** Where the next field named `name` (any case) is, from position `from`, or -1; allocates nothing. */
function fieldIndex(fields: readonly string[], name: string, from: number): number {
  for (let i = from; i + 1 < fields.length; i += 2) if (equalIgnoringAsciiCase(fields[i]!, name)) return i;
  return -1;
}

function toValues(value: HeaderValue): string[] {
  return typeof value === 'string' || typeof value === 'number' ? [String(value)] : value.map(String);
}

// Objects of these classes cross package boundaries (plugins make and read them): one identity for
// every copy of the core (brand.ts).
brandClass(Headers, 'Headers');
