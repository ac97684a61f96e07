import { combineProblems, ErrorCode, PorticoError } from '../errors.ts';
import { getSystemProperties } from '../expression/implicit.ts';
import { markFromEnvironment } from './from-environment.ts';
import { childPath } from './parse-context.ts';

/**
 * Configuration tokens, as the incumbents write them in configuration files: `&{name}` or
 * `&{name|default}`, replaced by text when the file is read. A token is looked up as a system
 * property (`-Dname=value`), then as an environment variable named after it in capitals with `.`
 * and `-` turned into `_` (`ig.host` → `IG_HOST`), then takes its default. Tokens may nest
 * (`&{a|&{b|c}}`); `\&{` is a literal `&{`. A token with no value and no default is an error naming
 * the file and JSON path. A value a token took from a property or a variable is marked
 * (from-environment.ts), so that messages do not quote it.
 */
export function resolveTokens(
  value: unknown,
  options: { file?: string; env?: NodeJS.ProcessEnv } = {},
): unknown {
  const { value: resolved, problems } = resolveTokensCollecting(value, options);
  if (problems.length > 0) throw combineProblems(problems);
  return resolved;
}

/**
 * As resolveTokens, but a token without a value is returned among `problems` and its text is left
 * as written, so that `portico validate` can go on checking the rest of the file.
 */
export function resolveTokensCollecting(
  value: unknown,
  options: { file?: string; env?: NodeJS.ProcessEnv } = {},
): { value: unknown; problems: PorticoError[] } {
  const env = options.env ?? process.env;
  // Every token without a value is reported, not the first.
  const problems: PorticoError[] = [];
  const substituted = (text: string, path: string, found?: Found): string => {
    try {
      return substitute(text, path, env, options.file, found);
    } catch (error) {
      if (!(error instanceof PorticoError)) throw error;
      problems.push(error);
      return text;
    }
  };
  /** Resolves `item`, the value at `key` of `out` (being built), marking it when it came from the environment. */
  const at = (out: object, key: string, item: unknown, path: string): unknown => {
    if (typeof item !== 'string' || !item.includes('&{')) return walk(item, path);
    const found = { fromEnvironment: false };
    const text = substituted(item, path, found);
    if (found.fromEnvironment) markFromEnvironment(out, key, item);
    return text;
  };
  const walk = (v: unknown, path: string): unknown => {
    if (typeof v === 'string') return v.includes('&{') ? substituted(v, path) : v;
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (const [i, item] of v.entries()) out.push(at(out, String(i), item, `${path}[${i}]`));
      return out;
    }
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) {
        Object.defineProperty(out, k, {
          value: at(out, k, item, childPath(path, k)),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return v;
  };
  return { value: walk(value, '$'), problems };
}

/**
 * The problems of `found` that are not consequences of a token problem: a setting whose token had no
 * value is still written `&{name}`, which its schema refuses at the same JSON path (or inside it).
 */
export function besidesTokenProblems(
  found: readonly PorticoError[],
  tokens: readonly PorticoError[] = found.filter(isTokenProblem),
): PorticoError[] {
  const consequence = (problem: PorticoError) => {
    const { file, jsonPath } = problem.details;
    return (
      !TOKEN_PROBLEMS.has(problem) &&
      jsonPath !== undefined &&
      tokens.some(({ details: token }) => {
        const at = token.jsonPath ?? '$';
        return (
          token.file === file &&
          (jsonPath === at || jsonPath.startsWith(`${at}.`) || jsonPath.startsWith(`${at}[`))
        );
      })
    );
  };
  return found.filter((problem) => !consequence(problem));
}

export function tokenEnvironmentName(token: string): string {
  return token.toUpperCase().replace(/[.-]/g, '_');
}

/**
 * How deeply tokens may nest (`&{a|&{b|c}}` is two): far more than any configuration needs, and a
 * bound that keeps a hostile file from exhausting the stack.
 */
const MAX_TOKEN_NESTING = 32;

/** Set when a token took its value from a system property or an environment variable. */
interface Found {
  fromEnvironment: boolean;
}

function substitute(
  text: string,
  path: string,
  env: NodeJS.ProcessEnv,
  file: string | undefined,
  found: Found = { fromEnvironment: false },
  depth = 0,
): string {
  // Text between tokens is kept as slices joined once: a large value with a token stays linear.
  const pieces: string[] = [];
  let from = 0;
  for (let i = text.indexOf('&{'); i >= 0; i = text.indexOf('&{', from)) {
    if (i - 1 >= from && text[i - 1] === '\\') {
      pieces.push(text.slice(from, i - 1), '&{');
      from = i + 2;
      continue;
    }
    const end = closing(text, i + 2);
    if (end < 0) throw tokenError(`unclosed '&{' in ${JSON.stringify(text)}`, path, file);
    if (depth >= MAX_TOKEN_NESTING) {
      throw new PorticoError(
        ErrorCode.CONFIG,
        `configuration tokens nested more than ${MAX_TOKEN_NESTING} levels deep`,
        {
          jsonPath: path,
          expected: `at most ${MAX_TOKEN_NESTING} levels of &{...} inside one another`,
          ...(file === undefined ? {} : { file }),
        },
      );
    }
    pieces.push(text.slice(from, i), resolve(text.slice(i + 2, end), path, env, file, found, depth + 1));
    from = end + 1;
  }
  pieces.push(text.slice(from));
  return pieces.join('');
}

/** The index of the `}` closing a token whose body starts at `from`, counting nested tokens. */
function closing(text: string, from: number): number {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    if (text.startsWith('&{', i)) {
      depth++;
      i++;
    } else if (text[i] === '}') {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

function resolve(
  body: string,
  path: string,
  env: NodeJS.ProcessEnv,
  file: string | undefined,
  found: Found,
  depth: number,
): string {
  const bar = topLevelBar(body);
  const name = substitute(bar < 0 ? body : body.slice(0, bar), path, env, file, found, depth).trim();
  const value = getSystemProperties()[name] ?? env[tokenEnvironmentName(name)];
  if (value !== undefined) {
    found.fromEnvironment = true;
    return value;
  }
  if (bar >= 0) return substitute(body.slice(bar + 1), path, env, file, found, depth);
  throw tokenError(`the configuration token '${name}' has no value and no default`, path, file);
}

function topLevelBar(body: string): number {
  let depth = 0;
  for (let i = 0; i < body.length; i++) {
    if (body.startsWith('&{', i)) {
      depth++;
      i++;
    } else if (body[i] === '}') depth--;
    else if (body[i] === '|' && depth === 0) return i;
  }
  return -1;
}

/** The problems made here: the other problems at their JSON paths are consequences (besidesTokenProblems). */
const TOKEN_PROBLEMS = new WeakSet<PorticoError>();

export function isTokenProblem(problem: PorticoError): boolean {
  return TOKEN_PROBLEMS.has(problem);
}

function tokenError(message: string, jsonPath: string, file: string | undefined): PorticoError {
  const problem = new PorticoError(ErrorCode.CONFIG, message, {
    jsonPath,
    expected: `a system property, an environment variable or a default (&{name|default})`,
    ...(file === undefined ? {} : { file }),
  });
  TOKEN_PROBLEMS.add(problem);
  return problem;
}
