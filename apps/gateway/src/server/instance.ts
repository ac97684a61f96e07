import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCode, type GatewayEnvironment, PorticoError } from '@portico/gateway-core';
import { parseConfigJson, resolveTokens } from '@portico/gateway-core/runtime';

/** The embedded quickstart configuration, used when there is no instance directory. */
export const QUICKSTART_BASE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../quickstart');

/**
 * An instance directory: `config/admin.json` (server settings), `config/config.json` (the top-level
 * object), `config/routes/*.json`, `scripts/`, `logs/`, `tmp/`.
 */
export interface Instance {
  base: string;
  /** True when running on the embedded quickstart configuration. */
  quickstart: boolean;
  environment: GatewayEnvironment;
  adminFile: string;
  configFile: string;
  /** admin.json, or {} when the file does not exist. */
  admin: unknown;
  /** config.json, or undefined when absent (a default Router is used). */
  config: unknown;
}

/**
 * Finds the instance directory: `--base DIR`, else `PORTICO_BASE`, else `$HOME/.portico` when it
 * exists, else the embedded quickstart. Reads admin.json and config.json (leniently, as the
 * incumbents do: comments and trailing commas are accepted); a file that does not parse is a coded
 * error naming the file, line and column.
 */
export function locateInstance(
  options: { base?: string | undefined; env?: NodeJS.ProcessEnv } = {},
): Instance {
  const env = options.env ?? process.env;
  const home = path.join(os.homedir(), '.portico');
  // An empty PORTICO_BASE counts as unset (not as the current directory).
  const chosen = options.base ?? (env.PORTICO_BASE || undefined) ?? (existsSync(home) ? home : undefined);
  const base = path.resolve(chosen ?? QUICKSTART_BASE);
  const configDirectory = path.join(base, 'config');
  const adminFile = path.join(configDirectory, 'admin.json');
  const configFile = path.join(configDirectory, 'config.json');
  const admin = readJson(adminFile) ?? {};
  const temporaryDirectory = resolveTemporaryDirectory(base, admin, chosen === undefined);
  return {
    base,
    quickstart: chosen === undefined,
    adminFile,
    configFile,
    admin,
    config: readJson(configFile),
    environment: {
      baseDirectory: base,
      configDirectory,
      scriptsDirectory: path.join(base, 'scripts'),
      temporaryDirectory,
    },
  };
}

function readJson(file: string): unknown {
  if (!existsSync(file)) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    // A directory in its place, a file without read permission: said with the file, not a stack trace.
    throw new PorticoError(ErrorCode.CONFIG, `cannot read the file: ${(error as Error).message}`, {
      file,
      jsonPath: '$',
      expected: 'a readable JSON file',
    });
  }
  return resolveTokens(parseConfigJson(text, file), { file });
}

/** admin.json's temporaryDirectory, else `<base>/tmp` (the system's for the embedded quickstart). */
function resolveTemporaryDirectory(base: string, admin: unknown, quickstart: boolean): string {
  const configured = (admin as { temporaryDirectory?: unknown } | null)?.temporaryDirectory;
  const fallback = quickstart ? path.join(os.tmpdir(), 'portico-quickstart') : path.join(base, 'tmp');
  const dir = typeof configured === 'string' ? path.resolve(base, configured) : fallback;
  try {
    mkdirSync(dir, { recursive: true });
  } catch {
    // Reported when something first needs it.
  }
  return dir;
}
