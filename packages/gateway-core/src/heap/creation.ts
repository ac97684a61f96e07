import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Cycle detection between heap objects under construction.
 *
 * Each object being created is a Creation. While one creation waits for another (a reference, a
 * decorator, a heaplet's own lookup), there is an edge between them; a wait that would close a loop
 * of such edges is a cycle, since none of those creations could ever finish. Following the edges,
 * rather than keeping one stack per heap, tells two independent creations that share a dependency
 * (no cycle) from two creations started concurrently that wait for each other (a cycle no single
 * stack would show). The creation in progress is carried in async-local storage, so lookups a
 * heaplet makes from its own `create` are tracked too.
 */
export class Creation {
  readonly label: string;
  readonly #waitingOn = new Set<Creation>();
  #active = true;

  constructor(label: string) {
    this.label = label;
  }

  finish(): void {
    this.#active = false;
    this.#waitingOn.clear();
  }

  /** The creations from this one to `target` along waiting edges, both included; undefined if none. */
  pathTo(target: Creation, seen = new Set<Creation>()): Creation[] | undefined {
    if (!this.#active) return undefined;
    if (this === target) return [this];
    if (seen.has(this)) return undefined;
    seen.add(this);
    for (const next of this.#waitingOn) {
      const path = next.pathTo(target, seen);
      if (path) return [this, ...path];
    }
    return undefined;
  }

  addWait(target: Creation): void {
    if (this.#active) this.#waitingOn.add(target);
  }
}

const current = new AsyncLocalStorage<Creation>();

/** Runs the creation's work with it as the creation in progress. */
export function runCreation<T>(creation: Creation, work: () => Promise<T>): Promise<T> {
  return current.run(creation, work);
}

/**
 * Records that the creation in progress (if any) waits for `target`. Returns the labels of the
 * cycle this wait would close (`['A', 'B', 'A']`) instead of recording it.
 */
export function waitFor(target: Creation): string[] | undefined {
  const waiter = current.getStore();
  if (waiter === undefined) return undefined;
  const loop = target.pathTo(waiter);
  if (loop) return [...loop.map((creation) => creation.label), target.label];
  waiter.addWait(target);
  return undefined;
}
