import type { Logger } from '../logging.ts';
import type { Heaplet } from './heaplet.ts';

/**
 * What a heap created, in creation order, so that it can be destroyed newest first: an object is
 * destroyed before the objects it was given, which were created before it.
 */
export class CreatedObjects {
  private readonly entries: { name: string; heaplet: Heaplet; object: unknown }[] = [];

  track(name: string, heaplet: Heaplet, object: unknown): void {
    this.entries.push({ name, heaplet, object });
  }

  /** The objects as their heaplets created them (undecorated), oldest first. */
  list(): unknown[] {
    return this.entries.map(({ object }) => object);
  }

  /** Calls every heaplet's destroy, newest first; a failure is logged and the others still run. */
  async destroyAll(logger: Logger): Promise<void> {
    const entries = this.entries.splice(0).toReversed();
    for (const { name, heaplet, object } of entries) {
      try {
        await heaplet.destroy?.(object);
      } catch (error) {
        logger.error(`cannot destroy heap object '${name}'`, { type: heaplet.type, error: String(error) });
      }
    }
  }
}
