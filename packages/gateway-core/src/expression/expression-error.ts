import { brandClass } from '../brand.ts';
import { ErrorCode, PorticoError } from '../errors.ts';

/** A coded parse error naming the text, the 1-based column and what was expected there. */
export function expressionError(message: string, text: string, pos: number, expected?: string): PorticoError {
  const column = pos + 1;
  return new PorticoError(ErrorCode.EXPRESSION, `${message} at column ${column} of ${JSON.stringify(text)}`, {
    text,
    column,
    ...(expected === undefined ? {} : { expected }),
  });
}

/**
 * Thrown inside compiled closures when evaluation cannot go on (EL's ELException). Never escapes an
 * expression: evaluation turns it into a null result and a warning.
 */
export class EvaluationError extends Error {
  override readonly name = 'EvaluationError';
}

export function evaluationError(message: string): EvaluationError {
  return new EvaluationError(message);
}

// Objects of these classes cross package boundaries (plugins make and read them): one identity for
// every copy of the core (brand.ts).
brandClass(EvaluationError, 'EvaluationError');
