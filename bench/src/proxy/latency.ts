/** What every fixed-rate generator reports. */
export interface LatencyFigures {
  achievedRate: number;
  latencyMs: { p50: number; p99: number; p99_9: number; max: number };
  errors: number;
  non2xx: number;
  timeouts: number;
  generatorCpuPercent: number;
}

/** The figures alone, from a generator's fuller result. */
export function latencyFigures(result: LatencyFigures): LatencyFigures {
  const { achievedRate, latencyMs, errors, non2xx, timeouts, generatorCpuPercent } = result;
  return { achievedRate, latencyMs, errors, non2xx, timeouts, generatorCpuPercent };
}
