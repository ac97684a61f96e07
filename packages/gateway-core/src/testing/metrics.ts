import type { Counter, Gauge, Histogram, Metrics, Observer } from '../metrics/metrics.ts';

/**
 * Metrics kept in plain maps, for a plugin's tests: `value(name, ...labelValues)` reads a counter or
 * gauge (an observed one is read from its observers then), `observations(name, ...labelValues)` a
 * histogram's values, and `resolved` counts the series asked for (to check that counting a request
 * resolves none).
 */
export function recordingMetrics() {
  const values = new Map<string, number>();
  const observed = new Map<string, Set<Observer>>();
  const histograms = new Map<string, number[]>();
  const key = (name: string, labelValues: readonly string[]) => `${name}{${labelValues.join('|')}}`;
  let resolved = 0;
  const cell = (name: string, labelValues: string[]): Counter & Gauge => {
    resolved++;
    const at = key(name, labelValues);
    const add = (n: number) => void values.set(at, (values.get(at) ?? 0) + n);
    return { inc: (n = 1) => add(n), dec: (n = 1) => add(-n), set: (n) => void values.set(at, n) };
  };
  const metrics: Metrics = {
    enabled: true,
    counter: (definition) => ({ labels: (...labelValues) => cell(definition.name, labelValues) }),
    gauge: (definition) => ({ labels: (...labelValues) => cell(definition.name, labelValues) }),
    histogram: (definition) => ({
      labels: (...labelValues): Histogram => {
        resolved++;
        const at = key(definition.name, labelValues);
        return { observe: (v) => void histograms.set(at, [...(histograms.get(at) ?? []), v]) };
      },
    }),
    observe: (definition, observer) => {
      const observers =
        observed.get(definition.name) ?? observed.set(definition.name, new Set()).get(definition.name)!;
      observers.add(observer);
      return () => observers.delete(observer);
    },
  };
  return {
    metrics,
    value(name: string, ...labelValues: string[]): number | undefined {
      const observers = observed.get(name);
      if (observers === undefined) return values.get(key(name, labelValues));
      let found: number | undefined;
      const wanted = key(name, labelValues);
      for (const observer of observers)
        observer((value, ...emitted) => {
          if (key(name, emitted) === wanted) found = (found ?? 0) + value;
        });
      return found;
    },
    observations: (name: string, ...labelValues: string[]) => histograms.get(key(name, labelValues)) ?? [],
    /** Whether `name` has observers now (they are removed when their object is destroyed). */
    isObserved: (name: string) => (observed.get(name)?.size ?? 0) > 0,
    get resolved() {
      return resolved;
    },
  };
}
