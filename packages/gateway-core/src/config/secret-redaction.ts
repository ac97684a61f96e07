import { hiddenValue, typeName } from '../expression/coercion.ts';
import { writtenFromEnvironment, writtenInside } from './from-environment.ts';
import type { ParseContext } from './parse-context.ts';

/*
 * Values from the environment (an expression reading `env` or `system`, or a `&{token}`) are where
 * operators keep passwords: messages about such a setting describe it instead of quoting it.
 */

/** A setting whose value came from the environment: the text written there, and what it gave. */
interface FromEnvironment {
  written: string;
  value: unknown;
}

/**
 * The settings of one parse whose value came from the environment, by JSON path. Kept beside the
 * context rather than in it: the context is part of the plugin contract, this is the schemas' own
 * bookkeeping.
 */
const fromEnvironment = new WeakMap<ParseContext, Map<string, FromEnvironment>>();

/** Notes that the setting at `path` came from the environment; a token's note, made first, stays. */
export function noteFromEnvironment(ctx: ParseContext, path: string, written: string, value: unknown): void {
  let settings = fromEnvironment.get(ctx);
  if (settings === undefined) fromEnvironment.set(ctx, (settings = new Map()));
  if (!settings.has(path)) settings.set(path, { written, value });
}

/**
 * The text written for the setting at `path` when its value came from the environment (the token,
 * or the expression reading `env` or `system`): for code that passes the value on, so that what
 * reads it later describes it too, and for an expression a token completed, shown as written.
 */
export function writtenAt(ctx: ParseContext, path: string): string | undefined {
  return fromEnvironment.get(ctx)?.get(path)?.written;
}

/** `container[key]`, at `path`, noted when a token took it from the environment (tokens.ts). */
export function child(ctx: ParseContext, container: object, key: string, path: string): unknown {
  const value = (container as Record<string, unknown>)[key];
  const written = writtenFromEnvironment(container, key);
  if (written !== undefined) noteFromEnvironment(ctx, path, written, value);
  return value;
}

/**
 * A setting's value as a message shows it: quoted as written, unless it came from the environment
 * (an expression reading `env` or `system`, or a token), where operators keep passwords and secrets;
 * then described, so that a typo in a field does not print a secret into logs and API answers. For
 * a schema that writes its own messages: `${quoteSetting(ctx, path, value)} is not a header name`,
 * with the value at `path` as the schema was given it (or as its expression gave it).
 */
export function quoteSetting(ctx: ParseContext, path: string, value: unknown): string {
  const from = fromEnvironment.get(ctx)?.get(path);
  return from === undefined ? quoteValue(value) : described(from);
}

/**
 * `value` as a message shows it, for code reading configuration without a parse context (the heap):
 * quoted, unless a token at `container[key]`, where it was found, took it from the environment, or
 * it is an object or array holding such a value; then described, as quoteSetting describes it.
 */
export function quoteValue(value: unknown, container?: unknown, key?: string): string {
  const written = key === undefined ? undefined : writtenFromEnvironment(container, key);
  if (written !== undefined) return described({ written, value });
  // An object or array written whole would show the values its tokens took.
  const inside = writtenInside(value);
  return inside === undefined
    ? JSON.stringify(value)
    : `${typeName(value)} holding the value of ${inside} (not shown)`;
}

function described({ written, value }: FromEnvironment): string {
  return `the value of ${written} (${hiddenValue(value)}, not shown)`;
}

/**
 * A refinement's problem, unless it shows a value from the environment at or under `path` (its
 * text is the plugin's, which may quote anything it was given): then what was expected instead.
 */
export function withoutSecrets(
  ctx: ParseContext,
  path: string,
  at: string,
  problem: string,
  expected: string,
) {
  for (const [where, from] of fromEnvironment.get(ctx) ?? []) {
    const under = where === path || where.startsWith(`${path}.`) || where.startsWith(`${path}[`);
    const text = typeof from.value === 'object' || from.value === undefined ? '' : String(from.value);
    if (!under || text === '' || !problem.includes(text)) continue;
    return where === at
      ? `${described(from)} is not ${expected}`
      : `the problem is not shown: it names the value of ${from.written}, which comes from the environment`;
  }
  return problem;
}
