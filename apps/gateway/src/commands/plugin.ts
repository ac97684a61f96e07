import path from 'node:path';
import { parseArgs } from 'node:util';
import { isPorticoError } from '@portico/gateway-core';
import {
  CORE_VERSION,
  createMemoryLogger,
  discoverPluginPackages,
  type PluginPackage,
  summarizePluginPackage,
  TypeRegistry,
} from '@portico/gateway-core/runtime';
import { APP_PACKAGE_JSON, pluginDirectoriesOf } from '../server/gateway.ts';
import { directoryKind, locateInstance } from '../server/instance.ts';
import { type Output, UsageError } from './output.ts';
import { addPlugins } from './plugin-add.ts';

/**
 * `portico plugin add <spec...>` installs plugins into `<instance>/plugins` (plugin-add.ts).
 * `portico plugin list [--base DIR]`: every plugin package the gateway would discover (the app's own
 * dependencies, then `<instance>/plugins` and admin.json's `pluginDirectories`), with its version, its
 * types and the core range its package.json declares, checked against the running core. Nothing is
 * imported, unless `--load` asks to import each package as the gateway would. Exit status 1 when a
 * package would refuse to load.
 */
export async function pluginCommand(argv: string[], out: Output): Promise<number> {
  const { positionals, values } = parse(argv);
  const [action, ...specs] = positionals;
  if (action === 'add') {
    if (specs.length === 0) throw new UsageError('plugin add needs a package: a name, a tarball or a folder');
    const instance = locateInstance({ base: values.base });
    if (instance.quickstart) {
      throw new UsageError(
        'plugin add needs an instance directory: --base DIR, PORTICO_BASE, or an existing ~/.portico',
      );
    }
    return addPlugins(instance, specs, { force: values.force === true }, out);
  }
  if (action !== 'list')
    throw new UsageError(
      action === undefined ? 'plugin needs an action: list or add' : `unknown plugin action '${action}'`,
    );
  if (specs.length > 0) throw new UsageError(`plugin list takes no arguments (got '${specs[0]}')`);
  const instance = locateInstance({ base: values.base });
  const admin = (instance.admin ?? {}) as { pluginDirectories?: unknown };
  const written: unknown[] = Array.isArray(admin.pluginDirectories) ? admin.pluginDirectories : [];
  const configured = written.filter((d): d is string => typeof d === 'string');
  // A configured directory that is not there is named as the gateway warns of it when it starts.
  for (const [i, directory] of written.entries()) {
    if (typeof directory !== 'string') continue;
    const resolved = path.resolve(instance.base, directory);
    const kind = directoryKind(resolved);
    if (kind === 'directory') continue;
    out.stderr(
      `warning ${instance.adminFile} $.pluginDirectories[${i}]: ${resolved} ${kind === undefined ? 'does not exist' : 'is not a directory'}: no plugin is discovered there`,
    );
  }
  const packages = await discoverPluginPackages(
    { appPackageJson: APP_PACKAGE_JSON, pluginDirectories: pluginDirectoriesOf(instance, configured) },
    createMemoryLogger(),
  );
  let incompatible = 0;
  const registry = values.load ? new TypeRegistry({ logger: createMemoryLogger() }) : undefined;
  for (const pkg of packages) {
    const summary = await summarizePluginPackage(pkg, CORE_VERSION);
    const core =
      summary.coreRange === undefined
        ? 'core range: none declared'
        : `core ${summary.coreRange}: ${summary.compatible ? 'ok' : `does not accept ${CORE_VERSION}`}`;
    if (!summary.compatible && summary.coreRange !== undefined) incompatible++;
    out.stdout(
      `${summary.packageName} ${summary.version}  ${summary.types.join(', ')}  (${core})  ${summary.packageDir}`,
    );
    const failure = registry === undefined ? undefined : await loadFailure(registry, pkg);
    if (failure !== undefined) {
      out.stderr(failure);
      incompatible++;
    }
  }
  out.stdout(`${packages.length} plugin packages; running @portico/gateway-core ${CORE_VERSION}`);
  return incompatible > 0 ? 1 : 0;
}

/**
 * `--load`: imports the package as the gateway would on first use of one of its types (entry point,
 * manifest, core range, one core); the coded error when it would refuse, else undefined.
 */
async function loadFailure(registry: TypeRegistry, pkg: PluginPackage): Promise<string | undefined> {
  try {
    registry.registerPackage(pkg);
    const [type] = pkg.types;
    if (type !== undefined) await registry.resolve(type);
    return undefined;
  } catch (error) {
    return isPorticoError(error) ? error.toString() : `${pkg.packageName}: ${String(error)}`;
  }
}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: { base: { type: 'string' }, force: { type: 'boolean' }, load: { type: 'boolean' } },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
