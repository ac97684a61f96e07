import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Which configured objects read the request body through an expression, found once at load time.
 *
 * Expressions never wait for a streamed body: `${request.entity.string}` reads null until something
 * has buffered the body, and once the body has gone upstream it is gone. A response-phase filter or a
 * StaticResponseHandler entity reading it therefore needs the body buffered before the request
 * reaches anything that consumes it. Every expression knows, from its syntax tree, whether it reads
 * the request body; compiling one tells the load in progress (the creation of a heap object, the
 * loading of a route), which marks what it built; an object that uses a marked object is marked too.
 * A route or chain whose handler is marked buffers the body once, before its filters run.
 */
interface Collector {
  reads: boolean;
}

const collecting = new AsyncLocalStorage<Collector>();
const readers = new WeakSet<object>();

/** Runs a load step; `reads` tells whether anything it compiled or used reads the request body. */
export async function collectRequestBodyReads<T>(
  work: () => Promise<T>,
): Promise<{ value: T; reads: boolean }> {
  const collector: Collector = { reads: false };
  const value = await collecting.run(collector, work);
  return { value, reads: collector.reads };
}

/** Told by an expression reading the request body as it compiles, and for each marked object used. */
export function noteRequestBodyRead(): void {
  const collector = collecting.getStore();
  if (collector !== undefined) collector.reads = true;
}

/** Marks an object as one whose expressions (or whose parts') read the request body. */
export function markRequestBodyReader(object: unknown): void {
  if (typeof object === 'object' && object !== null) readers.add(object);
  else if (typeof object === 'function') readers.add(object);
}

/** True for an object marked by `markRequestBodyReader`. */
export function readsRequestBody(object: unknown): boolean {
  return (
    (typeof object === 'object' || typeof object === 'function') && object !== null && readers.has(object)
  );
}

/** Notes a use of `object` in the load in progress, when it reads the request body; returns it. */
export function usedObject<T>(object: T): T {
  if (readsRequestBody(object)) noteRequestBodyRead();
  return object;
}
