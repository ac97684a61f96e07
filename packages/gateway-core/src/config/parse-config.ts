import { PorticoError } from '../errors.ts';
import type { ExpressionOrigin } from '../expression/expression.ts';
import { consoleLogger, type Logger } from '../logging.ts';
import { INVALID, type ParseContext } from './parse-context.ts';
import type { Reference } from './reference.ts';
import type { Schema } from './schema.ts';
import { writtenAt } from './secret-redaction.ts';

export interface ParseOptions {
  file?: string;
  /** JSON path of the value inside its file; `$` for a whole file. */
  jsonPath?: string;
  /** Extra configuration-time bindings: the heap's `properties` (also reachable one by one). */
  properties?: Record<string, unknown>;
  logger?: Logger;
  /**
   * When given, every Reference the schema reads is added here, also when other settings fail: for
   * `portico validate`, which checks the objects they name although their referrer cannot be made.
   */
  references?: Reference[];
  /** The route the configuration belongs to, named (with `file`) by its expressions' warnings. */
  route?: string;
  /** The heap object the configuration belongs to, named likewise. */
  object?: string;
}

/**
 * Parses configuration against a schema, evaluating configuration-time expressions. Throws one
 * PorticoError for the first problem, with every problem found in `details.cause` as `problems`.
 */
export function parseConfig<T>(schema: Schema<T>, value: unknown, options: ParseOptions = {}): T {
  return parseConfigNoting(schema, value, options).value;
}

/** @internal parseConfig, also giving checkConfig's `writtenAt` (for the heaplet context). */
export function parseConfigNoting<T>(
  schema: Schema<T>,
  value: unknown,
  options: ParseOptions = {},
): { value: T; writtenAt: (path: string) => string | undefined } {
  const { errors, value: parsed, writtenAt } = checkConfig(schema, value, options);
  if (errors.length > 0) {
    const [first] = errors;
    throw new PorticoError(
      first!.code,
      errors.length === 1 ? first!.message : `${first!.message} (and ${errors.length - 1} more)`,
      {
        ...first!.details,
        cause: errors,
      },
    );
  }
  return { value: parsed as T, writtenAt };
}

/**
 * Like parseConfig, but returns every problem instead of throwing (for `portico validate`), and
 * `writtenAt`: the text written for the setting at a JSON path when its value came from the
 * environment (a `&{token}`, an expression reading `env` or `system`), else undefined.
 */
export function checkConfig<T>(
  schema: Schema<T>,
  value: unknown,
  options: ParseOptions = {},
): { value: T | undefined; errors: PorticoError[]; writtenAt: (path: string) => string | undefined } {
  const properties = options.properties ?? {};
  const ctx: ParseContext = {
    bindings: { ...properties, properties },
    logger: options.logger ?? consoleLogger,
    errors: [],
    ...(options.file === undefined ? {} : { file: options.file }),
    ...(options.references === undefined ? {} : { references: options.references }),
  };
  const origin = originOf(options);
  if (origin !== undefined) ctx.origin = origin;
  const parsed = schema.parse(value, options.jsonPath ?? '$', ctx);
  return {
    value: parsed === INVALID ? undefined : parsed,
    errors: ctx.errors,
    writtenAt: (path) => writtenAt(ctx, path),
  };
}

/** The route, heap object and file the options name; undefined when they name none. */
function originOf({ route, object, file }: ParseOptions): ExpressionOrigin | undefined {
  if (route === undefined && object === undefined && file === undefined) return undefined;
  return {
    ...(route === undefined ? {} : { route }),
    ...(object === undefined ? {} : { object }),
    ...(file === undefined ? {} : { file }),
  };
}

// Objects of these classes cross package boundaries (plugins make and read them): one identity for
