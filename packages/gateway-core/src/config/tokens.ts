import { ErrorCode, PorticoError } from '../errors.ts';
import { getSystemProperties } from '../expression/implicit.ts';
import { childPath } from './schema.ts';

/**
 * Configuration tokens, as the incumbents write them in configuration files: `&{name}` or
 * `&{name|default}`, replaced by text when the file is read. A token is looked up as a system
 * property (`-Dname=value`), then as an environment variable named after it in capitals with `.`
 * and `-` turned into `_` (`ig.host` → `IG_HOST`), then takes its default. Tokens may nest
 * (`&{a|&{b|c}}`); `\&{` is a literal `&{`. A token with no value and no default is an error naming
 * the file and JSON path.
 */
export function resolveTokens(
  value: unknown,
  options: { file?: string; env?: NodeJS.ProcessEnv } = {},
): unknown {
  const env = options.env ?? process.env;
  const walk = (v: unknown, path: string): unknown => {
    if (typeof v === 'string') return v.includes('&{') ? substitute(v, path, env, options.file) : v;
    if (Array.isArray(v)) return v.map((item, i) => walk(item, `${path}[${i}]`));
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) {
        Object.defineProperty(out, k, {
          value: walk(item, childPath(path, k)),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return v;
  };
  return walk(value, '$');
}

export function tokenEnvironmentName(token: string): string {
  return token.toUpperCase().replace(/[.-]/g, '_');
}

function substitute(text: string, path: string, env: NodeJS.ProcessEnv, file: string | undefined): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('\\&{', i)) {
      out += '&{';
      i += 3;
    } else if (text.startsWith('&{', i)) {
      const end = closing(text, i + 2);
      if (end < 0) throw tokenError(`unclosed '&{' in ${JSON.stringify(text)}`, path, file);
      out += resolve(text.slice(i + 2, end), path, env, file);
      i = end + 1;
    } else {
      out += text[i];
      i++;
    }
  }
  return out;
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

function resolve(body: string, path: string, env: NodeJS.ProcessEnv, file: string | undefined): string {
  const bar = topLevelBar(body);
  const name = substitute(bar < 0 ? body : body.slice(0, bar), path, env, file).trim();
  const system = getSystemProperties()[name];
  if (system !== undefined) return system;
  const fromEnv = env[tokenEnvironmentName(name)];
  if (fromEnv !== undefined) return fromEnv;
  if (bar >= 0) return substitute(body.slice(bar + 1), path, env, file);
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

function tokenError(message: string, jsonPath: string, file: string | undefined): PorticoError {
  return new PorticoError(ErrorCode.CONFIG, message, {
    jsonPath,
    expected: `a system property, an environment variable or a default (&{name|default})`,
    ...(file === undefined ? {} : { file }),
  });
}
