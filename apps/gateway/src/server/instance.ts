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
  adminFile: string;
  configFile: string;
}

/**
 * Finds the instance directory: `--base DIR`, else `PORTICO_BASE`, else `$HOME/.portico` when it
 * exists, else the embedded quickstart (whose temporary files go to the system's temporary
 * directory). A directory named by `--base` or `PORTICO_BASE` must exist and hold `config/`: a
 * misspelt one is a coded error, not an empty gateway answering 404 to everything. Reads admin.json
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
  const chosen =
    named !== undefined
      ? namedBase(named, options.base !== undefined ? '--base' : 'PORTICO_BASE', env)
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
    adminFile: instance.adminFile ?? path.join(instance.base, 'config', 'admin.json'),
    configFile: instance.configFile ?? path.join(instance.base, 'config', 'config.json'),
  };
}

/**
 * The directory `--base` or `PORTICO_BASE` names, checked: it exists and holds `config/`. A relative
 * one is taken from where the user ran npm when the app's `npm start` script runs it (npm runs a
 * workspace's script in the workspace's folder, apps/gateway, and says where it was started in
 * INIT_CWD), else from the current directory.
 */
function namedBase(named: string, source: string, env: NodeJS.ProcessEnv): string {
  const npmStart = env.npm_lifecycle_event === 'start' && env.npm_package_name === '@portico/gateway';
  const dir = path.resolve(npmStart && env.INIT_CWD ? env.INIT_CWD : process.cwd(), named);
  const kind = (file: string) => {
    try {
      return statSync(file).isDirectory() ? 'directory' : 'file';
    } catch {
      return undefined;
    }
  };
  const found = kind(dir);
  const fault =
    found === undefined
      ? 'does not exist'
      : found !== 'directory'
        ? 'is not a directory'
        : kind(path.join(dir, 'config')) !== 'directory'
          ? 'has no config directory'
          : undefined;
  if (fault === undefined) return dir;
  throw new PorticoError(ErrorCode.CONFIG, `${source} names ${dir}, which ${fault}`, {
    expected:
      'an instance directory holding config/ (admin.json, config.json, routes/); with neither --base ' +
      'nor PORTICO_BASE, $HOME/.portico when it exists, else the embedded quickstart',
  });
}
