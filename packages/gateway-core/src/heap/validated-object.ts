import type { Kind } from '../kinds.ts';

const VALIDATED = Symbol.for('portico.validated-object');

/**
 * What `portico validate` has in place of an object it checked but did not create: validating runs
 * the schemas and resolves the references, and never a heaplet's `create` (which may open
 * connections, files and timers). Objects that refer to it get this; the heap's type guards and the
 * gateway's own checks of what an object is let it through.
 */
export class ValidatedObject {
  readonly [VALIDATED] = true;
  readonly name: string;
  readonly type: string;
  readonly kind: Kind;

  constructor(name: string, type: string, kind: Kind) {
    this.name = name;
    this.type = type;
    this.kind = kind;
  }
}

/** Whether a value stands for an object validation checked and did not create (any copy of the core). */
export function isValidatedObject(value: unknown): value is ValidatedObject {
  return (
    typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[VALIDATED] === true
  );
}
