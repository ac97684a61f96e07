/**
 * For tests: epoch nanoseconds of a `performance.now()` reading as `JsonBytes.epochNanos` writes
 * them, made as a string (the milliseconds, then six digits of nanoseconds past them).
 */
export function epochNanos(at: number): string {
  const epochMillis = performance.timeOrigin + at;
  const millis = Math.floor(epochMillis);
  return `${millis}${String(Math.floor((epochMillis - millis) * 1e6)).padStart(6, '0')}`;
}
