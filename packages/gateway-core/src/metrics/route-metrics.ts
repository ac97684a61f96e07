import { failureStatus } from '../audit/access.ts';
import { Response } from '../http/message.ts';
import {
  type Counter,
  type Gauge,
  type Histogram,
  LATENCY_BUCKETS,
  type Metrics,
  STATUS_FAMILIES,
  statusFamilyIndex,
} from './metrics.ts';

/** A route's labels, as the incumbents name them: its name, its id (the file name), its router. */
const ROUTE_LABELS = ['name', 'route', 'router'] as const;

/** The route metrics, under the incumbents' names where they have one. */
export const ROUTE_METRICS = {
  requests: {
    name: 'ig_route_request_total',
    help: 'Requests the route has taken since it was loaded.',
    labels: ROUTE_LABELS,
  },
  active: {
    name: 'ig_route_request_active',
    help: 'Requests the route is processing now.',
    labels: ROUTE_LABELS,
  },
  errors: {
    name: 'ig_route_response_error_total',
    help: 'Requests whose handling failed (answered by the gateway with 5xx, 413 or 502/504).',
    labels: ROUTE_LABELS,
  },
  nulls: {
    name: 'ig_route_response_null_total',
    help: 'Requests no route of the router took and no default handler answered (404).',
    labels: ROUTE_LABELS,
  },
  statuses: {
    name: 'ig_route_response_status_total',
    help: 'Responses by status family (informational, successful, redirection, client_error, server_error, unknown).',
    labels: [...ROUTE_LABELS, 'family'],
  },
  duration: {
    name: 'portico_route_response_duration_seconds',
    help: 'Time from the route taking the request to its response head (or failure), in seconds.',
    labels: ROUTE_LABELS,
    buckets: LATENCY_BUCKETS,
  },
  loads: {
    name: 'portico_route_loads_total',
    help: 'Route files loaded, reloaded, failed to load, and removed, by router.',
    labels: ['router', 'outcome'],
  },
  deployed: {
    name: 'portico_router_deployed_routes',
    help: 'Routes a router serves now.',
    labels: ['router'],
    // Every worker serves the same routes.
    acrossProcesses: 'max',
  },
} as const;

/** What a route load came to, the `outcome` label of `portico_route_loads_total`. */
export type LoadOutcome = 'loaded' | 'reloaded' | 'failed' | 'removed';

/**
 * The series of one route (or a router's unrouted requests, as route `default`), resolved once
 * when the route loads: counting a request is then a few additions and one clock reading.
 */
export class RouteMeter {
  readonly #requests: Counter;
  readonly #active: Gauge;
  readonly #errors: Counter;
  readonly #nulls: Counter;
  readonly #statuses: Counter[];
  readonly #duration: Histogram;

  constructor(metrics: Metrics, name: string, id: string, router: string) {
    this.#requests = metrics.counter(ROUTE_METRICS.requests).labels(name, id, router);
    this.#active = metrics.gauge(ROUTE_METRICS.active).labels(name, id, router);
    this.#errors = metrics.counter(ROUTE_METRICS.errors).labels(name, id, router);
    this.#nulls = metrics.counter(ROUTE_METRICS.nulls).labels(name, id, router);
    const statuses = metrics.counter(ROUTE_METRICS.statuses);
    this.#statuses = STATUS_FAMILIES.map((family) => statuses.labels(name, id, router, family));
    this.#duration = metrics.histogram(ROUTE_METRICS.duration).labels(name, id, router);
  }

  /** A request taken: counted, and the time it was taken returned (for `settle`). */
  enter(): number {
    this.#requests.inc();
    this.#active.inc();
    return performance.now();
  }

  /** The request's answer (a response, or the failure the gateway will answer for). */
  settle(started: number, outcome: unknown): void {
    this.#active.dec();
    this.#duration.observe((performance.now() - started) / 1000);
    if (outcome instanceof Response) {
      this.#statuses[statusFamilyIndex(outcome.status)]!.inc();
    } else {
      this.#errors.inc();
      this.#statuses[statusFamilyIndex(failureStatus(outcome))]!.inc();
    }
  }

  /** A request no route took and no default handler answered: the router's 404. */
  unrouted(): void {
    this.#requests.inc();
    this.#nulls.inc();
    this.#statuses[4]!.inc();
  }

  /** Measures an answer: counted now, settled when it settles. */
  measure(answer: () => Promise<Response>): Promise<Response> {
    const started = this.enter();
    let promise: Promise<Response>;
    try {
      promise = answer();
    } catch (error) {
      promise = Promise.reject(error);
    }
    const settle = (outcome: unknown) => this.settle(started, outcome);
    promise.then(settle, settle);
    return promise;
  }
}
