import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CORE_DIRECTORY, coreDirectoryOf } from '../core-identity.ts';
import { ErrorCode, isPorticoError, PorticoError } from '../errors.ts';
import type { TypeResolver } from '../heap/heap.ts';
import type { Heaplet, PluginManifest } from '../heap/heaplet.ts';
import { article, type Kind } from '../kinds.ts';
import { consoleLogger, type Logger } from '../logging.ts';
import { CORE_VERSION } from './core-version.ts';
import { type DiscoveryOptions, discoverPluginPackages } from './discovery.ts';
import { activeConditions, resolveEntry } from './entry.ts';
import { checkManifest, compareWithPackage } from './manifest.ts';
import { checkPluginPackage, kindOfType, type PluginPackage } from './plugin-package.ts';
import { simpleClassName } from './type-name.ts';

export interface TypeRegistryOptions {
  /** The core version plugins are checked against; this package's own version by default. */
  coreVersion?: string;
  logger?: Logger;
  /** Export conditions for importing plugin packages; those of this process by default. */
  conditions?: readonly string[];
  /** What an unknown type's error adds (the reference server: which package provides it); none by default. */
  unknownTypeAdvice?: UnknownTypeAdvice;
}

/**
 * What to say of a type no discovered package provides, after the unknown-type error's own message:
 * where it can be had (the reference server names the first-party package providing it and the
 * command that adds it). Undefined when there is nothing to say. Given the type as the configuration
 * wrote it (possibly a Java class name).
 */
export type UnknownTypeAdvice = (type: string) => string | undefined;

/** Where a set of types comes from: a manifest already in hand, or a package imported on demand. */
interface Provider {
  /** For messages: the package (or source) name, with its folder when it is a package. */
  readonly label: string;
  load(): Promise<ReadonlyMap<string, Heaplet>>;
}

interface Entry {
  readonly type: string;
  readonly kind: Kind;
  readonly provider: Provider;
}

/**
 * Maps type names (and aliases) to heaplets. Types are known as soon as a plugin is registered;
 * a package registered from its package.json is imported only when one of its types is first
 * resolved, so a gateway pays only for the plugins its configuration names.
 */
export class TypeRegistry implements TypeResolver {
  readonly #coreVersion: string;
  readonly #logger: Logger;
  readonly #conditions: readonly string[];
  readonly #advice: UnknownTypeAdvice | undefined;
  /** Canonical type → entry. */
  readonly #types = new Map<string, Entry>();
  /** Type or alias → entry. */
  readonly #names = new Map<string, Entry>();
  /** Manifests and package folders already registered, so registering one again changes nothing. */
  readonly #registered = new Set<unknown>();
  /** Where `discover` looked: looked at again for a type no package provided then. */
  readonly #discovered: DiscoveryOptions[] = [];

  constructor(options: TypeRegistryOptions = {}) {
    this.#coreVersion = options.coreVersion ?? CORE_VERSION;
    this.#logger = options.logger ?? consoleLogger;
    this.#conditions = options.conditions ?? activeConditions();
    this.#advice = options.unknownTypeAdvice;
  }

