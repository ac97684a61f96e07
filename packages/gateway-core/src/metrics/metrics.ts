import type { HeapView } from '../heap/heap-view.ts';

/**
 * A metric: its name as scraped, what it counts, and the names of its labels. Label values must be
 * bounded (a route's name, a status class, a configured origin): never a raw path or a client's
 * value, each distinct value making a series of its own.
 */
export interface MetricDefinition {
  readonly name: string;
  readonly help: string;
  readonly labels: readonly string[];
  /**
   * How the values of several processes of one instance (`--workers N`) combine into one: summed
   * (the default: requests, connections), or the largest (what each process holds the same of, such
   * as the routes deployed).
   */
  readonly acrossProcesses?: 'sum' | 'max';
}

/** A histogram: its bucket upper bounds, ascending (the `+Inf` bucket is implied). */
export interface HistogramDefinition extends MetricDefinition {
  readonly buckets: readonly number[];
}

/** One series of a counter: its label values were given once, when it was resolved. */
export interface Counter {
  inc(amount?: number): void;
}

/** One series of a gauge. */
export interface Gauge {
  inc(amount?: number): void;
  dec(amount?: number): void;
  set(value: number): void;
}

/** One series of a histogram. */
export interface Histogram {
  observe(value: number): void;
}

/** A metric's series by label values, resolved once (at load time), then kept by whoever counts. */
export interface Family<T> {
  /** The series of these label values, in the order of the definition's labels. */
  labels(...values: string[]): T;
}

/**
 * Reports a value per series when the metrics are scraped, for what is already counted elsewhere (a
 * queue's depth, a pool's connections): `emit(value, ...labelValues)` once per series.
 */
export type Observer = (emit: (value: number, ...labelValues: string[]) => void) => void;

/**
 * Where the core and plugins report what they count, without knowing who collects it (the server
 * exposes it to Prometheus). Asking for a metric already defined by that name gives the same one,
 * so each route or object may ask for it as it loads; it must be asked with the same labels.
 *
 * Counting must cost next to nothing on the request path: resolve each series once (`labels`) when
 * the object is created, then call `inc` or `observe` per request.
 */
export interface Metrics {
  /** False when nothing collects: a caller may then skip measuring (reading a clock) at all. */
  readonly enabled: boolean;
  counter(definition: MetricDefinition): Family<Counter>;
  gauge(definition: MetricDefinition): Family<Gauge>;
  histogram(definition: HistogramDefinition): Family<Histogram>;
  /**
   * A counter or gauge whose values `observer` reports when scraped; a metric may have several
   * observers (one per object), whose series are reported together. Returns what removes it
   * (call it when the object is destroyed).
   */
  observe(
    definition: MetricDefinition & { readonly type: 'counter' | 'gauge' },
    observer: Observer,
  ): () => void;
}

const NO_SERIES: Counter & Gauge & Histogram = Object.freeze({
  inc() {},
  dec() {},
  set() {},
  observe() {},
});
const NO_FAMILY: Family<Counter & Gauge & Histogram> = Object.freeze({ labels: () => NO_SERIES });
const NOTHING_TO_REMOVE = () => {};

/** Metrics that collect nothing: what a gateway has unless its server collects them. */
export const NO_METRICS: Metrics = Object.freeze({
  enabled: false,
  counter: () => NO_FAMILY,
  gauge: () => NO_FAMILY,
  histogram: () => NO_FAMILY,
  observe: () => NOTHING_TO_REMOVE,
});

const METRICS_KEY = '@portico/gateway-core:metrics';

/**
 * The metrics of the gateway this heap belongs to: the ones its server gave it
 * (`createGateway({ metrics })`), else `NO_METRICS`.
 */
export function metricsOf(heap: Pick<HeapView, 'shared'>): Metrics {
  return heap.shared<Metrics>(METRICS_KEY, () => NO_METRICS);
}

/** Gives a gateway's heaps their metrics: called once, before anything asks for them. */
export function provideMetrics(heap: Pick<HeapView, 'shared'>, metrics: Metrics): void {
  heap.shared<Metrics>(METRICS_KEY, () => metrics);
}

/** Seconds, for latency histograms: from half a millisecond to a minute. */
export const LATENCY_BUCKETS: readonly number[] = Object.freeze([
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
]);

/**
 * The incumbents' status families (the `family` label of `ig_route_response_status_total`), by the
 * status's first digit: index 0 for a status outside 100-599.
 */
export const STATUS_FAMILIES: readonly string[] = Object.freeze([
  'unknown',
  'informational',
  'successful',
  'redirection',
  'client_error',
  'server_error',
]);

/** The index in `STATUS_FAMILIES` of a status. */
export function statusFamilyIndex(status: number): number {
  return status >= 100 && status < 600 ? (status / 100) | 0 : 0;
}
