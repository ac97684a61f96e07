import { combineProblems, ErrorCode, isPorticoError, PorticoError } from '../errors.ts';
import { consoleLogger, type Logger } from '../logging.ts';
import { getProperty, setProperty } from './access.ts';
import type { Node } from './ast.ts';
import { noteRequestBodyRead } from './body-reads.ts';
import { describeValue, isMapLike, isNumericText, toText, withValuesHidden } from './coercion.ts';
import {
  type Bindings,
  type CompileContext,
  compileNode,
  type Evaluator,
  type NameCheck,
  writtenText,
} from './compiler.ts';
import { partsReadEntity } from './entity-access.ts';
import { EvaluationError, expressionError } from './expression-error.ts';
import { parseTemplate } from './template.ts';

/**
 * The type a setting expects. The result is converted to it where EL would (`'5'` for an integer
 * is 5, `'TRUE'` for a boolean is true); a value that cannot be converted is null, with a note in
 * the log.
 */
export type ExpectedType = 'any' | 'string' | 'boolean' | 'integer' | 'number';

/** What an expression compiled for a type evaluates to (besides null). */
export type ExpressionResult<T extends ExpectedType> = T extends 'string'
  ? string
  : T extends 'boolean'
    ? boolean
    : T extends 'integer' | 'number'
      ? number
      : unknown;

export interface Expression<T = unknown> {
  /** The configuration text it was compiled from. */
  readonly text: string;
  readonly expectedType: ExpectedType;
  /** True when the value does not depend on bindings or time (plain text, `${1 + 2}`). */
  readonly isConstant: boolean;
  /** Evaluates against the bindings; never throws: an evaluation error is null and a warning. */
  evaluate(bindings?: Bindings): T | null;
  /**
   * The syntax tree when the text is one `${...}` (not a template), for load-time analysis such as
   * the router's index of path conditions.
   */
  readonly ast: Node | undefined;
  /**
   * True when it reads the request body (`request.entity...`, `request.form`): whatever evaluates it
   * must see the body buffered first, since an expression never waits for a stream. Found once, as
   * it compiles (which also tells the load in progress, see `body-reads.ts`).
   */
  readonly readsRequestBody: boolean;
  /** Likewise for the response body (`response.entity...`). */
  readonly readsResponseBody: boolean;
}

export interface LValueExpression {
  readonly text: string;
  /** Reads the current value. */
  evaluate(bindings?: Bindings): unknown;
  /** Writes a value; null removes it. Never throws: a place that cannot be written is left alone. */
  assign(bindings: Bindings, value: unknown): void;
}

/** Where an expression is written, named by its evaluation warnings beside the expression itself. */
export interface ExpressionOrigin {
  /** The route whose file holds it. */
  route?: string;
  /** The heap object whose configuration holds it. */
  object?: string;
  /** The configuration file. */
  file?: string;
}

export interface CompileOptions {
  /** Where evaluation warnings go; defaults to standard error. */
  logger?: Logger;
  /** What the evaluation warnings name (shared by the expressions of one configuration). */
  origin?: Readonly<ExpressionOrigin>;
  /** The JSON path of the expression in its file, named by its evaluation warnings. */
  jsonPath?: string;
  /** Values for top-level names the bindings lack at evaluation: the heap's `properties`. */
  constants?: Readonly<Record<string, unknown>>;
  /** Reports, while compiling, each top-level name that is no binding, constant or implicit object. */
  names?: NameCheck;
}

const EMPTY_BINDINGS: Bindings = Object.freeze(Object.create(null));

/** The longest problem a warning prints. */
const PROBLEM_LIMIT = 500;

/** Evaluation warnings of one expression are logged at most this often, with a count of the rest. */
const WARNING_INTERVAL_MS = 60_000;

