import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
 * directory). Reads admin.json and config.json as the gateway runtime reads an instance
 * (`readInstance`: comments and trailing commas are accepted; a file that does not parse is a coded
 * error naming the file, line and column).
 */
export function locateInstance(
  options: { base?: string | undefined; env?: NodeJS.ProcessEnv } = {},
): Instance {
  const env = options.env ?? process.env;
  const home = path.join(os.homedir(), '.portico');
  // An empty PORTICO_BASE counts as unset (not as the current directory).
  const chosen = options.base ?? (env.PORTICO_BASE || undefined) ?? (existsSync(home) ? home : undefined);
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
