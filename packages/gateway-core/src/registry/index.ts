export { CORE_DIRECTORY } from '../core-identity.ts';
export { CORE_VERSION } from './core-version.ts';
export { type DiscoveryOptions, discoverPluginPackages } from './discovery.ts';
export { importPackageEntry } from './entry.ts';
export { checkManifest, compareWithPackage } from './manifest.ts';
export {
  checkPluginPackage,
  type PluginPackage,
  type PluginPackageSummary,
  readPluginPackage,
  summarizePluginPackage,
} from './plugin-package.ts';
export {
  TypeRegistry,
  type TypeRegistryOptions,
  type UnknownTypeAdvice,
} from './registry.ts';
export { simpleClassName } from './type-name.ts';
