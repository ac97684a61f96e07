/**
 * Whether a value read from JSON (configuration, a package.json) is an object with named fields: not
 * null, not an array. The one test the core uses before it reads such a value's fields; it imports
 * nothing, so any module may use it.
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
