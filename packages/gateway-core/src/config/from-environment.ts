/**
 * The values of a configuration that a token (`&{db.password}`) took from a system property or an
 * environment variable, by the object or array holding them and their key, with the text written in
 * the file. Kept beside the values, which stay plain JSON: the schemas read it so that their
 * messages describe such a value (it may be a password) instead of quoting it.
 */
const marks = new WeakMap<object, Map<string, string>>();

export function markFromEnvironment(container: object, key: string, written: string): void {
  let keys = marks.get(container);
  if (keys === undefined) marks.set(container, (keys = new Map()));
  keys.set(key, written);
}

/** The text written at `container[key]` when a token there took its value from the environment. */
export function writtenFromEnvironment(container: unknown, key: string): string | undefined {
  return typeof container === 'object' && container !== null ? marks.get(container)?.get(key) : undefined;
}

/**
 * `sources` merged as a spread merges them (a later key wins), with the marks of the values kept:
 * properties are merged so (admin.json's under config.json's, a heap's over its parent's).
 */
export function mergeMarked(...sources: (Record<string, unknown> | undefined)[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const source of sources) {
    if (source === undefined) continue;
    for (const key of Object.keys(source)) {
      // Defined, not assigned: a `__proto__` key stays a key.
      Object.defineProperty(out, key, {
        value: source[key],
        enumerable: true,
        writable: true,
        configurable: true,
      });
      const written = writtenFromEnvironment(source, key);
      if (written !== undefined) markFromEnvironment(out, key, written);
      else marks.get(out)?.delete(key);
    }
  }
  return out;
}

/** The names of `properties` whose values came from the environment, with `properties` if any did. */
export function environmentNames(properties: unknown): ReadonlySet<string> {
  if (typeof properties !== 'object' || properties === null) return NONE;
  let names = namesOf.get(properties);
  if (names === undefined) {
    const found = Object.keys(properties).filter(
      (key) =>
        writtenFromEnvironment(properties, key) !== undefined ||
        writtenInside((properties as Record<string, unknown>)[key]) !== undefined,
    );
    names = found.length === 0 ? NONE : new Set([...found, 'properties']);
    namesOf.set(properties, names);
  }
  return names;
}

const NONE: ReadonlySet<string> = new Set();
/** environmentNames by properties object: a heap's are read by the configuration of each of its objects. */
const namesOf = new WeakMap<object, ReadonlySet<string>>();

/** Gives `to`, a copy of some of `from`'s keys, the marks of `from`. */
export function keepMarks(from: unknown, to: object): void {
  const keys = typeof from === 'object' && from !== null ? marks.get(from) : undefined;
  if (keys !== undefined) marks.set(to, keys);
}

/** The text written for the first marked value inside `value` (an object or array), if any. */
export function writtenInside(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const keys = marks.get(value);
  if (keys !== undefined) return keys.values().next().value;
  for (const item of Object.values(value)) {
    const written = writtenInside(item);
    if (written !== undefined) return written;
  }
  return undefined;
}
