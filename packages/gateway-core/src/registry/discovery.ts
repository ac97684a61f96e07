import { readdir, readFile, realpath } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ErrorCode, PorticoError } from '../errors.ts';
import type { Logger } from '../logging.ts';
import { type PluginPackage, readPluginPackage } from './plugin-package.ts';

export interface DiscoveryOptions {
  /**
   * The running app's package.json: its `dependencies` are the plugins it may use, and so are its
   * `devDependencies` when the app is not itself an installed package (its real path is outside
   * `node_modules`: a checkout of its repository). None: no dependency is.
   */
  appPackageJson?: string;
  /** Folders laid out like node_modules (`<dir>/node_modules/<pkg>`, or `<dir>/<pkg>` directly). */
  pluginDirectories?: readonly string[];
}

/**
 * Finds the plugin packages an app can use: its declared dependencies that carry a `portico` block,
 * and every such package in the configured plugin directories. Names come from the app's
 * package.json and the directory listings only; nothing is guessed and nothing is imported.
 */
export async function discoverPluginPackages(
  options: DiscoveryOptions,
  logger: Logger,
): Promise<PluginPackage[]> {
  const found =
    options.appPackageJson === undefined ? [] : await fromDependencies(options.appPackageJson, logger);
  for (const directory of options.pluginDirectories ?? []) {
    found.push(...(await fromDirectory(path.resolve(directory))));
  }
  return found;
}

/**
 * The plugins among the app's dependencies. Its development dependencies count only where the app
 * is not an installed package: in its repository they are installed, and the reference server lists
 * the first-party plugins there so that its repository runs with all of them; installed from a
 * registry, they never are, and a package of one of their names that resolves from there (installed
 * beside the app by its user) is not one the app declared for itself. A development dependency that is
 * not installed is passed by quietly (debug); a dependency that is not installed is a warning.
 */
async function fromDependencies(appPackageJson: string, logger: Logger): Promise<PluginPackage[]> {
  const file = path.resolve(appPackageJson);
  let dependencies: Record<string, unknown>;
  let devDependencies: Record<string, unknown>;
  try {
    const json = JSON.parse(await readFile(file, 'utf8'));
    dependencies = json.dependencies ?? {};
    devDependencies = installedPackage(await realpath(file)) ? {} : (json.devDependencies ?? {});
  } catch (error) {
    throw new PorticoError(ErrorCode.CONFIG, `cannot read the app's package.json: ${String(error)}`, {
      file,
      cause: error,
    });
  }
  const require = createRequire(file);
  const found: PluginPackage[] = [];
  const names = new Set([...Object.keys(dependencies), ...Object.keys(devDependencies)]);
  for (const name of [...names].sort()) {
    const development = !Object.hasOwn(dependencies, name);
    let packageJson: string;
    try {
      packageJson = require.resolve(`${name}/package.json`);
    } catch (error) {
      // A package that does not export its package.json cannot be a plugin (the block is the contract).
      const code = (error as { code?: string }).code;
      if (code === 'ERR_PACKAGE_PATH_NOT_EXPORTED')
        logger.debug(`dependency ${name} is not a Portico plugin`);
      else if (development) logger.debug(`development dependency ${name} of ${file} is not installed`);
      else logger.warn(`dependency ${name} of ${file} is not installed; its types are unavailable`);
      continue;
    }
    const pkg = await readPluginPackage(path.dirname(packageJson));
    if (pkg) found.push(pkg);
  }
  return found;
}

/** Whether a file lies in an installed package (under some `node_modules`), not in a checkout. */
function installedPackage(realFile: string): boolean {
  return realFile.split(path.sep).includes('node_modules');
}

async function fromDirectory(directory: string): Promise<PluginPackage[]> {
  const candidates = [
    ...(await packageFolders(path.join(directory, 'node_modules'))),
    ...(await packageFolders(directory)),
  ];
  const found: PluginPackage[] = [];
  for (const candidate of candidates) {
    // The real path, so that a package reached through a link and directly counts once.
    const real = await realpath(candidate).catch(() => undefined);
    const pkg = real === undefined ? undefined : await readPluginPackage(real);
    if (pkg) found.push(pkg);
  }
  return found;
}

/** `<dir>/<pkg>` and `<dir>/@scope/<pkg>`, sorted; an absent folder has none. */
async function packageFolders(directory: string): Promise<string[]> {
  const names = await list(directory);
  const folders: string[] = [];
  for (const name of names) {
    if (name.startsWith('.') || name === 'node_modules') continue;
    if (!name.startsWith('@')) {
      folders.push(path.join(directory, name));
      continue;
    }
    for (const inner of await list(path.join(directory, name))) {
      if (!inner.startsWith('.')) folders.push(path.join(directory, name, inner));
    }
  }
  return folders;
}

async function list(directory: string): Promise<string[]> {
  try {
    const entries = await readdir(directory, { withFileTypes: true });
    return entries
      .filter((entry) => entry.isDirectory() || entry.isSymbolicLink())
      .map((entry) => entry.name)
      .sort();
  } catch {
    return [];
  }
}
