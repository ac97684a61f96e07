import type { Dispatcher as DispatcherType, Pool as PoolType } from 'undici';
import { Client, ClientClosedError, Dispatcher, Pool } from './undici-dispatchers.ts';

/**
 * One undici Pool per upstream origin (a Client when one connection is allowed), made on first use:
 * what undici's Agent does, without the Agent's layer on every request (its own dispatch checks, a
 * key string made per request for HTTP/1.1-only pools, and each completed request's `drain` event
 * re-emitted with a new array): 3–4 µs of CPU per proxied request on the dispatch floor
 * (bench/README.md, "Upstream pools without undici's Agent").
 *
 * As the Agent does, a pool whose connections have all closed, with nothing running or waiting, is
 * closed and forgotten, so that origins used once (a route sending each request to a URI of its
 * own) do not pile up.
 */
/** A pool's connections and requests, as undici counts them. */
export interface PoolState {
  connected: number;
  free: number;
  running: number;
  pending: number;
}

export class OriginPools extends Dispatcher {
  readonly #options: PoolType.Options;
  readonly #pools = new Map<string, DispatcherType>();
  #closed = false;

  constructor(options: PoolType.Options) {
    super();
    this.#options = options;
  }

  override dispatch(
    options: DispatcherType.DispatchOptions,
    handler: DispatcherType.DispatchHandler,
  ): boolean {
    if (this.#closed) throw new ClientClosedError();
    const origin = String(options.origin);
    return (this.#pools.get(origin) ?? this.#open(origin)).dispatch(options, handler);
  }

  #open(origin: string): DispatcherType {
    const pool =
      this.#options.connections === 1 ? new Client(origin, this.#options) : new Pool(origin, this.#options);
    const forgetIfUnused = () => {
      if (this.#pools.get(origin) !== pool) return;
      const { connected, pending, running } = pool.stats as {
        connected: number;
        pending: number;
        running: number;
      };
      if (connected > 0 || pending > 0 || running > 0) return;
      this.#pools.delete(origin);
      void pool.close().catch(() => {});
    };
    pool.on('disconnect', forgetIfUnused).on('connectionError', forgetIfUnused);
    this.#pools.set(origin, pool);
    return pool;
  }

  /**
   * Each pool's state, for the metrics: its origin, its connections (open, and idle among them) and
   * its requests (sent and not yet answered, waiting for a connection).
   */
  forEachPool(visit: (origin: string, state: PoolState) => void): void {
    for (const [origin, pool] of this.#pools) {
      const {
        connected = 0,
        free,
        running = 0,
        pending = 0,
      } = (pool as unknown as { stats: Partial<PoolState> }).stats;
      // A Client (one connection) does not count its idle connection: it is idle when nothing runs.
      visit(origin, { connected, free: free ?? (running === 0 ? connected : 0), running, pending });
    }
  }

  /** How many origins have a pool (for tests and diagnostics). */
  get origins(): number {
    return this.#pools.size;
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    return this.#endAll((pool) => pool.close(), callback);
  }

  override destroy(): Promise<void>;
  override destroy(error: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(error: Error | null, callback: () => void): void;
  override destroy(first?: Error | null | (() => void), second?: () => void): Promise<void> | void {
    const error = typeof first === 'function' ? null : (first ?? null);
    return this.#endAll((pool) => pool.destroy(error), typeof first === 'function' ? first : second);
  }

  /** Closes or destroys every pool, refusing new requests; a promise, or the callback called. */
  #endAll(
    end: (pool: DispatcherType) => Promise<void>,
    callback: (() => void) | undefined,
  ): Promise<void> | void {
    this.#closed = true;
    const ended = Promise.all([...this.#pools.values()].map(end)).then(() => {});
    this.#pools.clear();
    if (callback === undefined) return ended;
    void ended.then(callback, callback);
  }
}
