import { brand, hasBrand } from '../brand.ts';

/** The kinds of heap object a reference may name. */
export type ReferenceKind = 'filter' | 'handler' | 'decorator' | 'audit-handler' | 'secret-store' | 'object';

/** A check of the object a reference names, made by the heap once it has the object. */
export interface ReferenceGuard {
  test(value: unknown): boolean;
  /** In words, for the error: 'a LogSink'. */
  expected: string;
}

/**
 * A reference to a heap object as written in configuration: a name, or an inline declaration
 * (`{"type": "...", "config": {...}}`). The heap resolves it to the object before the referring
 * object is created, so heaplets receive the object itself.
 */
const REFERENCE = brand('Reference');

export class Reference {
  /** Its brand: a plugin with its own copy of the core makes References this heap still resolves. */
  readonly [REFERENCE] = true;
  readonly kind: ReferenceKind;

  static [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: the class `instanceof` asks, which may be a subclass
    return hasBrand(this, Reference, REFERENCE, value);
  }

  /** Accepted type names when the reference must be of particular types (e.g. a ClientRegistration). */
  readonly types: readonly string[] | undefined;
  readonly value: string | Record<string, unknown>;
  readonly jsonPath: string;
  readonly file: string | undefined;
  /** What the object must be beyond its kind (`s.ref('object').is(isLogSink, 'a LogSink')`). */
  readonly guard: ReferenceGuard | undefined;

  constructor(
    kind: ReferenceKind,
    value: string | Record<string, unknown>,
    jsonPath: string,
    file?: string,
    types?: readonly string[],
    guard?: ReferenceGuard,
  ) {
    this.kind = kind;
    this.value = value;
    this.jsonPath = jsonPath;
    this.file = file;
    this.types = types;
    this.guard = guard;
  }
}
