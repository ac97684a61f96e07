import { ErrorCode, PorticoError } from '../errors.ts';
import type { Heaplet, PluginManifest } from '../heap/heaplet.ts';
import { article, KINDS, PLUGIN_BRAND } from '../kinds.ts';
import { coreRangeAllows } from './core-range.ts';
import { kindOfType, type PluginPackage } from './plugin-package.ts';

/**
 * Checks that a value is a plugin manifest this core can use: branded by definePlugin, made for a
 * compatible core, and listing well-formed heaplets. Throws a MANIFEST error naming `source`.
 */
export function checkManifest(
  value: unknown,
  source: string,
  coreVersion: string,
  /** The package's `peerDependencies["@portico/gateway-core"]`, when the manifest came from a package. */
  packageRange?: string,
): PluginManifest {
  const fail = (problem: string, expected?: string) =>
    new PorticoError(ErrorCode.MANIFEST, `plugin '${source}': ${problem}`, expected ? { expected } : {});
  const manifest = value as PluginManifest | null | undefined;
  if (manifest?.$$type !== PLUGIN_BRAND) {
    throw fail('is not a Portico plugin manifest', 'a default export made with definePlugin({...})');
  }
  if (typeof manifest.name !== 'string' || manifest.name === '') throw fail('the manifest has no name');
  const range = packageRange ?? manifest.core;
  if (range !== undefined) {
    // A pre-release core (0.2.0-next.1) still satisfies the ranges written for its release line.
    const allowed = typeof range === 'string' ? coreRangeAllows(coreVersion, range) : undefined;
    if (allowed === undefined) {
      throw fail(
        `the @portico/gateway-core range is not a semver range: ${JSON.stringify(range)}`,
        'a peerDependencies entry such as ">=0.1.0 <1.0.0"',
      );
    }
    if (!allowed) {
      throw fail(
        `needs @portico/gateway-core ${range}, but ${coreVersion} is running`,
        `a plugin version made for @portico/gateway-core ${coreVersion}`,
      );
    }
  }
  if (!Array.isArray(manifest.heaplets)) throw fail('"heaplets" is not an array');
  manifest.heaplets.forEach((heaplet, i) => {
    const problem = heapletProblem(heaplet);
    if (problem) throw fail(`heaplet ${i} (${String(heaplet?.type)}) ${problem}`);
  });
  const types = manifest.heaplets.map((heaplet) => heaplet.type);
  const repeated = types.find((type, i) => types.indexOf(type) !== i);
  if (repeated !== undefined) throw fail(`lists the type '${repeated}' twice`);
  return manifest;
}

function heapletProblem(heaplet: Heaplet | null | undefined): string | undefined {
  if (heaplet === null || typeof heaplet !== 'object') return 'is not an object';
  if (typeof heaplet.type !== 'string' || heaplet.type === '') return 'has no type name';
  if (!KINDS.includes(heaplet.kind)) return `has the unknown kind '${String(heaplet.kind)}'`;
  // Checked by shape rather than instanceof: a plugin may bring its own copy of gateway-core.
  if (typeof heaplet.config?.parse !== 'function') return 'has no config schema';
  if (typeof heaplet.create !== 'function') return 'has no create function';
  if (heaplet.decoration !== undefined && typeof heaplet.decoration?.parse !== 'function')
    return 'has a decoration that is not a schema';
  if ('destroy' in heaplet)
    return 'has a destroy: register what releases a resource with onDestroy in create instead';
  if (heaplet.aliases !== undefined && !(Array.isArray(heaplet.aliases) && heaplet.aliases.every(isName))) {
    return 'has aliases that are not an array of names';
  }
  return undefined;
}

/**
 * Checks a package's manifest against what its package.json promised: the same name, exactly the
 * same types (in any order), each of the promised kind, and the same aliases.
 */
export function compareWithPackage(manifest: PluginManifest, pkg: PluginPackage): void {
  const fail = (difference: string) =>
    new PorticoError(
      ErrorCode.MANIFEST,
      `plugin package '${pkg.packageName}': its manifest and its package.json disagree: ${difference}`,
      { file: `${pkg.packageDir}/package.json`, jsonPath: '$.portico' },
    );
  if (manifest.name !== pkg.packageName) {
    throw fail(`the manifest is named '${manifest.name}'`);
  }
  const provided = manifest.heaplets.map((heaplet) => heaplet.type);
  const missing = pkg.types.filter((type) => !provided.includes(type));
  const extra = provided.filter((type) => !pkg.types.includes(type));
  if (missing.length > 0 || extra.length > 0) {
    const parts = [
      missing.length > 0 ? `package.json lists ${quote(missing)} but the manifest does not provide it` : '',
      extra.length > 0 ? `the manifest provides ${quote(extra)} but package.json does not list it` : '',
    ];
    throw fail(parts.filter(Boolean).join('; '));
  }
  for (const heaplet of manifest.heaplets) {
    const promised = kindOfType(pkg, heaplet.type);
    if (heaplet.kind !== promised) {
      throw fail(
        `'${heaplet.type}' is ${article(heaplet.kind)} in the manifest, ${article(promised)} in package.json`,
      );
    }
  }
  const aliases = (entries: [string, string][]) =>
    entries.map(([alias, type]) => `${alias} -> ${type}`).sort();
  const declared = aliases(Object.entries(pkg.aliases ?? {}));
  const given = aliases(
    manifest.heaplets.flatMap((h) => (h.aliases ?? []).map((a): [string, string] => [a, h.type])),
  );
  if (declared.join() !== given.join()) {
    throw fail(`aliases in package.json [${declared.join(', ')}], in the manifest [${given.join(', ')}]`);
  }
}

function quote(types: string[]): string {
  return types.map((type) => `'${type}'`).join(', ');
}

function isName(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}
