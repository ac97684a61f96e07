/**
 * The heap names of the objects heaps created (decorated as they were handed out), for what names an
 * object only when asked: a filter's span when filters are traced. Weakly held: an object of a
 * destroyed heap goes with it.
 */
const NAMES = new WeakMap<object, string>();

/** Records an object's heap name (the heap, once the object is created and decorated). */
export function nameHeapObject(value: unknown, name: string): void {
  if ((typeof value === 'object' && value !== null) || typeof value === 'function') NAMES.set(value, name);
}

/** The heap name of an object a heap created, if it was. */
export function heapObjectName(value: unknown): string | undefined {
  if ((typeof value === 'object' && value !== null) || typeof value === 'function') return NAMES.get(value);
  return undefined;
}
