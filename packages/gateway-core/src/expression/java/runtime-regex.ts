/**
 * Patterns only known when an expression runs (built from request data): compiled behind a small
 * cache to run on a linear engine from their first character, and held to a budget of work per call,
 * their program's size times the input's length. Constant patterns from configuration are compiled
 * at load (regex.ts) and never come here.
 */
import { ErrorCode, isPorticoError, PorticoError } from '../../errors.ts';
import { hiddenValue, valuesAreHidden } from '../coercion.ts';
import { type ProgramSize, programSize } from './linear-regex.ts';
import { compileLinearJavaRegex } from './regex.ts';

const CACHE_LIMIT = 256;

/** A pattern made at run time, compiled for a linear engine, with its program's size. */
interface RuntimePattern {
  readonly re: RegExp;
  readonly size: ProgramSize | undefined;
}

const cache = new Map<string, RuntimePattern>();

function runtimePattern(pattern: string): RuntimePattern {
  let entry = cache.get(pattern);
  if (entry === undefined) {
    const re = compiledOrDescribed(pattern);
    entry = { re, size: programSize(pattern, re) };
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(pattern, entry);
  }
  return entry;
}

/**
 * The pattern compiled. Its problem quotes parts of it (a group name, a property, what RE2 could not
 * read): when the expression making it reads the environment, the pattern may be a secret, so the
 * problem is described instead, as the values of such an expression are.
 */
function compiledOrDescribed(pattern: string): RegExp {
  try {
    return compileLinearJavaRegex(pattern);
  } catch (error) {
    if (!valuesAreHidden() || !isPorticoError(error)) throw error;
    throw new PorticoError(
      ErrorCode.EXPRESSION,
      `Java regular expression made at run time: a value (${hiddenValue(pattern)}, not shown) does not compile (the problem is not shown: it may quote the pattern)`,
      { expected: error.details.expected ?? 'a valid regular expression' },
    );
  }
}

/**
 * The most work one call may do with a pattern made at run time: RE2 instructions times input
 * characters (plus one). Measured at the budget: 20 to 50 ns per step, up to 80 with hundreds of
 * capture groups on V8's linear engine, so a call takes about 30 to 120 ms at worst; an ordinary
 * pattern (`\w+=\w+;`, 8 instructions; `(?i)^bearer\s+(\S+)$`, 16) passes on 64 KB of input.
 */
export const RUNTIME_REGEX_BUDGET = 1_500_000;

/**
 * A pattern only known when an expression runs, compiled (behind a small cache) to run on a linear
 * engine from its first character, for input of `inputLength` characters; or a `PORTICO_E_EXPRESSION`
 * error naming the sizes when matching could cost more than RUNTIME_REGEX_BUDGET (a short pattern
 * can be a large program: `(?i)(a|b){1000}x` is over 3,000 instructions). Constant patterns from
 * configuration are compiled at load and never come here.
 */
export function runtimeJavaRegex(pattern: string, inputLength: number): RegExp {
  const { re, size } = runtimePattern(pattern);
  const work = size === undefined ? Number.POSITIVE_INFINITY : size.size * (inputLength + 1);
  if (work > RUNTIME_REGEX_BUDGET) {
    const program =
      size === undefined
        ? 'a program whose size cannot be measured'
        : `a program of ${size.estimated ? 'at most ' : ''}${size.size} instructions${size.estimated ? ' (estimated from its text)' : ''}`;
    throw new PorticoError(
      ErrorCode.EXPRESSION,
      `Java regular expression made at run time: ${program} (pattern of ${pattern.length} characters) against ${inputLength} characters of input exceeds the budget of ${RUNTIME_REGEX_BUDGET} instruction steps`,
      {
        expected:
          'a pattern whose program size times the input length stays within the budget (or a constant pattern, compiled at load)',
      },
    );
  }
  return re;
}
