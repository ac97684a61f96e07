import { childPath } from '../config/parse-context.ts';
import { ErrorCode, PorticoError } from '../errors.ts';
import type { Logger } from '../logging.ts';
import { type Declaration, isCommentKey, type Where } from './declaration.ts';
import { located } from './errors.ts';

/*
 * The names a decorator may have (spec, Decorators rule 8): a decoration is a key of the object it
 * decorates, so a decorator named like a field would be read as that field.
 */

/** The decorators every configuration has without declaring them; declaring one of these names replaces it. */
export const DEFAULT_DECORATOR_NAMES: readonly string[] = ['audit', 'baseURI', 'capture', 'timer'];

/**
 * Field names a decorator may not take, with where the field is (spec, Decorators rule 8): a
 * decoration of that name would be read as the field instead.
 */
const RESERVED_FIELDS: ReadonlyMap<string, string> = new Map([
  ...['config', 'name', 'type'].map((field): [string, string] => [field, 'every heap object']),
  ...['auditService', 'baseURI', 'condition', 'globalDecorators', 'heap', 'handler', 'session'].map(
    (field): [string, string] => [field, 'routes'],
  ),
  ...['logSink', 'temporaryStorage'].map((field): [string, string] => [field, 'the configuration file']),
  ...['comment', 'comments'].map((field): [string, string] => [field, 'every object (comments)']),
]);

/**
 * What the spec's rule 8 says against a name for a decorator, or undefined: a reserved field name
 * or a comment key (which the heap refuses: it could never be used), or a purely alphanumeric name
 * (reserved for fields to come; the heap warns and accepts it, as real configurations use such
 * names). The default decorators' names are fine, since declaring one replaces it.
 */
export function decoratorNameProblem(name: string): string | undefined {
  return fieldClash(name) ?? alphanumericName(name);
}

/** A decorator name that can never work as a decoration: it is read as a field (or a comment) instead. */
export function fieldClash(name: string): string | undefined {
  if (DEFAULT_DECORATOR_NAMES.includes(name)) return undefined;
  const field = RESERVED_FIELDS.get(name);
  if (field !== undefined) return `the decorator name '${name}' is a field of ${field}`;
  if (isCommentKey(name))
    return `the decorator name '${name}' marks a comment (keys starting with '_', and $schema)`;
  return undefined;
}

/** A decorator name that is purely alphanumeric, which the spec reserves for fields to come. */
export function alphanumericName(name: string): string | undefined {
  if (DEFAULT_DECORATOR_NAMES.includes(name) || !/^[A-Za-z0-9]+$/.test(name)) return undefined;
  return `the decorator name '${name}' is purely alphanumeric; such names are reserved for fields`;
}

/**
 * Spec, Decorators rule 8, when a decorator is declared: a name that clashes with a field is
 * refused (it could never be used). A purely alphanumeric name, which the spec reserves, is only
 * warned about, and works: real configurations declare and use such decorators (`regCapture`), and
 * the incumbents accept them.
 */
export function declaredDecoratorNameError(
  declaration: Declaration,
  logger: Logger,
): PorticoError | undefined {
  const where = { file: declaration.file, jsonPath: childPath(declaration.jsonPath, 'name') };
  const alphanumeric = alphanumericName(declaration.name);
  if (alphanumeric !== undefined) {
    logger.warn(`${alphanumeric}; it works, but a dotted name (my.capture) will never clash with one`, {
      ...(where.file === undefined ? {} : { file: where.file }),
      jsonPath: where.jsonPath,
    });
  }
  const clash = fieldClash(declaration.name);
  return clash === undefined ? undefined : badDecoratorName(clash, declaration.name, where);
}

/** A decoration naming a decorator whose name clashes with a field, where the decoration is written. */
export function badDecoratorName(message: string, name: string, where: Where): PorticoError {
  return new PorticoError(ErrorCode.CONFIG, message, {
    ...located(where),
    expected: `a name with a '.' or '-', such as 'my.${name}', or one of ${DEFAULT_DECORATOR_NAMES.join(', ')}`,
  });
}
