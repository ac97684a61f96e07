import type { Schema } from '../config/schema.ts';
import { stampCore } from '../core-identity.ts';
import { type Kind, PLUGIN_BRAND } from '../kinds.ts';
import type { Logger } from '../logging.ts';
import type { Heap } from './heap.ts';

/** Directories of the running instance, for heaplets that read or write files. */
export interface GatewayEnvironment {
  /** The instance directory (`$HOME/.portico`, `--base`, `PORTICO_BASE`). */
  baseDirectory: string;
  configDirectory: string;
  /** Where a Router that names no `directory` reads its route files; `<configDirectory>/routes` if unset. */
  routesDirectory?: string;
  scriptsDirectory: string;
  temporaryDirectory: string;
  /** Set by `portico validate`: routers create every declared object of every route to report all problems. */
  validating?: boolean;
  /** admin.json `limits.maxRouteFileSize`: routers refuse larger route files. */
  maxRouteFileSize?: number;
}

export interface HeapletContext<C> {
  /** The declared name, or a generated one for inline declarations (`{Type}@file#jsonPath`). */
  name: string;
  type: string;
  /** The configuration, validated, defaults applied, references replaced by the objects they name. */
  config: C;
  /** The heap the object is declared in, for lookups the configuration cannot express. */
  heap: Heap;
  logger: Logger;
  file: string | undefined;
  jsonPath: string;
  environment: GatewayEnvironment;
  /**
   * The `logSink` and `temporaryStorage` names the declaration gives, if any; when absent the object
   * uses the heap objects named `LogSink` and `TemporaryStorage` (spec, implicit properties).
   */
  logSink?: string;
  temporaryStorage?: string;
}

/** How one type of heap object is configured, created and destroyed. */
export interface Heaplet<C = any, T = any> {
  /** The type name configurations use (`HeaderFilter`). */
  type: string;
  /** Other names for the same type (`RedirectFilter` for `LocationHeaderFilter`). */
  aliases?: readonly string[];
  kind: Kind;
  /** The configuration schema: validation, defaults, configuration-time expressions, JSON Schema. */
  config: Schema<C>;
  create(context: HeapletContext<C>): T | Promise<T>;
  /** Releases what `create` acquired; called in reverse creation order, also after a failed load. */
  destroy?(object: T): void | Promise<void>;
}

export function defineHeaplet<C, T>(heaplet: Heaplet<C, T>): Heaplet<C, T> {
  return heaplet;
}

/** What a plugin package exports by default. */
export interface PluginManifest {
  readonly $$type: typeof PLUGIN_BRAND;
  /** The npm package name; must equal the package.json `name`. */
  readonly name: string;
  readonly version: string;
  /**
   * The range of @portico/gateway-core versions the plugin works with (semver), for a manifest
   * registered in hand. A plugin package leaves it out: its range is its package.json's
   * `peerDependencies["@portico/gateway-core"]`, the one place a release bumps it (a literal here
   * would stay behind and make the plugin refuse the new core); when both are given, package.json
   * wins.
   */
  readonly core?: string;
  readonly heaplets: readonly Heaplet[];
}

export function definePlugin(manifest: Omit<PluginManifest, '$$type'>): PluginManifest {
  return Object.freeze(stampCore<PluginManifest>({ $$type: PLUGIN_BRAND, ...manifest }));
}

/** What a decorator learns about the object it decorates. */
export interface DecorationInfo {
  /** The decorated object's name (generated for inline declarations). */
  name: string;
  kind: Kind;
  /** The heap that created the decorated object. */
  heap: Heap;
  /** The log sink the decorated object's declaration names (`"logSink": "..."`), if any. */
  logSink?: string;
  /** Where the decoration is written, so that a decorator reading its value can say where it is wrong. */
  file?: string | undefined;
  jsonPath?: string;
  /** Set for the decorations of the gateway's entry point (the top-level keys of config.json). */
  entryPoint?: boolean;
}

/**
 * What a heap object of kind `decorator` is. A declaration key named after the decorator (`"capture":
 * "all"`) hands its value to `decorate`, which returns the object to use instead of `target` (usually a
 * wrapper). Only filters and handlers are decorated.
 */
export interface Decorator {
  decorate(target: unknown, decoration: unknown, info: DecorationInfo): unknown | Promise<unknown>;
}

export function isDecorator(value: unknown): value is Decorator {
  return typeof (value as Decorator | null)?.decorate === 'function';
}