  /** Registers the heaplets of a manifest in hand (the core's own, or a plugin imported by the app). */
  register(manifest: PluginManifest, source: string = manifest?.name): void {
    const checked = checkManifest(manifest, source, this.#coreVersion);
    if (this.#registered.has(checked)) return;
    const heaplets = new Map(checked.heaplets.map((heaplet) => [heaplet.type, heaplet]));
    const provider: Provider = { label: `'${source}'`, load: async () => heaplets };
    this.#claim(
      provider,
      checked.heaplets.map((heaplet) => ({
        type: heaplet.type,
        kind: heaplet.kind,
        aliases: heaplet.aliases ?? [],
      })),
    );
    this.#registered.add(checked);
  }

  /**
   * Registers a package from its package.json `portico` block without importing it. Its types clash
   * with those already registered here and now, before any import.
   */
  registerPackage(pkg: PluginPackage): void {
    checkPluginPackage(pkg);
    const identity = `${path.resolve(pkg.packageDir)}\0${pkg.packageName}`;
    if (this.#registered.has(identity)) return;
    let loading: Promise<ReadonlyMap<string, Heaplet>> | undefined;
    const provider: Provider = {
      label: `'${pkg.packageName}' (${pkg.packageDir})`,
      // Concurrent first uses share one import; a failed import fails the same way every time.
      load: () => {
        loading ??= this.#importPackage(pkg);
        return loading;
      },
    };
    const aliases = Object.entries(pkg.aliases ?? {});
    this.#claim(
      provider,
      pkg.types.map((type) => ({
        type,
        kind: kindOfType(pkg, type),
        aliases: aliases.filter(([, target]) => target === type).map(([alias]) => alias),
      })),
    );
    this.#registered.add(identity);
  }

  /** Registers every plugin package the app depends on or a plugin directory holds; returns their names. */
  async discover(options: DiscoveryOptions): Promise<string[]> {
    const packages = await discoverPluginPackages(options, this.#logger);
    for (const pkg of packages) this.registerPackage(pkg);
    this.#discovered.push(options);
    return packages.map((pkg) => pkg.packageName);
  }

  /**
   * The heaplet for a type name, an alias, or a Java class name ending in a known type. With `kind`,
   * a type of another kind is a REFERENCE error saying what was expected.
   */
  async resolve(type: string, kind?: Kind): Promise<Heaplet> {
    const entry = this.#entryOf(type);
    if (entry === undefined) throw await this.#unknownType(type, kind);
    if (kind !== undefined && entry.kind !== kind) {
      throw new PorticoError(
        ErrorCode.REFERENCE,
        `type '${type}' is ${article(entry.kind)}, but ${article(kind)} is expected here`,
        { expected: `${article(kind)} type` },
      );
    }
    const heaplets = await entry.provider.load();
    return heaplets.get(entry.type)!;
  }

  /** The kind of a type, alias or Java class name, without importing anything; undefined if unknown. */
  kindOf(type: string): Kind | undefined {
    return this.#entryOf(type)?.kind;
  }

  /** The canonical type names (aliases left out), sorted, of one kind or of all. */
  knownTypes(kind?: Kind): string[] {
    return [...this.#types.values()]
      .filter((entry) => kind === undefined || entry.kind === kind)
      .map((entry) => entry.type)
      .sort();
  }

  #entryOf(type: string): Entry | undefined {
    const entry = this.#names.get(type);
    if (entry !== undefined) return entry;
    const simple = simpleClassName(type);
    return simple === undefined ? undefined : this.#names.get(simple);
  }

  /** Adds all the names of a provider, or none of them when one is taken. */
  #claim(provider: Provider, types: { type: string; kind: Kind; aliases: readonly string[] }[]): void {
    const added = new Map<string, Entry>();
    for (const { type, kind, aliases } of types) {
      const entry: Entry = { type, kind, provider };
      for (const name of [type, ...aliases]) {
        const taken = this.#names.get(name) ?? added.get(name);
        if (taken !== undefined) {
          const what = name === type ? `type '${name}'` : `alias '${name}' (of '${type}')`;
          throw new PorticoError(
            ErrorCode.DUPLICATE_TYPE,
            `the ${what} is provided by both ${taken.provider.label} and ${provider.label}`,
            { expected: 'each type and alias provided by one plugin only' },
          );
        }
        added.set(name, entry);
      }
    }
    for (const [name, entry] of added) {
      this.#names.set(name, entry);
      if (name === entry.type) this.#types.set(name, entry);
    }
  }

  async #importPackage(pkg: PluginPackage): Promise<ReadonlyMap<string, Heaplet>> {
    const file = path.join(pkg.packageDir, 'package.json');
    let module: { default?: unknown };
    let packageRange: string | undefined;
    try {
      const json = JSON.parse(await readFile(file, 'utf8')) as {
        name?: unknown;
        exports?: unknown;
        main?: unknown;
        peerDependencies?: Record<string, unknown>;
      };
      const peer = json.peerDependencies?.['@portico/gateway-core'];
      packageRange = typeof peer === 'string' ? peer : undefined;
      const entry = resolveEntry(pkg.packageDir, json, this.#conditions);
      this.#logger.debug(`importing plugin ${pkg.packageName} from ${entry}`);
      module = await import(pathToFileURL(entry).href);
    } catch (error) {
      if (isPorticoError(error)) throw error;
      throw new PorticoError(
        ErrorCode.MANIFEST,
        `plugin package '${pkg.packageName}' cannot be loaded: ${String(error)}`,
        { file, cause: error },
      );
    }
    try {
      refuseSecondCore(module.default, pkg.packageName);
      const manifest = checkManifest(module.default, pkg.packageName, this.#coreVersion, packageRange);
      if (packageRange === undefined && manifest.core === undefined) {
        throw new PorticoError(
          ErrorCode.MANIFEST,
          `plugin package '${pkg.packageName}' declares no range of @portico/gateway-core`,
          { expected: 'peerDependencies: { "@portico/gateway-core": ">=0.1.0 <1.0.0" } in its package.json' },
        );
      }
      compareWithPackage(manifest, pkg);
      return new Map(manifest.heaplets.map((heaplet) => [heaplet.type, heaplet]));
    } catch (error) {
      throw isPorticoError(error) && error.details.file === undefined ? error.at({ file }) : error;
    }
  }

  async #unknownType(type: string, kind: Kind | undefined): Promise<PorticoError> {
    const known = this.knownTypes(kind);
    const lower = type.toLowerCase();
    const near = [...this.#names.keys()].find((name) => name.toLowerCase() === lower);
    const hint = near === undefined ? '' : ` (did you mean '${near}'?)`;
    const list = known.length > 0 ? known.join(', ') : 'none';
    const late = await this.#providedSince(type);
    // Installed since discovery: to restart is what to do. Otherwise, whatever the app advises.
    const then =
      late === undefined
        ? this.#advice?.(type)
        : `'${late.packageName}' (${late.packageDir}) provides it, but was installed after the ` +
          `gateway discovered its plugins: plugins are loaded when the gateway starts, restart it to use ${late.packageName}`;
    return new PorticoError(
      ErrorCode.UNKNOWN_TYPE,
      `unknown type '${type}'${hint}; known ${kind === undefined ? '' : `${kind} `}types: ${list}${then === undefined ? '' : `; ${then}`}`,
      {
        expected: kind === undefined ? 'a known type' : `${article(kind)} type`,
        unknownType: type,
        ...(late === undefined ? {} : { pluginInstalledSince: late.packageName }),
      },
    );
  }

  /**
   * A plugin package providing `type` that the places `discover` looked now hold (their package.json
   * read again, nothing imported): one installed, or updated, since. Undefined when there is none, or
   * when nothing was discovered.
   */
  async #providedSince(type: string): Promise<PluginPackage | undefined> {
    const simple = simpleClassName(type);
    const provides = (pkg: PluginPackage) =>
      [...pkg.types, ...Object.keys(pkg.aliases ?? {})].some((name) => name === type || name === simple);
    for (const options of this.#discovered) {
      try {
        const found = (await discoverPluginPackages(options, QUIET)).find(provides);
        if (found !== undefined) return found;
      } catch {
        // The app's package.json cannot be read now: no hint, the error stands as it is.
      }
    }
    return undefined;
  }
}

/** Logs nothing: looking again for a late plugin must not repeat discovery's warnings. */
const QUIET: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/**
 * A plugin whose manifest was made by another copy of the core (npm installed the peer beside the
 * plugin) would run on separate module state: its types are refused, naming both copies.
 */
function refuseSecondCore(manifest: unknown, packageName: string): void {
  const theirs = coreDirectoryOf(manifest);
  if (theirs === undefined || theirs === CORE_DIRECTORY) return;
  throw new PorticoError(
    ErrorCode.SECOND_CORE,
    `plugin package '${packageName}' runs on its own copy of @portico/gateway-core (${theirs}), ` +
      `not the gateway's (${CORE_DIRECTORY}); remove that copy, and install plugins with ` +
      '`portico plugin add`, which leaves the core to the gateway',
    { expected: `@portico/gateway-core resolved from the plugin to ${CORE_DIRECTORY}` },
  );
}
