/** A reading of time in microseconds. Only differences between readings matter. */
export type Clock = () => number;

/** Monotonic microseconds since the process started: never goes back when the wall clock is set. */
export const monotonicClock: Clock = () => Math.floor(performance.now() * 1000);

/** A clock that moves only when told to, for deterministic tests and simulations. */
export interface ManualClock {
  (): number;
  /** Moves the clock forward by a number of microseconds. */
  advance(micros: number): void;
}

export function manualClock(startMicros = 1_000_000): ManualClock {
  let now = startMicros;
  const clock = (() => now) as ManualClock;
  clock.advance = (micros: number) => {
    now += micros;
  };
  return clock;
}