/**
 * Compiles configuration text once, at load time: either one `${...}` (whose result keeps its type)
 * or a template mixing text and expressions (whose result is text). Throws a PorticoError
 * (`PORTICO_E_EXPRESSION`) with the column for any syntax error, unknown function, wrong number of
 * arguments or constant regular expression that does not compile (given to a function or to a string
 * method). Every such pattern is named: past the first, the error lists them all as its cause.
 */
export function compile<T extends ExpectedType = 'any'>(
  text: string,
  expectedType: T = 'any' as T,
  options: CompileOptions = {},
): Expression<ExpressionResult<T>> {
  const written = writtenText(options.names);
  try {
    return new CompiledExpression(
      text,
      expectedType,
      warningLimiter(written ?? text, options),
      options.constants,
      options.names,
      written,
    ) as Expression<ExpressionResult<T>>;
  } catch (error) {
    throw written === undefined ? error : notCompiledWithTokens(error, written);
  }
}

/**
 * The error of an expression configuration tokens completed: its problems quote the text compiled,
 * which holds the values the tokens took from the environment, so the text as written is shown
 * instead, without them.
 */
function notCompiledWithTokens(error: unknown, written: string): unknown {
  if (!isPorticoError(error)) return error;
  return new PorticoError(
    ErrorCode.EXPRESSION,
    `${JSON.stringify(written)} does not compile with the values of its configuration tokens (the problem is not shown: it may quote them, and they come from the environment)`,
    { text: written, expected: error.details.expected ?? 'an expression that compiles' },
  );
}

/**
 * Compiles an assignment target such as `${attributes.user}`, `${session['a b'].c}` or
 * `${request.headers['X-Foo']}`: one expression made of a name followed by `.` or `[]` steps.
 */
export function compileLValue(text: string, options: CompileOptions = {}): LValueExpression {
  const written = writtenText(options.names);
  try {
    return compileAssignable(text, written, options);
  } catch (error) {
    throw written === undefined ? error : notCompiledWithTokens(error, written);
  }
}

function compileAssignable(
  text: string,
  written: string | undefined,
  options: CompileOptions,
): LValueExpression {
  const parts = parseTemplate(text);
  const part = parts[0];
  if (parts.length !== 1 || part?.kind !== 'expr' || part.source !== text.trim()) {
    throw expressionError(
      'not an assignable expression',
      text,
      0,
      'a single ${...} such as ${attributes.name}',
    );
  }
  const node = part.node;
  if (node.kind !== 'member') {
    throw expressionError(
      'not an assignable expression',
      text,
      node.pos,
      'a property such as ${attributes.name}',
    );
  }
  const warnings = warningLimiter(written ?? text, options);
  const ctx: CompileContext = { text, warn: (m) => warnings.warn(m), names: options.names, problems: [] };
  const [container, key, read] = compiling(ctx, () => [
    compileContainer(node.object, ctx),
    compileNode(node.property, ctx).ev,
    compileNode(node, ctx).ev,
  ]);
  return {
    text: written ?? text,
    evaluate: (bindings = EMPTY_BINDINGS) => guard(read, bindings, warnings),
    assign(bindings, value) {
      guard(
        () => {
          const removing = value === null || value === undefined;
          const base = container(bindings, !removing);
          if (base === null || base === undefined) {
            // Removing something whose container is missing is already done.
            if (!removing) warnings.warn('the place to assign to does not exist');
          } else if (!setProperty(base, key(bindings), value ?? null)) {
            warnings.warn(`cannot assign to a property of ${describeBase(base)}`);
          }
        },
        undefined,
        warnings,
      );
    },
  };
}

/**
 * Runs a compilation and fails with every problem it found that did not stop it (a constant pattern
 * that does not compile), and the one that did, if any: one load reports them all.
 */
function compiling<T>(ctx: CompileContext, run: () => T): T {
  let result: T;
  try {
    result = run();
  } catch (error) {
    if (ctx.problems.length === 0 || !isPorticoError(error)) throw error;
    throw combineProblems([...ctx.problems, error]);
  }
  if (ctx.problems.length > 0) throw combineProblems(ctx.problems);
  return result;
}

