/** A JSON object (not null, not an array): what a configuration's `{...}` parses to. Imports nothing. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
