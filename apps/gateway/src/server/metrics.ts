import { createRequire } from 'node:module';
import type {
  Counter,
  Family,
  Gauge,
  Histogram,
  HistogramDefinition,
  MetricDefinition,
  Metrics,
  Observer,
} from '@portico/gateway-core/metrics';
import type { Registry } from 'prom-client';

/** A metric as prom-client's registry reads it (`get()`) and gives it as JSON, to be aggregated. */
export interface MetricJson {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: { value: number; labels: Record<string, string | number>; metricName?: string }[];
}

/** What `/metrics/prometheus` answers with: the text format, version 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type PromClient = typeof import('prom-client');

/** prom-client, loaded when metrics are on (admin.json `metrics.enabled`, the default). */
export async function loadPromClient(): Promise<PromClient> {
  const loaded = (await import('prom-client')) as PromClient & { default?: PromClient };
  return loaded.default ?? loaded;
}

/**
 * The metrics of one process, kept by the server: what the gateway's routes and plugins count
 * (`Metrics`, the core's interface), prom-client's process metrics, in one prom-client registry.
 *
 * The series the gateway counts are plain numbers in objects resolved once (`labels`), not
 * prom-client's metric objects: those hash their label values on every `inc` and `observe`. They are
 * given to the registry as metrics of its own shape (`get()`), read only when scraped.
 */
export class ServerMetrics implements Metrics {
  readonly enabled = true;
  readonly #gcDurations: boolean;
  readonly #families = new Map<string, SeriesFamily<Cell | HistogramCell>>();
  readonly #observed = new Map<string, ObservedMetric>();
  /** The registry, once prom-client is loaded (`start`). */
  #registry: Registry | undefined;
  #starting: Promise<Registry> | undefined;

  /** `gcDurations`: prom-client's `nodejs_gc_duration_seconds` too (admin.json `metrics.gcDurations`). */
  constructor(options: { gcDurations?: boolean } = {}) {
    this.#gcDurations = options.gcDurations ?? false;
  }

  /**
   * Loads prom-client (80-150 ms of a start on a busy machine: not on the way to listening), makes
   * the registry, starts its process metrics and registers what was counted so far. The server calls
   * it once it listens; a scrape before that waits for it.
   */
  start(): Promise<Registry> {
    this.#starting ??= loadPromClient().then((client) => {
      const registry = new client.Registry();
      collectProcessMetrics(client, registry, this.#gcDurations);
      for (const metric of [...this.#families.values(), ...this.#observed.values()])
        registry.registerMetric(metric as never);
      this.#registry = registry;
      return registry;
    });
    return this.#starting;
  }

  counter(definition: MetricDefinition): Family<Counter> {
    return this.#family(
      definition,
      'counter',
      () => new SeriesFamily<Cell | HistogramCell>(definition, 'counter', () => new Cell()),
    );
  }

  gauge(definition: MetricDefinition): Family<Gauge> {
    return this.#family(
      definition,
      'gauge',
      () => new SeriesFamily<Cell | HistogramCell>(definition, 'gauge', () => new Cell()),
    );
  }

  histogram(definition: HistogramDefinition): Family<Histogram> {
    const bounds = Float64Array.from(definition.buckets);
    return this.#family(
      definition,
      'histogram',
      () => new SeriesFamily<Cell | HistogramCell>(definition, 'histogram', () => new HistogramCell(bounds)),
    );
  }

  observe(
    definition: MetricDefinition & { readonly type: 'counter' | 'gauge' },
    observer: Observer,
  ): () => void {
    let metric = this.#observed.get(definition.name);
    if (metric === undefined) {
      this.#checkFree(definition.name, this.#families);
      metric = new ObservedMetric(definition);
      this.#observed.set(definition.name, metric);
      this.#registry?.registerMetric(metric as never);
    } else {
      sameDefinition(metric.definition, definition, metric.type, definition.type);
    }
    const observers = metric.observers;
    observers.add(observer);
    return () => observers.delete(observer);
  }

  /** This process's metrics in the text format. */
  async text(): Promise<string> {
    return (await this.start()).metrics();
  }

  /** This process's metrics as prom-client's JSON, which the primary process aggregates. */
  async json(): Promise<MetricJson[]> {
    return (await (await this.start()).getMetricsAsJSON()) as unknown as MetricJson[];
  }

  #family<T>(
    definition: MetricDefinition,
    type: MetricType,
    make: () => SeriesFamily<Cell | HistogramCell>,
  ): Family<T> {
    const found = this.#families.get(definition.name);
    if (found !== undefined) {
      sameDefinition(found.definition, definition, found.type, type);
      return found as unknown as Family<T>;
    }
    this.#checkFree(definition.name, this.#observed);
    const family = make();
    this.#families.set(definition.name, family);
    this.#registry?.registerMetric(family as never);
    return family as unknown as Family<T>;
  }

  /** A name is one metric's: a counter or gauge of ours, or observed, never both (prom-client's are `process_`, `nodejs_`). */
  #checkFree(name: string, others: ReadonlyMap<string, unknown>): void {
    if (others.has(name)) throw new Error(`the metric ${name} is already defined otherwise`);
  }
}