/**
 * Resolves the object an assignment writes into. Missing intermediate maps are created when a value
 * is written (the incumbent silently drops such a write instead).
 */
function compileContainer(node: Node, ctx: CompileContext): (b: Bindings, create: boolean) => unknown {
  if (node.kind !== 'member') {
    const ev = compileNode(node, ctx).ev;
    return (b) => ev(b);
  }
  const parent = compileContainer(node.object, ctx);
  const key = compileNode(node.property, ctx).ev;
  return (b, create) => {
    const base = parent(b, create);
    const k = key(b);
    const value = getProperty(base, k);
    if (value !== null || !create || !isMapLike(base)) return value;
    const created = {};
    setProperty(base, k, created);
    return created;
  };
}

function describeBase(base: unknown): string {
  return typeof base === 'object' && base !== null ? (base.constructor?.name ?? 'an object') : typeof base;
}

class CompiledExpression<T> implements Expression<T> {
  readonly isConstant: boolean;
  readonly #evaluator: Evaluator;
  readonly #constantValue: T | null = null;
  readonly #warnings: WarningLimiter;
  /** The text compiled: `text`, or what configuration tokens made of it (see writtenText). */
  readonly #source: string;
  readonly text: string;
  readonly expectedType: ExpectedType;
  readonly readsRequestBody: boolean;
  readonly readsResponseBody: boolean;
  /** See readsEnvironment(). */
  readonly readsEnvironment: boolean;

  constructor(
    text: string,
    expectedType: ExpectedType,
    warnings: WarningLimiter,
    constants?: Readonly<Record<string, unknown>>,
    names?: NameCheck,
    written?: string,
  ) {
    this.text = written ?? text;
    this.#source = text;
    this.expectedType = expectedType;
    this.#warnings = warnings;
    const ctx: CompileContext = { text, warn: (m) => this.#warnings.warn(m), constants, names, problems: [] };
    // What tokens put into the text came from the environment: its evaluation messages hide values.
    if (written !== undefined) ctx.readsEnvironment = true;
    const parts = parseTemplate(text);
    const compiled = compiling(ctx, () =>
      parts.map((p) => (p.kind === 'text' ? { ev: () => p.text, constant: true } : compileNode(p.node, ctx))),
    );
    this.isConstant = compiled.every((c) => c.constant);
    this.readsRequestBody = partsReadEntity(parts, 'request');
    this.readsResponseBody = partsReadEntity(parts, 'response');
    this.readsEnvironment = ctx.readsEnvironment === true;
    if (this.readsRequestBody) noteRequestBodyRead();
    // Only needed to compile: a route's condition kept its name check (and the configuration's parse
    // context it reports into) for as long as the route lived.
    ctx.names = undefined;
    const single = parts.length === 1 && parts[0]!.kind === 'expr' ? parts[0] : undefined;
    if (single) {
      this.#evaluator = compiled[0]!.ev;
    } else {
      const evs = compiled.map((c) => c.ev);
      this.#evaluator = (b) => {
        let out = '';
        for (const ev of evs) out += toText(ev(b));
        return out;
      };
    }
    if (this.isConstant) this.#constantValue = this.#run(EMPTY_BINDINGS);
  }

