import { Reference } from '../config/schema.ts';

/**
 * Replaces, in place, every Reference inside a parsed configuration by the object it names, one after
 * the other in document order so that objects are created (and later destroyed) in a predictable
 * order. Only plain objects and arrays are walked: compiled expressions, durations and other values
 * the schemas produce are left alone.
 */
export async function resolveReferences(
  value: unknown,
  resolve: (reference: Reference) => Promise<unknown>,
): Promise<unknown> {
  if (value instanceof Reference) return resolve(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const resolved = await resolveReferences(value[i], resolve);
      // Assigned only when changed: values passed through unparsed (s.any()) may be frozen.
      if (resolved !== value[i]) value[i] = resolved;
    }
  } else if (isPlainObject(value)) {
    for (const key of Object.keys(value)) {
      const resolved = await resolveReferences(value[key], resolve);
      if (resolved !== value[key]) value[key] = resolved;
    }
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
