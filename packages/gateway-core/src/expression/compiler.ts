import { isPorticoError, type PorticoError } from '../errors.ts';
import { getProperty, NO_SUCH_METHOD } from './access.ts';
import type { BinaryOp, Node } from './ast.ts';
import { elCompare, elEquals, isEmpty, toBoolean, toNumber, typeName } from './coercion.ts';
import { ExchangeView } from './exchange.ts';
import { EvaluationError, evaluationError, expressionError } from './expression-error.ts';
import { lookupFunction } from './functions.ts';
import { implicitObject } from './implicit.ts';
import { compileJavaRegex } from './java/index.ts';
import { callMethod, REGEX_METHOD_ARGS } from './methods.ts';

/** What an expression is evaluated against: `request`, `attributes`, `contexts`, ... */
export type Bindings = Readonly<Record<string, unknown>>;
export type Evaluator = (bindings: Bindings) => unknown;

export interface CompileContext {
  /** The whole configuration text, for error messages. */
  text: string;
  /** Reports a non-fatal problem found while evaluating (an unknown method). */
  warn(message: string): void;
  /** Values of top-level names the bindings do not have (a heap's `properties`). */
  constants?: Readonly<Record<string, unknown>> | undefined;
  /** The names the bindings will hold, and where to report a top-level name that is none of them. */
  names?: NameCheck | undefined;
  /**
   * Set while compiling once the expression names `env`, `system` or a property whose value came
   * from the environment: what it evaluates to may be a secret an operator keeps there, which
   * messages describe instead of quoting.
   */
  readsEnvironment?: boolean;
  /**
   * Problems that do not stop the compilation (a constant pattern that does not compile), so that
   * one load reports each of them; the expression fails with all of them once compiled.
   */
  problems: PorticoError[];
}

/**
 * Top-level names (besides `env` and `system`) whose values came from the environment, by the name
 * check of the configuration compiling the expression: its properties a token gave a value (see
 * config/from-environment.ts). Kept beside the check so that compile's options stay as they are.
 */
const environmentNames = new WeakMap<NameCheck, ReadonlySet<string>>();

/** `names`, noting that the values of `fromEnvironment` came from the environment. */
export function withEnvironmentNames(names: NameCheck, fromEnvironment: ReadonlySet<string>): NameCheck {
  if (fromEnvironment.size > 0) environmentNames.set(names, fromEnvironment);
  return names;
}

/**
 * The text as written of an expression configuration tokens completed (`${x == '&{db.password}'}`),
 * by the name check of the configuration compiling it: the text it compiles holds what the tokens
 * took from the environment, so its `text`, its errors and its warnings show the text as written.
 */
const writtenTexts = new WeakMap<NameCheck, string>();

/** `names`, noting that the expression it checks was written `written`, with its tokens. */
export function withWrittenText(names: NameCheck, written: string | undefined): NameCheck {
  if (written !== undefined) writtenTexts.set(names, written);
  return names;
}

/** The text as written of the expression `names` checks, when tokens completed it. */
export function writtenText(names: NameCheck | undefined): string | undefined {
  return names === undefined ? undefined : writtenTexts.get(names);
}

function readsEnvironment(name: string, ctx: CompileContext): boolean {
  if (name === 'env' || name === 'system') return true;
  return ctx.names !== undefined && environmentNames.get(ctx.names)?.has(name) === true;
}

/**
 * A check of top-level names at load time: a name that is no binding, no constant and no implicit
 * object (`${requst.method}`) always evaluates to null, which is worth a word.
 */
export interface NameCheck {
  bound: ReadonlySet<string>;
  unknown(name: string, pos: number): void;
}

/** A compiled node: its closure, and its value when it is known at load time. */
interface Compiled {
  ev: Evaluator;
  constant: boolean;
  value?: unknown;
}

const constant = (value: unknown): Compiled => ({ ev: () => value, constant: true, value });

/**
 * Turns a tree into nested closures once, at load time. Constant sub-trees are folded, constant
 * regular expressions compiled, functions resolved and their arity checked; evaluation then only
 * runs closures: no parsing, no switching on node kinds.
 */
export function compileNode(node: Node, ctx: CompileContext): Compiled {
  const compiled = compileDynamic(node, ctx);
  return compiled.constant ? compiled : fold(compiled, node, ctx);
}

/** Folds a node whose inputs are all constant; an evaluation error is left for run time. */
function fold(compiled: Compiled, node: Node, ctx: CompileContext): Compiled {
  if (!isFoldable(node, ctx)) return compiled;
  try {
    return constant(compiled.ev(EMPTY));
  } catch (error) {
    if (error instanceof EvaluationError || isPorticoError(error)) return compiled;
    throw error;
  }
}

const EMPTY: Bindings = Object.freeze(Object.create(null));

