import { markFromEnvironment, writtenFromEnvironment } from '../config/from-environment.ts';
import { Reference, type ReferenceKind } from '../config/reference.ts';
import { isPorticoError, type PorticoError } from '../errors.ts';
import { combine, problemsOf } from './errors.ts';

/**
 * Replaces, in place, every Reference inside a parsed configuration by the object it names, one after
 * the other in document order so that objects are created (and later destroyed) in a predictable
 * order. Only plain objects and arrays are walked: compiled expressions, durations and other values
 * the schemas produce are left alone.
 *
 * It stops at the first reference that fails, unless `collect` is set (`portico validate`): then every
 * reference is still resolved, each failure's problems are kept, and one error carrying all of them
 * is thrown at the end, so that a missing name or a broken inline object behind the first failure is
 * reported in the same run.
 */
export async function resolveReferences(
  value: unknown,
  resolve: (reference: Reference) => Promise<unknown>,
  collect = false,
): Promise<unknown> {
  if (!collect) return walk(value, resolve);
  const problems: PorticoError[] = [];
  let other: unknown;
  const resolved = await walk(value, async (reference) => {
    try {
      return await resolve(reference);
    } catch (error) {
      if (isPorticoError(error)) problems.push(...problemsOf(error));
      else other ??= error;
      // Left in place: the object is not created anyway.
      return reference;
    }
  });
  if (problems.length > 0) throw combine(unique(problems));
  if (other !== undefined) throw other;
  return resolved;
}

async function walk(value: unknown, resolve: (reference: Reference) => Promise<unknown>): Promise<unknown> {
  if (value instanceof Reference) return resolve(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const resolved = await walk(value[i], resolve);
      // Assigned only when changed: values passed through unparsed (s.any()) may be frozen.
      if (resolved !== value[i]) value[i] = resolved;
    }
  } else if (isPlainObject(value)) {
    for (const key of Object.keys(value)) {
      const resolved = await walk(value[key], resolve);
      if (resolved !== value[key]) value[key] = resolved;
    }
  }
  return value;
}

/** Each problem once: two references to one broken object report it once. */
function unique(problems: PorticoError[]): PorticoError[] {
  const seen = new Set<string>();
  return problems.filter((p) => !seen.has(p.toString()) && seen.add(p.toString()));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A reference to what a configuration writes at `container[key]` (a route's handler), at `jsonPath`:
 * a name a token took from the environment keeps its mark, so that the heap's messages describe it.
 */
export function referenceAt(
  container: object,
  key: string,
  kind: ReferenceKind,
  jsonPath: string,
  file: string | undefined,
): Reference {
  const value = (container as Record<string, unknown>)[key] as string | Record<string, unknown>;
  const reference = new Reference(kind, value, jsonPath, file);
  const written = writtenFromEnvironment(container, key);
  if (written !== undefined) markFromEnvironment(reference, 'value', written);
  return reference;
}
