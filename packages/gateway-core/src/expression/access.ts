import { isPlainObject } from './coercion.ts';

/**
 * How expressions read and write properties. Maps (JavaScript Maps and plain objects) are read by
 * key, lists by index, and model objects (requests, URIs, headers ...) through the EL protocol
 * below or their own fields and getters. Nothing reaches the JavaScript machinery behind a value:
 * `constructor`, `__proto__` and methods are never properties.
 */

/** `obj[EL_GET](key)`: the value of property `key`, or undefined when there is none. */
export const EL_GET: unique symbol = Symbol.for('portico.el.get');
/** `obj[EL_SET](key, value)`: writes property `key`; a null value removes it where that makes sense. */
export const EL_SET: unique symbol = Symbol.for('portico.el.set');
/** `obj[EL_CALL](name, args)`: calls a method; returns NO_SUCH_METHOD when the object has none of that name. */
export const EL_CALL: unique symbol = Symbol.for('portico.el.call');
export const NO_SUCH_METHOD: unique symbol = Symbol.for('portico.el.noSuchMethod');
/** `obj[EL_KEYS]()`: the keys of a map-like model object (headers, forms), for `keyMatch` and friends. */
export const EL_KEYS: unique symbol = Symbol.for('portico.el.keys');

export interface ElObject {
  [EL_GET]?(key: string): unknown;
  [EL_SET]?(key: string, value: unknown): void;
  [EL_CALL]?(name: string, args: unknown[]): unknown;
  [EL_KEYS]?(): string[];
}

/** The keys of a map, or of a model object that lists them; undefined for anything else. */
export function keysOf(value: unknown): unknown[] | undefined {
  if (value instanceof Map) return [...value.keys()];
  if (isPlainObject(value)) return Object.keys(value);
  const keys = value !== null && typeof value === 'object' ? (value as ElObject)[EL_KEYS] : undefined;
  return typeof keys === 'function' ? keys.call(value) : undefined;
}

/** Reads `base[key]`; anything missing is null. */
export function getProperty(base: unknown, key: unknown): unknown {
  if (base === null || typeof base !== 'object') return null;
  if (Array.isArray(base)) {
    const index = toIndex(key);
    return index === undefined ? null : (base[index] ?? null);
  }
  if (base instanceof Map) {
    if (base.has(key)) return base.get(key) ?? null;
    return typeof key === 'number' ? (base.get(String(key)) ?? null) : null;
  }
  const name = typeof key === 'string' ? key : String(key);
  const protocol = (base as ElObject)[EL_GET];
  if (typeof protocol === 'function') return protocol.call(base, name) ?? null;
  if (Object.hasOwn(base, name)) {
    const value = (base as Record<string, unknown>)[name];
    return typeof value === 'function' ? null : (value ?? null);
  }
  if (isPlainObject(base)) return null;
  const getter = findGetter(base, name);
  return getter ? (getter.call(base) ?? null) : null;
}

/** Writes `base[key] = value`; null removes a map entry. Returns false when the write was not possible. */
export function setProperty(base: unknown, key: unknown, value: unknown): boolean {
  if (base === null || typeof base !== 'object') return false;
  if (Array.isArray(base)) {
    const index = toIndex(key);
    if (index === undefined || index > base.length) return false;
    base[index] = value;
    return true;
  }
  if (base instanceof Map) {
    if (value === null || value === undefined) base.delete(key);
    else base.set(key, value);
    return true;
  }
  const name = typeof key === 'string' ? key : String(key);
  const protocol = (base as ElObject)[EL_SET];
  if (typeof protocol === 'function') {
    protocol.call(base, name, value);
    return true;
  }
  if (name === '__proto__' || name === 'constructor' || name === 'prototype') return false;
  if (isPlainObject(base)) {
    if (value === null || value === undefined) delete base[name];
    else base[name] = value;
    return true;
  }
  const descriptor = findDescriptor(base, name);
  if (descriptor?.set) {
    descriptor.set.call(base, value);
    return true;
  }
  if (Object.hasOwn(base, name) && descriptor?.writable && typeof descriptor.value !== 'function') {
    (base as Record<string, unknown>)[name] = value;
    return true;
  }
  return false;
}

function toIndex(key: unknown): number | undefined {
  const n =
    typeof key === 'number' ? key : typeof key === 'string' && /^\s*\d+\s*$/.test(key) ? Number(key) : NaN;
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

/**
 * Getters found on prototypes, by the prototype a lookup started from and the name: `request.uri.path`
 * in a route's condition reads a class's getter on every request, and looking it up made a descriptor
 * object each time. Only getters found are kept (a class's getters are a finite set, whatever names
 * expressions ask for); a name with none is looked up again, so a getter defined later is seen.
 */
const GETTERS = new WeakMap<object, Map<string, () => unknown>>();

/**
 * A getter defined by the object's class (never one of Object.prototype). For an object without an
 * own property of that name (getProperty asks only then), so the prototype decides.
 */
function findGetter(base: object, name: string): (() => unknown) | undefined {
  const prototype = Object.getPrototypeOf(base) as object | null;
  if (prototype === null) return undefined;
  const known = GETTERS.get(prototype);
  const cached = known?.get(name);
  if (cached !== undefined) return cached;
  const getter = findDescriptor(prototype, name)?.get;
  if (getter !== undefined) {
    if (known === undefined) GETTERS.set(prototype, new Map([[name, getter]]));
    else known.set(name, getter);
  }
  return getter;
}

function findDescriptor(base: object, name: string): PropertyDescriptor | undefined {
  for (let o: object | null = base; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    const descriptor = Object.getOwnPropertyDescriptor(o, name);
    if (descriptor) return descriptor;
  }
  return undefined;
}
