/**
 * Identity across copies of @portico/gateway-core. npm may install a second copy beside a plugin; an
 * object made by that copy fails `instanceof` against this copy's class, though it is the same thing.
 * A branded class carries a `Symbol.for` key (one registry for the whole process, whatever copy made
 * the symbol) and answers `instanceof` by it. Only the branded class itself answers by the brand: a
 * subclass keeps the ordinary prototype check, so `instanceof UpstreamError` stays precise.
 */
export function brand(name: string): symbol {
  return Symbol.for(`portico.brand.${name}`);
}

/** `value instanceof cls`, or, for the branded class itself, a value carrying its brand. */
export function hasBrand(
  cls: { readonly prototype: unknown },
  root: unknown,
  key: symbol,
  value: unknown,
): boolean {
  if (Function.prototype[Symbol.hasInstance].call(cls, value)) return true;
  return (
    cls === root &&
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[key] === true
  );
}

/** A class, whatever its constructor's visibility. */
type Class = { readonly prototype: unknown };

/**
 * Brands a class after its declaration: its prototype carries the brand (so every instance, whatever
 * copy of the core made it, does) and `instanceof` answers by it.
 */
export function brandClass(cls: Class, name: string): void {
  const key = brand(name);
  Object.defineProperty(cls.prototype, key, { value: true });
  Object.defineProperty(cls, Symbol.hasInstance, {
    value(this: Class, value: unknown): boolean {
      return hasBrand(this, cls, key, value);
    },
  });
}