function isFoldable(node: Node, ctx: CompileContext): boolean {
  switch (node.kind) {
    case 'literal':
      return true;
    case 'identifier':
      return false;
    case 'member':
      return isFoldable(node.object, ctx) && isFoldable(node.property, ctx);
    case 'method':
      return isFoldable(node.object, ctx) && node.args.every((a) => isFoldable(a, ctx));
    case 'call':
      return (lookupFunction(node.name)?.pure ?? false) && node.args.every((a) => isFoldable(a, ctx));
    case 'unary':
      return isFoldable(node.operand, ctx);
    case 'binary':
      return isFoldable(node.left, ctx) && isFoldable(node.right, ctx);
    case 'conditional':
      return (
        isFoldable(node.test, ctx) && isFoldable(node.consequent, ctx) && isFoldable(node.alternate, ctx)
      );
  }
}

function compileDynamic(node: Node, ctx: CompileContext): Compiled {
  switch (node.kind) {
    case 'literal':
      return constant(node.value);
    case 'identifier':
      checkName(node.name, node.pos, ctx);
      if (readsEnvironment(node.name, ctx)) ctx.readsEnvironment = true;
      return { ev: identifier(node.name, ctx.constants), constant: false };
    case 'member':
      return { ev: member(node, ctx), constant: false };
    case 'method':
      return { ev: method(node, ctx), constant: false };
    case 'call':
      return { ev: call(node, ctx), constant: false };
    case 'unary':
      return { ev: unary(node.op, compileNode(node.operand, ctx).ev), constant: false };
    case 'binary':
      return {
        ev: binary(node.op, compileNode(node.left, ctx).ev, compileNode(node.right, ctx).ev),
        constant: false,
      };
    case 'conditional': {
      const test = compileNode(node.test, ctx).ev;
      const yes = compileNode(node.consequent, ctx).ev;
      const no = compileNode(node.alternate, ctx).ev;
      return { ev: (b) => (toBoolean(test(b)) ? yes(b) : no(b)), constant: false };
    }
  }
}

/**
 * A top-level name: a binding, else a constant (a heap property, so routes can use their
 * `properties` in run-time expressions as in configuration), else an implicit object (`system`,
 * `env`, `now`), else null.
 */
function checkName(name: string, pos: number, ctx: CompileContext): void {
  const names = ctx.names;
  if (names === undefined || names.bound.has(name) || name === 'exchange') return;
  if (implicitObject(name) || (ctx.constants !== undefined && Object.hasOwn(ctx.constants, name))) return;
  names.unknown(name, pos);
}

function identifier(name: string, constants: Readonly<Record<string, unknown>> | undefined): Evaluator {
  if (constants !== undefined && Object.hasOwn(constants, name)) {
    const constant = constants[name] ?? null;
    return (b) => (Object.hasOwn(b, name) && b[name] !== undefined ? (b[name] ?? null) : constant);
  }
  const implicit = implicitObject(name);
  if (implicit) {
    return (b) => {
      const value = Object.hasOwn(b, name) ? b[name] : undefined;
      return value === undefined ? implicit() : value;
    };
  }
  // OpenIG 3 and 4 wrote `${exchange.request...}`, `${exchange.token}`: a view of today's bindings.
  if (name === 'exchange') {
    return (b) => (Object.hasOwn(b, name) && b[name] !== undefined ? b[name] : new ExchangeView(b));
  }
  return (b) => (Object.hasOwn(b, name) ? (b[name] ?? null) : null);
}

function member(node: Extract<Node, { kind: 'member' }>, ctx: CompileContext): Evaluator {
  const object = compileNode(node.object, ctx).ev;
  const property = compileNode(node.property, ctx);
  if (property.constant) {
    const key = property.value;
    return (b) => getProperty(object(b), key);
  }
  const key = property.ev;
  return (b) => getProperty(object(b), key(b));
}

function method(node: Extract<Node, { kind: 'method' }>, ctx: CompileContext): Evaluator {
  const object = compileNode(node.object, ctx).ev;
  const compiled = node.args.map((a) => compileNode(a, ctx));
  const args = compiled.map((a) => a.ev);
  const name = node.name;
  const regexArg = Object.hasOwn(REGEX_METHOD_ARGS, name) ? REGEX_METHOD_ARGS[name]! : -1;
  // A string method's constant pattern, compiled once here: on a string it is passed compiled (no
  // cache look-up, no run-time budget); any other value gets the text, as written.
  const re = regexArg < 0 ? undefined : constantPattern(compiled[regexArg], node.args[regexArg], ctx);
  return (b) => {
    const self = object(b);
    const values = args.map((a) => a(b));
    if (re !== undefined && typeof self === 'string') values[regexArg] = re;
    const result = callMethod(self, name, values);
    if (result !== NO_SUCH_METHOD) return result;
    ctx.warn(`unknown method ${name}() on ${typeName(self)}`);
    return null;
  };
}