  /**
   * Parsed again when asked (only load-time analysis asks, once or twice per expression): keeping
   * the tree of every route's condition cost memory for the life of the route.
   */
  get ast(): Node | undefined {
    const parts = parseTemplate(this.#source);
    const single = parts.length === 1 ? parts[0] : undefined;
    return single?.kind === 'expr' ? single.node : undefined;
  }

  evaluate(bindings: Bindings = EMPTY_BINDINGS): T | null {
    return this.isConstant ? this.#constantValue : this.#run(bindings);
  }

  #run(bindings: Bindings): T | null {
    if (this.readsEnvironment) return withValuesHidden(() => this.#evaluateNow(bindings));
    return this.#evaluateNow(bindings);
  }

  #evaluateNow(bindings: Bindings): T | null {
    const value = guard(this.#evaluator, bindings, this.#warnings);
    return convert(value, this.expectedType, this.#warnings) as T | null;
  }
}

/**
 * True when the expression names `env` or `system` (found as it compiled): its result may be a
 * secret, which messages describe (`the value of ${env['DB_PASSWORD']} (12 characters, not shown)`)
 * instead of quoting. An expression compiled elsewhere is taken not to.
 */
export function readsEnvironment(expression: Expression<unknown>): boolean {
  return expression instanceof CompiledExpression && expression.readsEnvironment;
}

/**
 * Runs an evaluation; any error becomes null and a (rate-limited) warning naming the expression. The
 * argument is passed, not captured: no closure per evaluation.
 */
function guard<A>(run: (arg: A) => unknown, arg: A, warnings: WarningLimiter): unknown {
  try {
    return run(arg) ?? null;
  } catch (error) {
    warnings.warn(errorMessage(error));
    return null;
  }
}

/** What went wrong, for the warning; never throws, whatever was thrown. */
function errorMessage(error: unknown): string {
  if (error instanceof EvaluationError || isPorticoError(error)) return error.message;
  try {
    return `unexpected error: ${String(error)}`;
  } catch {
    return `unexpected error: ${typeof error} thrown`;
  }
}

function convert(value: unknown, type: ExpectedType, warnings: WarningLimiter): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'any':
      return value;
    case 'string':
      return typeof value === 'string' ? value : toText(value);
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (typeof value === 'string' && /^(true|false)$/i.test(value.trim()))
        return value.trim().toLowerCase() === 'true';
      break;
    case 'integer':
    case 'number': {
      const n =
        typeof value === 'number'
          ? value
          : typeof value === 'string' && isNumericText(value)
            ? Number(value)
            : NaN;
      if (type === 'number' ? !Number.isNaN(n) : Number.isInteger(n)) return n;
      break;
    }
  }
  warnings.warn(
    `the result is not ${type === 'integer' ? 'an integer' : `a ${type}`}: ${describeValue(value)}`,
    'info',
  );
  return null;
}

function warningLimiter(text: string, options: CompileOptions): WarningLimiter {
  return new WarningLimiter(text, options.logger ?? consoleLogger, options.origin, options.jsonPath);
}

/**
 * Logs the first warning of an expression, then at most one a minute with the count in between. Each
 * names the expression and where it is written: the route, the heap object, the file and JSON path.
 */
class WarningLimiter {
  #last = 0;
  #suppressed = 0;

  readonly #text: string;
  readonly #logger: Logger;
  readonly #origin: Readonly<ExpressionOrigin> | undefined;
  readonly #jsonPath: string | undefined;

  constructor(
    text: string,
    logger: Logger,
    origin: Readonly<ExpressionOrigin> | undefined,
    jsonPath: string | undefined,
  ) {
    this.#text = text;
    this.#logger = logger;
    this.#origin = origin;
    this.#jsonPath = jsonPath;
  }

  warn(message: string, level: 'warn' | 'info' = 'warn'): void {
    const now = Date.now();
    if (this.#last !== 0 && now - this.#last < WARNING_INTERVAL_MS) {
      this.#suppressed++;
      return;
    }
    const data: Record<string, unknown> = {
      ...this.#origin,
      ...(this.#jsonPath === undefined ? {} : { jsonPath: this.#jsonPath }),
      expression: this.#text,
      // Messages quote values briefly (describeValue); this is the bound for any other.
      problem: message.length > PROBLEM_LIMIT ? `${message.slice(0, PROBLEM_LIMIT)}...` : message,
    };
    if (this.#suppressed > 0) data.suppressedSinceLast = this.#suppressed;
    this.#logger[level]('expression evaluated to null', data);
    this.#last = now;
    this.#suppressed = 0;
  }
}
