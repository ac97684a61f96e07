import { existsSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ErrorCode, PorticoError } from '@portico/gateway-core';
import { type Instance as GatewayInstance, readInstance } from '@portico/gateway-core/runtime';
import { APP_FOLDER } from '../app-folder.ts';

/** The embedded quickstart configuration, used when there is no instance directory. */
export const QUICKSTART_BASE = path.join(APP_FOLDER, 'quickstart');

/**
 * An instance directory: `config/admin.json` (server settings), `config/config.json` (the top-level
 * object), `config/routes/*.json`, `scripts/`, `logs/`, `tmp/`.
 */
export interface Instance extends GatewayInstance {
  /** True when running on the embedded quickstart configuration. */
  quickstart: boolean;
  /**
   * What named the directory when the user did (`--base` or `PORTICO_BASE`): serving it needs its
   * `config/` (`Gateway.load`). Undefined for `$HOME/.portico` and the quickstart.
   */
  namedBy?: '--base' | 'PORTICO_BASE' | undefined;
  adminFile: string;
  configFile: string;
}

/**
 * Finds the instance directory: `--base DIR`, else `PORTICO_BASE`, else `$HOME/.portico` when it
 * exists, else the embedded quickstart (whose temporary files go to the system's temporary
 * directory). A directory named by `--base` or `PORTICO_BASE` must exist: a misspelt one is a coded
 * error, not an empty gateway answering 404 to everything (and serving it needs its `config/`:
 * `Gateway.load`; the plugin commands work on an instance that has none yet). Reads admin.json
 * and config.json as the gateway runtime reads an instance (`readInstance`: comments and trailing
 * commas are accepted; a file that does not parse is a coded error naming the file, line and
 * column).
 */
export function locateInstance(
  options: { base?: string | undefined; env?: NodeJS.ProcessEnv } = {},
): Instance {
  const env = options.env ?? process.env;
  const home = path.join(os.homedir(), '.portico');
  // An empty PORTICO_BASE counts as unset (not as the current directory).
  const named = options.base ?? (env.PORTICO_BASE || undefined);
  const namedBy = named === undefined ? undefined : options.base !== undefined ? '--base' : 'PORTICO_BASE';
  const chosen =
    named !== undefined && namedBy !== undefined
      ? namedBase(named, namedBy, env)
      : existsSync(home)
        ? home
        : undefined;
  const quickstart = chosen === undefined;
  const instance = readInstance(
    chosen ?? QUICKSTART_BASE,
    quickstart ? { temporaryDirectory: path.join(os.tmpdir(), 'portico-quickstart') } : {},
  );
  return {
    ...instance,
    quickstart,
    ...(namedBy === undefined ? {} : { namedBy }),
    adminFile: instance.adminFile ?? path.join(instance.base, 'config', 'admin.json'),
    configFile: instance.configFile ?? path.join(instance.base, 'config', 'config.json'),
  };
}

/**
 * The directory `--base` or `PORTICO_BASE` names, checked: it exists. A relative one is taken from
 * where the user ran npm when the app's `npm start` script runs it (npm runs a workspace's script in
 * the workspace's folder, apps/gateway, and says where it was started in INIT_CWD), else from the
 * current directory.
 */
function namedBase(named: string, source: string, env: NodeJS.ProcessEnv): string {
  const npmStart = env.npm_lifecycle_event === 'start' && env.npm_package_name === '@portico/gateway';
  const dir = path.resolve(npmStart && env.INIT_CWD ? env.INIT_CWD : process.cwd(), named);
  const kind = directoryKind(dir);
  if (kind === 'directory') return dir;
  throw missingInstance(source, dir, kind === undefined ? 'does not exist' : 'is not a directory');
}

/** `directory`, `file` (anything else), or undefined when nothing is there. */
export function directoryKind(file: string): 'directory' | 'file' | undefined {
  try {
    return statSync(file).isDirectory() ? 'directory' : 'file';
  } catch {
    return undefined;
  }
}

/** The error for an instance directory the user named that cannot be served. */
export function missingInstance(source: string, dir: string, fault: string): PorticoError {
  return new PorticoError(ErrorCode.CONFIG, `${source} names ${dir}, which ${fault}`, {
    expected:
      'an instance directory holding config/ (admin.json, config.json, routes/); with neither --base ' +
      'nor PORTICO_BASE, $HOME/.portico when it exists, else the embedded quickstart',
  });
}
