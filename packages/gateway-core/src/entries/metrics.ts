/**
 * `@portico/gateway-core/metrics`: where a plugin (or the core) reports what it counts, without
 * knowing who collects it: `metricsOf(heap)` gives the gateway's `Metrics` (the server's, exposed to
 * Prometheus, or `NO_METRICS`). Resolve each series once when the object is created, count per
 * request; `observe` reports values already counted elsewhere when the metrics are scraped.
 */
export {
  type Counter,
  type Family,
  type Gauge,
  type Histogram,
  type HistogramDefinition,
  LATENCY_BUCKETS,
  type MetricDefinition,
  type Metrics,
  metricsOf,
  NO_METRICS,
  type Observer,
  STATUS_FAMILIES,
  statusFamilyIndex,
} from '../metrics/metrics.ts';
