import type { Schema } from '../config/schema.ts';
import { stampCore } from '../core-identity.ts';
import { type Kind, PLUGIN_BRAND } from '../kinds.ts';
import type { Logger } from '../logging.ts';
import type { HeapView } from './heap-view.ts';

/** Directories of the running instance, for heaplets that read or write files. */
export interface GatewayEnvironment {
  /** The instance directory (`$HOME/.portico`, `--base`, `PORTICO_BASE`). */
  baseDirectory: string;
  configDirectory: string;
  /** Where a Router that names no `directory` reads its route files; `<configDirectory>/routes` if unset. */
  routesDirectory?: string;
  scriptsDirectory: string;
  temporaryDirectory: string;
  /**
   * Set by `portico validate`: every declared object of every route is checked (schemas, references,
   * decorations), none is created, and every problem is reported.
   */
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
  heap: HeapView;
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
  /**
   * Where a setting of this object's configuration is written, for an error about it:
   * `new PorticoError(code, message, { ...configAt('key', 'alias'), expected })` names the file and
   * `$.heap[0].config.key.alias`. The one way to name a JSON path in `create`.
   */
  configAt(...keys: readonly (string | number)[]): { file?: string; jsonPath: string };
  /**
   * The text written for the setting at `keys` (`&{db.password}`, `${env['DB_PASSWORD']}`) when its
   * value came from the environment (a token, an expression reading `env` or `system`), else undefined: for a message made in `create` that would quote
   * the value, to describe it instead (it may be a password). `SecretSite.written` takes it.
   * Optional, so that a context a test writes by hand need not have it.
   */
  configWritten?(...keys: readonly (string | number)[]): string | undefined;
  /**
   * Registers what releases a resource `create` acquired (a connection pool, a timer, a file): run
   * when the heap is destroyed, newest first, and at once if `create` fails after acquiring it. The
   * one way a plugin releases what it holds.
   */
  onDestroy(release: () => void | Promise<void>): void;
}

/** How one type of heap object is configured, created and destroyed. */
export interface Heaplet<C = any, T = any, D = any> {
  /** The type name configurations use (`HeaderFilter`). */
  type: string;
  /** Other names for the same type (`RedirectFilter` for `LocationHeaderFilter`). */
  aliases?: readonly string[];
  kind: Kind;
  /** The configuration schema: validation, defaults, configuration-time expressions, JSON Schema. */
  config: Schema<C>;
  /**
   * Of a decorator: the schema of its decoration value (`"capture": "all"`). The heap parses each
   * decoration with it, at the decoration's own JSON path, before `decorate` gets the value; `portico
   * validate` checks decorations with it without creating the decorator.
   */
  decoration?: Schema<D>;
  /** Creates the object: the provisioning step, which may open connections, files and timers. */
  create(context: HeapletContext<C>): T | Promise<T>;
  /**
   * What `portico validate` runs instead of `create`, for a type whose objects load more
   * configuration that must be checked too (the core's Router reads its route files). It opens no
   * connection and keeps no file or timer. Without it, validating a declaration runs its schema and
   * resolves its references, and nothing else: `create` never runs while validating.
   */
  validate?(context: HeapletContext<C>): T | Promise<T>;
}

export function defineHeaplet<C, T, D = unknown>(heaplet: Heaplet<C, T, D>): Heaplet<C, T, D> {
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
  heap: HeapView;
  /**
   * How records name the decorated object: the route (or configuration file) it is declared in,
   * then its name (`10-api/backend`); an inline object by its type and JSON path.
   */
  objectPath: string;
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
  /** `decoration` is the value as the decorator heaplet's `decoration` schema parsed it. */
  decorate(target: unknown, decoration: unknown, info: DecorationInfo): unknown | Promise<unknown>;
}

export function isDecorator(value: unknown): value is Decorator {
  return typeof (value as Decorator | null)?.decorate === 'function';
}
