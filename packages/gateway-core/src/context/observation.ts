import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request } from '../http/message.ts';
import { type Context, observationSlot } from './context.ts';

/**
 * What a server watches of each exchange (its access log, its traces), through a few hooks the core
 * calls; the core itself knows no log format and no tracing library (decision 0111). With no
 * observer installed, what the core does per request is read one number: no object, no closure, no
 * lookup.
 */
export interface ExchangeObserver {
  /**
   * The request has arrived and its context is made: the exchange's observation, kept for the hooks
   * below until the exchange ends (its response closes: `closed`).
   */
  begin(req: IncomingMessage, res: ServerResponse, request: Request, context: Context): Observation;
  /** A request answered on arrival (400, 505 ...): no route, no context. */
  refused?(req: IncomingMessage, res: ServerResponse): void;
}

/** One exchange, as its observer follows it. */
export interface Observation {
  /** The route that took the request (its id and name). */
  routed(routeId: string, routeName: string): void;
  /**
   * An upstream call is about to be sent: the header fields to send with it (W3C `traceparent`),
   * replacing the request's, and what to call when the upstream's response head (or its failure)
   * arrives. Undefined when the call is not observed.
   */
  upstream(method: string, origin: string, path: string): UpstreamObservation | undefined;
  /** A filter of a chain starts; what it returns is called when the filter's answer settles. */
  filter(name: string): ((failed: boolean) => void) | undefined;
  /**
   * The exchange's response has closed (written whole, or the connection lost): told by the core
   * from the one 'close' listener it keeps on each response, so that an observer adds none.
   */
  closed?(res: ServerResponse): void;
}

export interface UpstreamObservation {
  readonly headers: readonly (readonly [string, string])[];
  /** The upstream answered with this status, or failed (undefined). */
  end(status: number | undefined): void;
}

/**
 * How many observers ask for observations (`watchExchanges`); while none does, every hook below
 * answers at once. Module state, read on the hot path as a plain number.
 */
let watching = 0;
/** How many of them want each filter's span (`filters`). */
let watchingFilters = 0;

// A root context whose exchange is observed keeps its observation in a slot every context has
// (`observationSlot`): a WeakMap keyed by the context cost about 0.57 µs more per request (decision
// 0111), a property added to the context changed its shape.

/**
 * Starts observing exchanges served with an observer (the server calls it once per observer it
 * installs); `filters` asks for each filter's hook too. Returns what stops it.
 */
export function watchExchanges(options: { filters?: boolean } = {}): () => void {
  watching++;
  if (options.filters) watchingFilters++;
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    watching--;
    if (options.filters) watchingFilters--;
  };
}

/** True while some observer watches exchanges: the hooks' callers test this before anything else. */
export function observing(): boolean {
  return watching > 0;
}

/** True while some observer wants each filter observed. */
export function observingFilters(): boolean {
  return watchingFilters > 0;
}

/** Keeps a root context's observation (the exchange adapter, once the context is made). */
export function observe(context: Context, observation: Observation): void {
  observationSlot.write(rootOf(context), observation);
}

/** The observation of the exchange this context belongs to, if it is observed. */
export function observationOf(context: Context): Observation | undefined {
  if (watching === 0) return undefined;
  return observationSlot.read(rootOf(context)) as Observation | undefined;
}

function rootOf(context: Context): Context {
  let at = context;
  while (at.parent !== undefined) at = at.parent;
  return at;
}
