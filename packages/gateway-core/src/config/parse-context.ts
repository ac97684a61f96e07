import { ErrorCode, isPorticoError, PorticoError, problemsOf } from '../errors.ts';
import type { Bindings } from '../expression/compiler.ts';
import type { ExpressionOrigin } from '../expression/expression.ts';
import type { Logger } from '../logging.ts';
import type { Reference } from './reference.ts';

export interface ParseContext {
  /** The configuration file, for error messages. */
  file?: string;
  /** Bindings for configuration-time expressions (`env`, `system` and properties are implicit). */
  bindings: Bindings;
  logger: Logger;
  /** Every problem found; parsing goes on after an error so that all of them are reported. */
  errors: PorticoError[];
  /** When present, every Reference made is added here, also when other settings fail. */
  references?: Reference[];
  /** What the evaluation warnings of its expressions name: the route, the heap object, the file. */
  origin?: Readonly<ExpressionOrigin>;
}

/** Marks a value that failed to parse; the error is already in the context. */
export const INVALID: unique symbol = Symbol('invalid');
export type Parsed<T> = T | typeof INVALID;

export function fail(ctx: ParseContext, path: string, message: string, expected: string): typeof INVALID {
  ctx.errors.push(new PorticoError(ErrorCode.CONFIG, message, { file: ctx.file, jsonPath: path, expected }));
  return INVALID;
}

/** Records a coded error at `path`: each of its problems, when it combines several (an expression's). */
export function record(ctx: ParseContext, error: unknown, path: string): typeof INVALID {
  if (!isPorticoError(error)) throw error;
  for (const problem of problemsOf(error))
    ctx.errors.push(problem.at({ ...(ctx.file === undefined ? {} : { file: ctx.file }), jsonPath: path }));
  return INVALID;
}

/** `$.a.b`, `$.a['odd key']`. */
export function childPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}
