/**
 * The types a gateway can create: the core's own, the manifests an embedder registers, and the
 * plugin packages discovered in the app's dependencies and in the instance's plugin directories.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { coreManifest } from '../builtins/index.ts';
import type { PluginManifest } from '../heap/heaplet.ts';
import type { Logger } from '../logging.ts';
import { TypeRegistry, type UnknownTypeAdvice } from '../registry/registry.ts';
import type { Instance } from './instance.ts';

/**
 * The type registry of a gateway loaded from `instance`: the core's manifest, the embedder's
 * (GatewayOptions' `plugins`), then the packages discovered (from its `appPackageJson` on). `configured` is admin.json's `pluginDirectories`; without an instance
 * directory (`inMemory`), `<instance>/plugins` is not read.
 */
export async function gatewayRegistry(
  embedder: {
    plugins?: readonly PluginManifest[];
    appPackageJson?: string;
    unknownTypeAdvice?: UnknownTypeAdvice;
  },
  instance: Instance,
  configured: readonly string[],
  inMemory: boolean,
  logger: Logger,
): Promise<TypeRegistry> {
  const registry = new TypeRegistry(
    embedder.unknownTypeAdvice === undefined ? {} : { unknownTypeAdvice: embedder.unknownTypeAdvice },
  );
  registry.register(coreManifest);
  for (const manifest of embedder.plugins ?? []) registry.register(manifest);
  const directories = pluginDirectoriesOf(instance, configured);
  // pluginDirectoriesOf lists `<instance>/plugins` first, then admin.json's, in their order.
  const [, ...fromAdmin] = directories;
  warnMissingPluginDirectories(fromAdmin, instance.adminFile, logger);
  await registry.discover({
    ...(embedder.appPackageJson === undefined ? {} : { appPackageJson: embedder.appPackageJson }),
    pluginDirectories: inMemory ? fromAdmin : directories,
  });
  return registry;
}

/** Where an instance's plugins are installed: `<instance>/plugins`, then admin.json's `pluginDirectories`. */
export function pluginDirectoriesOf(instance: Instance, configured: readonly string[]): string[] {
  return [path.join(instance.base, 'plugins'), ...configured.map((d) => path.resolve(instance.base, d))];
}

/**
 * Says, once per load, which of admin.json's `pluginDirectories` is not a directory (a misspelt or
 * not yet created path): nothing is discovered there, and plugins are only discovered at start.
 */
function warnMissingPluginDirectories(
  directories: readonly string[],
  file: string | undefined,
  logger: Logger,
): void {
  for (const [i, directory] of directories.entries()) {
    const fault = directoryFault(directory);
    if (fault === undefined) continue;
    logger.warn(
      `pluginDirectories[${i}] names ${directory}, which ${fault}: no plugin is discovered there ` +
        '(plugin directories are read when the gateway starts; restart it once the directory exists)',
      { ...(file === undefined ? {} : { file }), jsonPath: `$.pluginDirectories[${i}]` },
    );
  }
}

/** Why `directory` cannot be listed: `does not exist`, `is not a directory`; undefined when it can. */
function directoryFault(directory: string): string | undefined {
  try {
    return statSync(directory).isDirectory() ? undefined : 'is not a directory';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT'
      ? 'does not exist'
      : `cannot be read (${(error as Error).message})`;
  }
}
