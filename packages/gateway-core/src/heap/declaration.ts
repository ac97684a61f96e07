import { isCommentKey } from '../config/comment-keys.ts';
import { keepMarks } from '../config/from-environment.ts';
import { likelyMeant } from '../config/near-names.ts';
import { childPath } from '../config/parse-context.ts';
import { quoteValue } from '../config/secret-redaction.ts';
import { ErrorCode, PorticoError } from '../errors.ts';
import { isRecord } from '../is-record.ts';

/** A decoration as written: the decorator's heap name and the value handed to it. */
export type Decoration = readonly [name: string, value: unknown];

/** One heap object as declared, checked for shape; its config is checked when it is created. */
export interface Declaration {
  /** The declared name, or the generated one of an inline declaration. */
  readonly name: string;
  readonly type: string;
  readonly config: Record<string, unknown>;
  /** Every other top-level key, in declaration order. */
  readonly decorations: readonly Decoration[];
  readonly logSink?: string;
  readonly temporaryStorage?: string;
  readonly file: string | undefined;
  /** Where the declaration is: `$.heap[2]`, or the path of an inline declaration. */
  readonly jsonPath: string;
}

export interface Where {
  file: string | undefined;
  jsonPath: string;
}

/** What reading one declaration gives: the name (when readable), the declaration, or the problems. */
export interface DeclarationResult {
  jsonPath: string;
  name: string | undefined;
  declaration: Declaration | undefined;
  errors: PorticoError[];
}

const FIELDS = new Set(['name', 'type', 'config', 'comment', 'comments', 'logSink', 'temporaryStorage']);
/** The fields a misspelt key is checked against. */
const DECLARATION_FIELDS = ['name', 'type', 'config'] as const;

export { isCommentKey } from '../config/comment-keys.ts';

/**
 * Reads a heap: an array of declarations, or the older `{"objects": [...]}` form. Every problem is
 * reported, each with its file and JSON path.
 */
export function readHeap(
  value: unknown,
  where: Where,
): { results: DeclarationResult[]; errors: PorticoError[] } {
  let list = value;
  let path = where.jsonPath;
  if (isRecord(value) && Array.isArray(value.objects)) {
    list = value.objects;
    path = `${path}.objects`;
  }
  if (!Array.isArray(list)) {
    const error = problem(where.file, where.jsonPath, 'the heap is not an array', 'an array of declarations');
    return { results: [], errors: [error] };
  }
  const results = list.map((item, i) =>
    readDeclaration(item, { file: where.file, jsonPath: `${path}[${i}]` }, undefined, [list, String(i)]),
  );
  return { results, errors: results.flatMap((result) => result.errors) };
}

/**
 * Reads one declaration. An inline declaration (`inlineName` given) may leave out its name; it then
 * takes the generated one. `found` is where the value was found (the heap and its index), so that
 * a value a token took from the environment is described rather than quoted.
 */
export function readDeclaration(
  value: unknown,
  where: Where,
  inlineName?: (type: string) => string,
  found?: readonly [container: unknown, key: string],
): DeclarationResult {
  const { file, jsonPath } = where;
  if (!isRecord(value)) {
    const shown = quoteValue(value, found?.[0], found?.[1]);
    const error = problem(file, jsonPath, `${shown} is not a declaration`, 'an object');
    return { jsonPath, name: undefined, declaration: undefined, errors: [error] };
  }
  const errors: PorticoError[] = [];
  const at = (key: string) => childPath(jsonPath, key);
  const { name, type, config = {}, logSink, temporaryStorage } = value;
  // A key that looks like a misspelt field the declaration lacks (`tpye`, `confg`): named in the
  // problem of the missing field, or reported itself.
  const misspelt = misspeltFields(value);
  const hint = (field: string) => {
    const key = misspelt.get(field);
    if (key === undefined) return '';
    misspelt.delete(field);
    return `; did you mean '${field}' for '${key}'?`;
  };
  const named = typeof name === 'string' && name !== '';
  if (!named && (name !== undefined || inlineName === undefined || misspelt.has('name'))) {
    errors.push(
      problem(file, at('name'), `the name is missing or empty${hint('name')}`, 'a non-empty string'),
    );
  }
  const typed = typeof type === 'string' && type !== '';
  if (!typed)
    errors.push(problem(file, at('type'), `the type is missing or empty${hint('type')}`, 'a type name'));
  if (!isRecord(config)) errors.push(problem(file, at('config'), 'the config is not an object', 'an object'));
  // Otherwise a valid declaration reports them with its decorations (they name no decorator).
  if (errors.length > 0) {
    for (const [field, key] of misspelt) {
      errors.push(
        new PorticoError(
          ErrorCode.REFERENCE,
          `unknown decorator or field '${key}'; did you mean '${field}'?`,
          {
            ...(file === undefined ? {} : { file }),
            jsonPath: at(key),
            expected: `'${field}', or the name of a decorator heap object`,
          },
        ),
      );
    }
  }
  for (const [key, ref] of [
    ['logSink', logSink],
    ['temporaryStorage', temporaryStorage],
  ] as const) {
    if (ref !== undefined && (typeof ref !== 'string' || ref === '')) {
      errors.push(problem(file, at(key), `${key} must name a heap object`, 'a heap object name'));
    }
  }
  const declaredName = named ? name : typed && inlineName ? inlineName(type) : undefined;
  if (errors.length > 0 || declaredName === undefined) {
    return { jsonPath, name: declaredName, declaration: undefined, errors };
  }
  const declaration: Declaration = {
    name: declaredName,
    type: type as string,
    config: config as Record<string, unknown>,
    decorations: Object.entries(value).filter(([key]) => !FIELDS.has(key) && !isCommentKey(key)),
    ...(logSink === undefined ? {} : { logSink: logSink as string }),
    ...(temporaryStorage === undefined ? {} : { temporaryStorage: temporaryStorage as string }),
    file,
    jsonPath,
  };
  // A type a token took from the environment stays marked: the heap's messages describe it.
  keepMarks(value, declaration);
  return { jsonPath, name: declaredName, declaration, errors };
}

/**
 * The fields a declaration lacks that one of its other keys is likely a misspelling of (`tpye` for
 * `type`), with that key; the same rule as for a decoration key naming nothing (`likelyMeant`).
 */
function misspeltFields(value: Record<string, unknown>): Map<string, string> {
  const missing = DECLARATION_FIELDS.filter((field) => value[field] === undefined);
  const found = new Map<string, string>();
  if (missing.length === 0) return found;
  for (const key of Object.keys(value)) {
    if (FIELDS.has(key) || isCommentKey(key)) continue;
    const meant = likelyMeant(key, missing);
    if (meant !== undefined && !found.has(meant)) found.set(meant, key);
  }
  return found;
}

/** A problem at `jsonPath` (which the error's details carry; the message does not repeat it). */
export function problem(
  file: string | undefined,
  jsonPath: string,
  message: string,
  expected: string,
): PorticoError {
  return new PorticoError(ErrorCode.CONFIG, message, {
    ...(file === undefined ? {} : { file }),
    jsonPath,
    expected,
  });
}
