import { type Heaplet, isPorticoError } from '@portico/gateway-core';
import {
  coreManifest,
  createMemoryLogger,
  discoverPluginPackages,
  type Kind,
  type PluginPackage,
  TypeRegistry,
} from '@portico/gateway-core/runtime';
import { APP_PACKAGE_JSON, pluginDirectoriesOf } from '../server/gateway.ts';
import type { Instance } from '../server/instance.ts';

/** A type the instance can create: its heaplet, with every name a configuration may give it. */
export interface InstalledType {
  readonly type: string;
  /** Its other names: the heaplet's and those its package.json maps to it. */
  readonly aliases: readonly string[];
  readonly kind: Kind;
  /** The npm package providing it (the core's for its own types). */
  readonly packageName: string;
  readonly heaplet: Heaplet;
}

export interface InstalledTypes {
  /** Sorted by type name. */
  readonly types: readonly InstalledType[];
  /** A package the gateway would refuse (its coded error): its types are left out. */
  readonly refusals: readonly string[];
}

/**
 * Every type the gateway would find for this instance, found as it finds them: the core's own,
 * then the plugin packages of the app's dependencies, `<instance>/plugins` and admin.json's
 * `pluginDirectories` (third-party plugins included), each package imported as on first use.
 */
export async function installedTypes(instance: Instance): Promise<InstalledTypes> {
  const registry = new TypeRegistry({ logger: createMemoryLogger() });
  registry.register(coreManifest);
  const types: InstalledType[] = coreManifest.heaplets.map((heaplet) => ({
    type: heaplet.type,
    aliases: [...(heaplet.aliases ?? [])],
    kind: heaplet.kind,
    packageName: coreManifest.name,
    heaplet,
  }));
  const refusals: string[] = [];
  const packages = await discoverPluginPackages(
    {
      appPackageJson: APP_PACKAGE_JSON,
      pluginDirectories: pluginDirectoriesOf(instance, configured(instance)),
    },
    createMemoryLogger(),
  );
  for (const pkg of packages) {
    try {
      types.push(...(await typesOf(registry, pkg)));
    } catch (error) {
      if (!isPorticoError(error)) throw error;
      refusals.push(error.toString());
    }
  }
  return { types: types.sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0)), refusals };
}

async function typesOf(registry: TypeRegistry, pkg: PluginPackage): Promise<InstalledType[]> {
  registry.registerPackage(pkg);
  const out: InstalledType[] = [];
  for (const type of pkg.types) {
    const heaplet = await registry.resolve(type);
    const declared = Object.entries(pkg.aliases ?? {}).flatMap(([alias, target]) =>
      target === type ? [alias] : [],
    );
    out.push({
      type,
      aliases: [...new Set([...(heaplet.aliases ?? []), ...declared])],
      kind: heaplet.kind,
      packageName: pkg.packageName,
      heaplet,
    });
  }
  return out;
}

/** admin.json's `pluginDirectories`, as written (the gateway warns of those that are not there). */
function configured(instance: Instance): string[] {
  const admin = (instance.admin ?? {}) as { pluginDirectories?: unknown };
  const written: unknown[] = Array.isArray(admin.pluginDirectories) ? admin.pluginDirectories : [];
  return written.filter((d): d is string => typeof d === 'string');
}