/**
 * prom-client's default metrics, its GC duration histogram only when asked for. That one keeps a
 * `PerformanceObserver` on every collection, which costs a plain route a few per cent of its
 * throughput (bench/README.md, "metrics"); the others are read when scraped, or kept by a
 * timer (the event-loop delay). prom-client has no option to leave one out, so each of its default
 * metrics is started by its own module (`lib/metrics/<name>`, the names it lists), as
 * `collectDefaultMetrics` does.
 */
function collectProcessMetrics(client: PromClient, registry: Registry, gcDurations: boolean): void {
  const load = createRequire(import.meta.url);
  const config = { register: registry, eventLoopMonitoringPrecision: DEFAULT_METRICS_PRECISION_MS };
  for (const name of client.collectDefaultMetrics.metricsList) {
    if (name === 'gc' && !gcDurations) continue;
    const start = load(`prom-client/lib/metrics/${name}`) as (into: Registry, settings: object) => void;
    start(registry, config);
  }
}

/** The event-loop delay monitor's resolution, prom-client's default. */
const DEFAULT_METRICS_PRECISION_MS = 10;

type MetricType = 'counter' | 'gauge' | 'histogram';

/** A metric asked for again must be asked for as it was first: same type, same labels. */
function sameDefinition(
  first: MetricDefinition,
  again: MetricDefinition,
  firstType: MetricType,
  againType: MetricType,
): void {
  if (firstType !== againType || first.labels.join('\0') !== again.labels.join('\0'))
    throw new Error(
      `the metric ${first.name} is a ${firstType} labelled (${first.labels.join(', ')}), not a ${againType} labelled (${again.labels.join(', ')})`,
    );
}

/** One series of a counter or gauge. */
class Cell implements Counter, Gauge {
  value = 0;
  inc(amount = 1): void {
    this.value += amount;
  }
  dec(amount = 1): void {
    this.value -= amount;
  }
  set(value: number): void {
    this.value = value;
  }
}

/** One series of a histogram: a count per bucket (not cumulated: `le` sums them when scraped). */
class HistogramCell implements Histogram {
  readonly bounds: Float64Array;
  /** One more than the bounds: the last counts what is above them all (`+Inf`). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(bounds: Float64Array) {
    this.bounds = bounds;
    this.counts = new Float64Array(bounds.length + 1);
  }
  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

/**
 * A metric's series by label values, which prom-client's registry reads as one of its metrics
 * (`get()`, the shape its own metrics have).
 */
class SeriesFamily<C extends Cell | HistogramCell> {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  readonly aggregator: 'sum' | 'max';
  readonly definition: MetricDefinition;
  readonly #series = new Map<string, { labels: Record<string, string>; cell: C }>();
  readonly #make: () => C;

  constructor(definition: MetricDefinition, type: MetricType, make: () => C) {
    this.name = definition.name;
    this.help = definition.help;
    this.type = type;
    this.aggregator = definition.acrossProcesses ?? 'sum';
    this.definition = definition;
    this.#make = make;
  }

  labels(...values: string[]): C {
    const names = this.definition.labels;
    if (values.length !== names.length)
      throw new Error(`the metric ${this.name} takes ${names.length} label values, not ${values.length}`);
    const key = values.join('\0');
    const found = this.#series.get(key);
    if (found !== undefined) return found.cell;
    const labels: Record<string, string> = {};
    for (const [i, name] of names.entries()) labels[name] = values[i]!;
    const cell = this.#make();
    this.#series.set(key, { labels, cell });
    return cell;
  }

  get(): MetricJson {
    const values: MetricJson['values'] = [];
    for (const { labels, cell } of this.#series.values()) {
      if (cell instanceof Cell) {
        values.push({ value: cell.value, labels });
        continue;
      }
      let cumulated = 0;
      for (let i = 0; i < cell.counts.length; i++) {
        cumulated += cell.counts[i]!;
        const le = i < cell.bounds.length ? cell.bounds[i]! : '+Inf';
        values.push({ metricName: `${this.name}_bucket`, value: cumulated, labels: { ...labels, le } });
      }
      values.push({ metricName: `${this.name}_sum`, value: cell.sum, labels });
      values.push({ metricName: `${this.name}_count`, value: cell.count, labels });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/** A counter or gauge whose observers report its series when scraped. */
class ObservedMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge';
  readonly aggregator: 'sum' | 'max';
  readonly definition: MetricDefinition;
  readonly observers = new Set<Observer>();

  constructor(definition: MetricDefinition & { readonly type: 'counter' | 'gauge' }) {
    this.name = definition.name;
    this.help = definition.help;
    this.type = definition.type;
    this.aggregator = definition.acrossProcesses ?? 'sum';
    this.definition = definition;
  }

  get(): MetricJson {
    const names = this.definition.labels;
    // Two observers reporting one series (two pools of one origin) are summed: a series is listed once.
    const series = new Map<string, { value: number; labels: Record<string, string> }>();
    const emit = (value: number, ...labelValues: string[]) => {
      const key = labelValues.join('\0');
      const found = series.get(key);
      if (found !== undefined) {
        found.value += value;
        return;
      }
      const labels: Record<string, string> = {};
      for (const [i, name] of names.entries()) labels[name] = labelValues[i] ?? '';
      series.set(key, { value, labels });
    };
    for (const observer of this.observers) {
      try {
        observer(emit);
      } catch {
        // An observer that fails leaves its series out of this scrape; the others are reported.
      }
    }
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [...series.values()],
    };
  }
}
