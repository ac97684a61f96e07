import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type Bindings, compile, isPorticoError, type Logger } from '@portico/gateway-core';
import type { ExpectedType } from '@portico/gateway-core/expressions';
import { type NameCheck, parseConfigJson, problemsOf, RUN_TIME_NAMES } from '@portico/gateway-core/runtime';
import { modelBindings } from './eval-bindings.ts';
import { type Output, UsageError } from './output.ts';
import { setSystemProperties } from './system-properties.ts';

const TYPES: Record<string, ExpectedType> = {
  string: 'string',
  boolean: 'boolean',
  integer: 'integer',
  number: 'number',
  object: 'any',
  any: 'any',
};

/**
 * `portico eval '<text>'`: compiles and evaluates an expression the way a route would, and prints the
 * result as JSON. Warnings go to standard error. A parse error prints the coded error (a list of them when
 * the expression has several problems) and exits 2.
 */
export async function evalCommand(argv: string[], out: Output): Promise<number> {
  const { values, positionals } = parseArguments(argv);
  if (positionals.length !== 1) throw new UsageError('eval takes exactly one expression or template');
  const type = TYPES[values.type ?? 'object'];
  if (!type) throw new UsageError(`--type must be one of ${Object.keys(TYPES).join(', ')}`);
  setSystemProperties(values.D);
  const bindings = values.bindings ? readBindings(values.bindings) : {};
  const logger = stderrLogger(out);
  try {
    const text = positionals[0]!;
    const expression = compile(text, type, { logger, names: nameWarnings(text, bindings, logger) });
    out.stdout(JSON.stringify(expression.evaluate(bindings), jsonValue, 2) ?? 'null');
    return 0;
  } catch (error) {
    if (!isPorticoError(error)) throw error;
    // Every problem (an expression with several bad patterns has one each): a list when more than one.
    const problems = problemsOf(error).map((problem) => problem.toJSON());
    out.stderr(JSON.stringify(problems.length === 1 ? problems[0] : problems, null, 2));
    return 2;
  }
}

function parseArguments(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        bindings: { type: 'string' },
        type: { type: 'string' },
        D: { type: 'string', short: 'D', multiple: true },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * The bindings `--bindings` gives: a JSON file, or the JSON object itself (text starting with `{`).
 * What is wrong with them (a file that cannot be read, JSON that does not parse, a request of the
 * wrong shape) is one line naming where, without the usage text: the command line itself is fine.
 */
function readBindings(given: string): Bindings {
  const inline = given.trimStart().startsWith('{');
  const source = inline ? '--bindings' : given;
  let text = given;
  if (!inline) {
    try {
      text = readFileSync(given, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read bindings from ${given}: ${(error as Error).message}`, {
        usage: false,
      });
    }
  }
  let parsed: unknown;
  try {
    parsed = parseConfigJson(text);
  } catch (error) {
    if (!isPorticoError(error)) throw error;
    // `line 1, column 15` and the reason, from the parser that reads configuration files.
    const at = error.details.jsonPath === undefined ? '' : ` at ${error.details.jsonPath}`;
    const expected = error.details.expected === undefined ? '' : ` (expected ${error.details.expected})`;
    throw new UsageError(
      `${inline ? '--bindings' : `--bindings ${given}`}: malformed JSON${at}: ${error.message}${expected}`,
      { usage: false },
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UsageError(`${source} must hold a JSON object of bindings`, { usage: false });
  }
  return modelBindings(parsed as Record<string, unknown>, source);
}

/**
 * A name that is no binding of the file, no run-time binding and no implicit object can only be
 * null: said on standard error, as `portico validate` says it of a route, with the names known.
 */
function nameWarnings(text: string, bindings: Bindings, logger: Logger): NameCheck {
  const bound = new Set([...RUN_TIME_NAMES, ...Object.keys(bindings)]);
  return {
    bound,
    unknown(name, pos) {
      const known = [...bound, 'env', 'system', 'now'].sort().join(', ');
      logger.warn(
        `'${name}' (column ${pos + 1}) is no name an expression knows here: it evaluates to null; names known: ${known}`,
        { column: pos + 1, text },
      );
    },
  };
}

function stderrLogger(out: Output): Logger {
  const write = (level: string) => (message: string, data?: Record<string, unknown>) =>
    out.stderr(`${level}: ${message}${data ? ` ${JSON.stringify(data)}` : ''}`);
  return { debug: () => {}, info: write('info'), warn: write('warn'), error: write('error') };
}

/** Maps and sets print as JSON objects and arrays; model objects through their toString. */
function jsonValue(_key: string, value: unknown): unknown {
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Set) return [...value];
  if (value === undefined) return null;
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const proto = Object.getPrototypeOf(value);
    if (
      proto !== Object.prototype &&
      proto !== null &&
      typeof (value as { toJSON?: unknown }).toJSON !== 'function'
    ) {
      return String(value);
    }
  }
  return value;
}
