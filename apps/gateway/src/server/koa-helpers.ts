import Module, { createRequire } from 'node:module';

/**
 * The helpers Koa requires when it loads, for features only some middleware use: content
 * negotiation (`ctx.accepts`), type checks (`ctx.is`), `ctx.type =`, `ctx.cookies` and `ctx.assert`.
 * Between them (two copies of mime-types and its database, negotiator, keygrip, http-assert with its
 * own older http-errors and deep-equal ...) they add megabytes to every process, and the gateway's
 * own traffic uses none of them (docs/decisions/0008-koa-helpers-on-first-use.md). Each maps
 * to the functions Koa reads from the module as it loads, which the stand-in hands out without
 * loading anything.
 */
const DEFERRED: Readonly<Record<string, readonly string[]>> = {
  'mime-types': ['contentType'],
  'type-is': ['is'],
  accepts: [],
  cookies: [],
  'http-assert': [],
};

type Loaded = ((...args: unknown[]) => unknown) & Record<PropertyKey, unknown>;

/**
 * Puts a stand-in for each helper in the CommonJS cache, under the file Koa resolves it to: the
 * real module is loaded (and replaces the stand-in in the cache) the first time anything calls,
 * constructs or reads from it. A helper already loaded is left as it is. Call it before Koa loads.
 */
export function deferKoaHelpers(koaEntry: string): void {
  const fromKoa = createRequire(koaEntry);
  for (const [name, functions] of Object.entries(DEFERRED)) {
    const file = fromKoa.resolve(name);
    if (fromKoa.cache[file] !== undefined) continue;
    let real: Loaded | undefined;
    const load = (): Loaded => {
      if (real === undefined) {
        delete fromKoa.cache[file];
        real = fromKoa(name) as Loaded;
      }
      return real;
    };
    const entry = new Module(file);
    entry.filename = file;
    entry.loaded = true;
    entry.exports = standIn(load, functions);
    fromKoa.cache[file] = entry;
  }
}

/** Calls, `new`, and every property read go to the real module, loaded on the first of them. */
function standIn(load: () => Loaded, functions: readonly string[]): unknown {
  const deferred = new Map<PropertyKey, unknown>(
    functions.map((key) => [
      key,
      function (this: unknown, ...args: unknown[]) {
        return Reflect.apply(load()[key] as Loaded, this, args);
      },
    ]),
  );
  // A function as the target, so that the stand-in can be called and constructed like the module.
  return new Proxy(function helper() {}, {
    get: (_target, key) => (deferred.has(key) ? deferred.get(key) : Reflect.get(load(), key)),
    has: (target, key) => Reflect.has(load(), key) || Reflect.has(target, key),
    apply: (_target, self, args) => Reflect.apply(load(), self, args),
    construct: (_target, args) => Reflect.construct(load(), args),
  });
}