/**
 * A constant string argument compiled as a Java pattern, or undefined when it is not constant. One
 * that does not compile is a problem of the expression, reported at load (the incumbents fail only
 * when it runs, with null and a warning); a method's too, though the method is only known then:
 * every method of that name takes a pattern there.
 */
function constantPattern(
  arg: Compiled | undefined,
  node: Node | undefined,
  ctx: CompileContext,
): RegExp | undefined {
  if (arg === undefined || node === undefined || !arg.constant || typeof arg.value !== 'string')
    return undefined;
  try {
    return compileJavaRegex(arg.value);
  } catch (error) {
    ctx.problems.push(
      expressionError(
        `invalid regular expression ${JSON.stringify(arg.value)} (${(error as Error).message})`,
        ctx.text,
        node.pos,
        'a valid Java regular expression',
      ),
    );
    return undefined;
  }
}

function call(node: Extract<Node, { kind: 'call' }>, ctx: CompileContext): Evaluator {
  const fn = lookupFunction(node.name);
  if (!fn)
    throw expressionError(`unknown function '${node.name}'`, ctx.text, node.pos, 'a built-in function');
  const [min, max] = fn.arity;
  if (node.args.length < min || node.args.length > max) {
    const count =
      min === max ? `${min}` : max === Number.POSITIVE_INFINITY ? `at least ${min}` : `${min} to ${max}`;
    throw expressionError(
      `${node.name}() takes ${count} argument(s), not ${node.args.length}`,
      ctx.text,
      node.pos,
      `${count} argument(s)`,
    );
  }
  const args = node.args.map((a, i) => {
    const compiled = compileNode(a, ctx);
    const precompile = fn.regexArgs?.includes(i);
    if (!(precompile || fn.patternArgs?.includes(i))) return compiled.ev;
    const re = constantPattern(compiled, a, ctx);
    return precompile && re !== undefined ? () => re : compiled.ev;
  });
  const f = fn.fn;
  switch (args.length) {
    case 0:
      return () => f([]);
    case 1: {
      const [a0] = args as [Evaluator];
      return (b) => f([a0(b)]);
    }
    case 2: {
      const [a0, a1] = args as [Evaluator, Evaluator];
      return (b) => f([a0(b), a1(b)]);
    }
    default:
      return (b) => f(args.map((a) => a(b)));
  }
}

function unary(op: '-' | '!' | 'empty', operand: Evaluator): Evaluator {
  switch (op) {
    case '-':
      return (b) => {
        const v = operand(b);
        if (typeof v === 'boolean') throw evaluationError('cannot negate a boolean');
        return -toNumber(v);
      };
    case '!':
      return (b) => !toBoolean(operand(b));
    case 'empty':
      return (b) => isEmpty(operand(b));
  }
}

function binary(op: BinaryOp, left: Evaluator, right: Evaluator): Evaluator {
  switch (op) {
    case '&&':
      return (b) => toBoolean(left(b)) && toBoolean(right(b));
    case '||':
      return (b) => toBoolean(left(b)) || toBoolean(right(b));
    case '==':
      return (b) => elEquals(left(b), right(b));
    case '!=':
      return (b) => !elEquals(left(b), right(b));
    case '<':
      return (b) => (elCompare(left(b), right(b)) ?? 0) < 0;
    case '>':
      return (b) => (elCompare(left(b), right(b)) ?? 0) > 0;
    case '<=':
      return (b) => {
        const x = left(b);
        const y = right(b);
        return x === y || (elCompare(x, y) ?? 1) <= 0;
      };
    case '>=':
      return (b) => {
        const x = left(b);
        const y = right(b);
        return x === y || (elCompare(x, y) ?? -1) >= 0;
      };
    default:
      return (b) => arithmetic(op, left(b), right(b));
  }
}

/** `+ - * / %` with EL's rules: both operands null is 0; text is read as a number; booleans are errors. */
function arithmetic(op: '+' | '-' | '*' | '/' | '%', a: unknown, b: unknown): number {
  if ((a === null || a === undefined) && (b === null || b === undefined)) return 0;
  if (typeof a === 'boolean' || typeof b === 'boolean')
    throw evaluationError(`cannot apply '${op}' to a boolean`);
  const x = toNumber(a);
  const y = toNumber(b);
  switch (op) {
    case '+':
      return x + y;
    case '-':
      return x - y;
    case '*':
      return x * y;
    case '/':
      return x / y;
    case '%':
      // Integer remainder by zero is Java's ArithmeticException; a decimal one is NaN.
      if (y === 0 && Number.isInteger(x) && isIntegral(a) && isIntegral(b))
        throw evaluationError('division by zero');
      return x % y;
  }
}

function isIntegral(value: unknown): boolean {
  return typeof value === 'number' ? Number.isInteger(value) : !/[.eE]/.test(String(value ?? ''));
}
