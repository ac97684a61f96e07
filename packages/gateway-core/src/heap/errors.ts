import { combineProblems, ErrorCode, isPorticoError, PorticoError, problemsOf } from '../errors.ts';
import type { Where } from './declaration.ts';

export { combineProblems as combine, problemsOf } from '../errors.ts';

/** Where a reference is written, when known. */
export interface Site {
  file: string | undefined;
  jsonPath: string | undefined;
  /** The reference written there, which may carry the mark of a name from the environment. */
  reference?: object;
}

/**
 * Makes what a heaplet or decorator threw point at the declaration it came from: a PorticoError that
 * does not say where it is takes the declaration's file and path; anything else becomes a CONFIG
 * error naming the object, with the original as its cause.
 */
export function locate(
  error: unknown,
  where: Where,
  what: string,
  expected = 'a configuration this object can be created from',
): PorticoError {
  if (isPorticoError(error)) {
    // Each problem of a combined error (an expression's, compiled by the plugin itself) is placed.
    const problems = problemsOf(error);
    if (problems.length > 1) return combineProblems(problems.map((p) => locate(p, where, what, expected)));
    if (error.details.file !== undefined) return error;
    return error.at({
      ...(where.file === undefined ? {} : { file: where.file }),
      jsonPath: error.details.jsonPath ?? where.jsonPath,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new PorticoError(ErrorCode.CONFIG, `${what}: ${message}`, {
    ...(where.file === undefined ? {} : { file: where.file }),
    jsonPath: where.jsonPath,
    // What failed cannot say more; the operator is pointed at the declaration.
    expected,
    cause: error,
  });
}

/** The details naming a site, leaving out what is not known rather than writing undefined. */
export function located(site: Site): { file?: string; jsonPath?: string } {
  return {
    ...(site.file === undefined ? {} : { file: site.file }),
    ...(site.jsonPath === undefined ? {} : { jsonPath: site.jsonPath }),
  };
}

/** The cycle a wait would close, printed as `A -> B -> A`, at the reference that closes it. */
export function cycleError(labels: string[], site: Site): PorticoError {
  return new PorticoError(
    ErrorCode.CYCLE,
    `heap objects refer to each other in a cycle: ${labels.join(' -> ')}`,
    {
      ...located(site),
      expected: 'references that do not lead back to the object being created',
    },
  );
}
