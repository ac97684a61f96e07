import { ErrorCode, isPorticoError, PorticoError } from '../errors.ts';
import type { Where } from './declaration.ts';

/** Where a reference is written, when known. */
export interface Site {
  file: string | undefined;
  jsonPath: string | undefined;
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

/** The problems one error stands for: parseConfig reports all problems of a config as its cause. */
export function problemsOf(error: PorticoError): PorticoError[] {
  const { cause } = error.details;
  if (Array.isArray(cause) && cause.length > 0 && cause.every((item) => isPorticoError(item))) return cause;
  return [error];
}

/** The details naming a site, leaving out what is not known rather than writing undefined. */
export function located(site: Site): { file?: string; jsonPath?: string } {
  return {
    ...(site.file === undefined ? {} : { file: site.file }),
    ...(site.jsonPath === undefined ? {} : { jsonPath: site.jsonPath }),
  };
}

/** One error for a declaration's problems: the first, with all of them as its cause. */
export function combine(problems: readonly PorticoError[]): PorticoError {
  const first = problems[0]!;
  if (problems.length === 1) return first;
  return new PorticoError(first.code, `${first.message} (and ${problems.length - 1} more)`, {
    ...first.details,
    cause: problems,
  });
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
