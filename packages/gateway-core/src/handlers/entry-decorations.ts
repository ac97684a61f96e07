import { childPath } from '../config/parse-context.ts';
import { isPorticoError, type PorticoError } from '../errors.ts';
import { isCommentKey } from '../heap/declaration.ts';
import { objectPath } from '../heap/decorations.ts';
import { combine, locate, problemsOf } from '../heap/errors.ts';
import type { Heap } from '../heap/heap.ts';
import type { Handler } from '../types.ts';

/**
 * The top-level decorations of a file that declares a handler, a route file or config.json: every
 * key that is not one of the file's `fields` (nor a comment) and names a decorator in scope, in the
 * file's order. A key naming nothing in scope that looks like a misspelt field or decorator
 * (`condtion`, `captur`) is a problem; any other is ignored with a warning, as the incumbents ignore
 * it. Found before the handler is created, so that they are reported even when it fails.
 */
export function entryDecorations(
  heap: Heap,
  json: Record<string, unknown>,
  fields: ReadonlySet<string>,
  file: string | undefined,
  problems: PorticoError[],
): [string, unknown][] {
  return Object.entries(json).filter(([name]) => {
    if (fields.has(name) || isCommentKey(name)) return false;
    if (heap.has(name)) return true;
    const problem = heap.unknownDecoration(name, { file, jsonPath: childPath('$', name) }, fields);
    if (problem !== undefined) problems.push(problem);
    return false;
  });
}

/**
 * A file's handler, decorated by its top-level decorations: each wraps the result of the one before,
 * after the handler's own local and global decorations, and decorates this use of the handler only
 * (not other uses of the same object). Every decoration is tried; the problems found, with those the
 * caller found before (`problems`, its unknown decorations), are thrown as one error. When the
 * handler itself cannot be created, its problems are thrown with those found before.
 */
export async function decoratedEntryHandler(
  heap: Heap,
  resolveHandler: () => Promise<Handler>,
  decorations: readonly [string, unknown][],
  entry: {
    /** The name decorators see (`DecorationInfo.name`): the route's name, `_main` for config.json. */
    name: string;
    /** What is decorated, in words, for a decorator's failure (`route 'api'`). */
    label: string;
    file: string | undefined;
    /** config.json's main handler: where every request enters (`DecorationInfo.entryPoint`). */
    entryPoint?: boolean;
  },
  problems: PorticoError[],
): Promise<Handler> {
  let handler: Handler;
  try {
    handler = await resolveHandler();
  } catch (error) {
    const found = isPorticoError(error) ? problemsOf(error) : [];
    throw found.length === 0 || problems.length === 0 ? error : combine([...found, ...problems]);
  }
  for (const [decoratorName, value] of decorations) {
    const where = { file: entry.file, jsonPath: childPath('$', decoratorName) };
    try {
      const found = await heap.decorator(decoratorName, value, where);
      handler = (await found.decorator.decorate(handler, found.value, {
        name: entry.name,
        kind: 'handler',
        heap,
        objectPath: objectPath(entry.name, entry.file),
        ...where,
        ...(entry.entryPoint ? { entryPoint: true } : {}),
      })) as Handler;
    } catch (error) {
      problems.push(
        ...problemsOf(
          locate(
            error,
            where,
            `decorator '${decoratorName}' cannot decorate ${entry.label}`,
            'a decoration value the decorator accepts',
          ),
        ),
      );
    }
  }
  if (problems.length > 0) throw combine(problems);
  return handler;
}
