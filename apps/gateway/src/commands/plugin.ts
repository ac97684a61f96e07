import { parseArgs } from 'node:util';
import {
  CORE_VERSION,
  createMemoryLogger,
  discoverPluginPackages,
  summarizePluginPackage,
} from '@portico/gateway-core/runtime';
import { APP_PACKAGE_JSON, pluginDirectoriesOf } from '../server/gateway.ts';
import { locateInstance } from '../server/instance.ts';
import { type Output, UsageError } from './output.ts';

/**
 * `portico plugin list [--base DIR]`: every plugin package the gateway would discover (the app's own
 * dependencies, then `<instance>/plugins` and admin.json's `pluginDirectories`), with its version, its
 * types and the core range its package.json declares, checked against the running core. Nothing is
 * imported. Exit status 1 when a package would refuse to load for its core range.
 */
export async function pluginCommand(argv: string[], out: Output): Promise<number> {
  const { positionals, values } = parse(argv);
  const [action] = positionals;
  if (action !== 'list')
    throw new UsageError(
      action === undefined ? 'plugin needs an action: list' : `unknown plugin action '${action}'`,
    );
  const instance = locateInstance({ base: values.base });
  const admin = (instance.admin ?? {}) as { pluginDirectories?: unknown };
  const configured = Array.isArray(admin.pluginDirectories)
    ? admin.pluginDirectories.filter((d): d is string => typeof d === 'string')
    : [];
  const packages = await discoverPluginPackages(
    { appPackageJson: APP_PACKAGE_JSON, pluginDirectories: pluginDirectoriesOf(instance, configured) },
    createMemoryLogger(),
  );
  let incompatible = 0;
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
  }
  out.stdout(`${packages.length} plugin packages; running @portico/gateway-core ${CORE_VERSION}`);
  return incompatible > 0 ? 1 : 0;
}

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options: { base: { type: 'string' } } });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
