import { EL_GET, EL_KEYS, EL_SET, type ElObject, getProperty, keysOf, setProperty } from './access.ts';

/**
 * `exchange`, as OpenIG 3 and 4 route files still use it (`${exchange.request.uri.path}`,
 * `${exchange.token}`): the exchange held the request, the response, the session and the principal,
 * and every other key was an attribute of the exchange. Here those keys read the same bindings, and
 * any other key reads and writes `attributes`, where today's configurations keep such values.
 * `exchange.attributes` is that map itself (OpenIG 4's name for it), not an attribute named
 * `attributes`.
 */
const MESSAGE_KEYS = new Set([
  'request',
  'response',
  'attributes',
  'session',
  'principal',
  'context',
  'contexts',
]);

export class ExchangeView implements ElObject {
  readonly #bindings: Readonly<Record<string, unknown>>;

  constructor(bindings: Readonly<Record<string, unknown>>) {
    this.#bindings = bindings;
  }

  [EL_GET](key: string): unknown {
    if (MESSAGE_KEYS.has(key)) return this.#bindings[key] ?? null;
    return getProperty(this.#bindings.attributes, key);
  }

  [EL_SET](key: string, value: unknown): void {
    if (!MESSAGE_KEYS.has(key)) setProperty(this.#bindings.attributes, key, value);
  }

  [EL_KEYS](): string[] {
    return [...MESSAGE_KEYS, ...(keysOf(this.#bindings.attributes) ?? []).map(String)];
  }
}

/** The top-level names every run-time expression's bindings hold (see `bindingsFor`). */
export const RUN_TIME_NAMES: ReadonlySet<string> = new Set([
  'request',
  'response',
  'context',
  'contexts',
  'attributes',
  'session',
  'exchange',
]);
