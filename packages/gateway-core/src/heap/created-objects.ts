import type { Logger } from '../logging.ts';

/** What releases one resource an object's `create` acquired (HeapletContext.onDestroy). */
export type Release = () => void | Promise<void>;

/**
 * What a heap created, in creation order, so that it can be destroyed newest first: an object is
 * destroyed before the objects it was given, which were created before it.
 */
export class CreatedObjects {
  readonly #entries: { name: string; type: string; object: unknown; releases: readonly Release[] }[] = [];

  track(name: string, type: string, object: unknown, releases: readonly Release[]): void {
    this.#entries.push({ name, type, object, releases });
  }

  /** The objects as their heaplets created them (undecorated), oldest first. */
  list(): unknown[] {
    return this.#entries.map(({ object }) => object);
  }

  /** Runs every object's releases, newest first; a failure is logged and the others still run. */
  async destroyAll(logger: Logger): Promise<void> {
    const entries = this.#entries.splice(0).toReversed();
    for (const { name, type, releases } of entries) await release(releases, logger, name, type);
  }
}

/** Runs releases newest first; one that fails is logged, and the ones before it still run. */
export async function release(
  releases: readonly Release[],
  logger: Logger,
  name: string,
  type: string,
): Promise<void> {
  for (const run of releases.toReversed()) {
    try {
      await run();
    } catch (error) {
      logger.error(`cannot destroy heap object '${name}'`, { type, error: String(error) });
    }
  }
}
