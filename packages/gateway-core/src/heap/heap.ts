import { mergeMarked, writtenFromEnvironment } from '../config/from-environment.ts';
import { likelyMeant } from '../config/near-names.ts';
import { checkConfig, type ParseOptions, parseConfig, parseConfigNoting } from '../config/parse-config.ts';
import { childPath } from '../config/parse-context.ts';
import { Reference } from '../config/reference.ts';
import type { Schema } from '../config/schema.ts';
import { quoteValue } from '../config/secret-redaction.ts';
import { ErrorCode, isPorticoError, PorticoError } from '../errors.ts';
import { collectRequestBodyReads, markRequestBodyReader, usedObject } from '../expression/body-reads.ts';
import { openigObject } from '../expression/environment.ts';
import { isRecord } from '../is-record.ts';
import { article, type Kind } from '../kinds.ts';
import type { Logger } from '../logging.ts';
import { providerOf, type SecretStore, type SecretsProvider } from '../secrets/secrets.ts';
import { CreatedObjects, type Release, release } from './created-objects.ts';
import { Creation, runCreation, waitFor } from './creation.ts';
import {
  type Declaration,
  type DeclarationResult,
  type Decoration,
  problem,
  readDeclaration,
  readHeap,
  type Where,
} from './declaration.ts';
import {
  type DecorationStep,
  type DecorationToApply,
  decorate,
  globalSteps,
  localSteps,
  notDecoratable,
  objectPath,
} from './decorations.ts';
import { badDecoratorName, declaredDecoratorNameError, fieldClash } from './decorator-names.ts';
import { combine, cycleError, locate, located, problemsOf, type Site } from './errors.ts';
import type { HeapView } from './heap-view.ts';
import {
  type Decorator,
  type GatewayEnvironment,
  type Heaplet,
  type HeapletContext,
  isDecorator,
} from './heaplet.ts';
import { nameHeapObject } from './object-names.ts';
import { resolveReferences } from './references.ts';
import { readSecretsBlock, type SecretsBlockEntry } from './secrets-block.ts';
import { isValidatedObject, ValidatedObject } from './validated-object.ts';

/**
 * What the heap asks of the type registry (`TypeRegistry` in registry/). An interface, because the
 * registry depends on heap/ for the heaplet types, so heap/ may not depend on registry/.
 */
export interface TypeResolver {
  /** The kind of a type, alias or Java class name, without importing anything; undefined if unknown. */
  kindOf(type: string): Kind | undefined;
  /** The heaplet for a type; throws UNKNOWN_TYPE, or REFERENCE when it is not of `kind`. */
  resolve(type: string, kind?: Kind): Promise<Heaplet>;
}

export interface HeapOptions {
  registry: TypeResolver;
  logger: Logger;
  environment: GatewayEnvironment;
  /** The heap names are looked up in after this one (a route's heap has the Router's as parent). */
  parent?: Heap;
  /** The configuration file the declarations come from, for error messages. */
  file?: string;
  /** Where the heap is in its file; the default path of `declare` (`$.heap`). */
  jsonPath?: string;
  /** Configuration-time expression bindings; a child sees its parent's, and overrides them. */
  properties?: Record<string, unknown>;
  /** Top-level heap only: declarations used for names no heap declares (ClientHandler, LogSink ...). */
  defaults?: readonly unknown[];
  /** Decorations applied to every filter and handler this heap creates, after their own. */
  globalDecorations?: readonly Decoration[];
  /**
   * The name of the log sink objects of this heap (and its children) write to when their declaration
   * names none: config.json's `logSink`. `LogSink` unless a parent says otherwise.
   */
  logSink?: string;
  /** Likewise for the temporary storage (config.json's `temporaryStorage`); `TemporaryStorage`. */
  temporaryStorage?: string;
  /**
   * The route whose heap this is (a child heap of a route's heap belongs to it too), named with the
   * object by the warnings of its objects' expressions.
   */
  route?: string;
}

export type ChildHeapOptions = Omit<
  HeapOptions,
  'registry' | 'parent' | 'defaults' | 'logger' | 'environment'
> &
  Partial<Pick<HeapOptions, 'logger' | 'environment'>>;

/** A name's place in a heap: its declaration and the state of its object. */
interface Slot {
  readonly declaration: Declaration | undefined;
  /** Why a declaration that could not be read cannot be created. */
  readonly problems: readonly PorticoError[];
  creating: { promise: Promise<unknown>; creation: Creation } | undefined;
  created: { value: unknown } | undefined;
}

const NOWHERE: Site = { file: undefined, jsonPath: undefined };

/** The fields of a heap object declaration; its other keys are decorations. */
const DECLARATION_FIELDS = ['name', 'type', 'config'] as const;

/**
 * Heap objects declared by configuration (`{"name", "type", "config"}`), created on first use.
 * Names are looked up in this heap, then its parents, then the top-level defaults. Creating an object
 * resolves its type, validates its config strictly, creates the objects it references, creates it,
 * then decorates it; `destroy` releases everything created, newest first.
 */
export class Heap implements HeapView {
  readonly registry: TypeResolver;
  readonly logger: Logger;
  readonly environment: GatewayEnvironment;
  readonly parent: Heap | undefined;
  readonly file: string | undefined;
  readonly jsonPath: string;
  readonly properties: Readonly<Record<string, unknown>>;
  /** See HeapOptions.logSink. */
  readonly logSinkName: string;
  /** See HeapOptions.temporaryStorage. */
  readonly temporaryStorageName: string;
  /** See HeapOptions.route. */
  readonly route: string | undefined;
  readonly #globals: readonly DecorationStep[];
  readonly #slots = new Map<string, Slot>();
  // The two maps below are made when first needed: a route's heap has no defaults and often no
  // inline declaration, and an empty Map is ~200 bytes (bench/README.md, "Idle memory").
  /** The gateway's default objects (the top-level heap only). */
  #defaults: Map<string, Slot> | undefined;
  /** Inline declarations, by the declaration object itself: resolving one again gives the same object. */
  #inline: Map<object, Slot> | undefined;
  readonly #objects = new CreatedObjects();
  #destruction: Promise<void> | undefined;
  /** The top-level heap's values shared by the whole gateway (HeapView.shared). */
  #sharedValues: Map<string, unknown> | undefined;
  /** The stores of the `secrets` block of this heap's file, in order (declareSecrets). */
  #secretsBlock: readonly SecretsBlockEntry[] = [];
  #secrets: SecretsProvider | undefined;
  #secretStores: Promise<readonly SecretStore[]> | undefined;

  constructor(options: HeapOptions) {
    this.registry = options.registry;
    this.logger = options.logger;
    this.environment = options.environment;
    this.parent = options.parent;
    this.file = options.file;
    this.jsonPath = options.jsonPath ?? '$.heap';
    // The top-level heap binds `openig` (the instance's directories) as the incumbents do; a
    // property of the same name overrides it.
    // A heap that adds no property or global decoration shares its parent's (both are read-only).
    this.properties =
      options.parent !== undefined && isEmpty(options.properties)
        ? options.parent.properties
        : mergeMarked(
            options.parent?.properties ?? { openig: openigObject(options.environment) },
            options.properties,
          );
    this.logSinkName = options.logSink ?? options.parent?.logSinkName ?? 'LogSink';
    this.temporaryStorageName =
      options.temporaryStorage ?? options.parent?.temporaryStorageName ?? 'TemporaryStorage';
    this.route = options.route ?? options.parent?.route;
    const own = globalSteps(options.globalDecorations ?? [], options.file);
    this.#globals =
      options.parent !== undefined && own.length === 0
        ? options.parent.#globals
        : [...(options.parent === undefined ? [] : options.parent.#globals), ...own];
    if (options.defaults !== undefined) this.#setDefaults(options.defaults);
  }

  /**
   * Adds declarations (an array, or the older `{"objects": [...]}`). Shapes are checked now, configs
   * when each object is created. Returns every problem found, each with its file and JSON path.
   */
  declare(declarations: unknown, jsonPath: string = this.jsonPath): PorticoError[] {
    const { results, errors: all } = readHeap(declarations, { file: this.file, jsonPath });
    // Without results, the problem is the heap itself (not an array); otherwise each result has its own.
    return [...(results.length === 0 ? all : []), ...this.#add(results)];
  }

  /**
   * Adds the `secrets` block of this heap's file (`{"stores": [...]}`): its inline stores are
   * declared here, and its stores come first in `secrets`. Returns every problem found.
   */
  declareSecrets(block: unknown, jsonPath = '$.secrets'): PorticoError[] {
    const { entries, errors } = readSecretsBlock(block, { file: this.file, jsonPath });
    const declared = entries.flatMap((entry) => (entry.declared === undefined ? [] : [entry.declared]));
    this.#secretsBlock = entries.filter((entry) => entry.name !== undefined);
    return [...errors, ...this.#add(declared)];
  }

  get secrets(): SecretsProvider {
    this.#secrets ??= providerOf(() => this.secretStores());
    return this.#secrets;
  }

  /**
   * The stores `secrets` asks, created on first use: the `secrets` block's, this heap's other secret
   * stores in declaration order, then the parent's. The loaders call it to report a broken store of
   * a `secrets` block when the file loads.
   */
  secretStores(): Promise<readonly SecretStore[]> {
    this.#secretStores ??= this.#collectSecretStores().catch((error: unknown) => {
      // A store that failed is tried (and reported) again by the next query.
      this.#secretStores = undefined;
      throw error;
    });
    return this.#secretStores;
  }

  async #collectSecretStores(): Promise<readonly SecretStore[]> {
    const sites = new Map(this.#secretsBlock.map((entry) => [entry.name!, entry.jsonPath]));
    for (const [name, slot] of this.#slots) {
      const type = slot.declaration?.type;
      if (type !== undefined && !sites.has(name) && this.registry.kindOf(type) === 'secret-store') {
        sites.set(name, slot.declaration!.jsonPath);
      }
    }
    const own: SecretStore[] = [];
    for (const [name, jsonPath] of sites) {
      own.push(
        (await this.#lookup(name, 'secret-store', undefined, { file: this.file, jsonPath })) as SecretStore,
      );
    }
    const inherited = this.parent === undefined ? [] : await this.parent.secretStores();
    return [...own, ...inherited.filter((store) => !own.includes(store))];
  }

  /** Adds declarations read from this heap's file; returns their problems. */
  #add(results: readonly DeclarationResult[]): PorticoError[] {
    const errors: PorticoError[] = [];
    const added: Declaration[] = [];
    for (const result of results) {
      errors.push(...result.errors);
      if (result.name === undefined) continue;
      if (this.#slots.has(result.name)) {
        errors.push(
          new PorticoError(
            ErrorCode.DUPLICATE_NAME,
            `the heap already declares an object named '${result.name}'`,
            {
              ...(this.file === undefined ? {} : { file: this.file }),
              jsonPath: childPath(result.jsonPath, 'name'),
              expected: 'a name unique in its heap',
            },
          ),
        );
        continue;
      }
      const refused =
        result.declaration !== undefined && this.registry.kindOf(result.declaration.type) === 'decorator'
          ? declaredDecoratorNameError(result.declaration, this.logger)
          : undefined;
      if (refused !== undefined) {
        // Unusable: using the name reports the problem again rather than "no object named".
        errors.push(refused);
        this.#slots.set(result.name, slotOf({ ...result, declaration: undefined, errors: [refused] }));
        continue;
      }
      this.#slots.set(result.name, slotOf(result));
      if (result.declaration !== undefined) added.push(result.declaration);
    }
    // Checked once every name of this heap is known: a decoration may name a decorator declared later.
    for (const declaration of added) errors.push(...this.#localDecorationProblems(declaration));
    return errors;
  }

  /**
   * The problems of the heap's own `globalDecorators`: names that are not decorators in scope. For
   * the route loader, so that a mistake is reported even when no object of the route is created.
   */
  globalDecorationProblems(): PorticoError[] {
    const parentCount = this.parent === undefined ? 0 : this.parent.#globals.length;
    return this.#globals.slice(parentCount).flatMap((step) => this.#decoratorProblem(step, [], true) ?? []);
  }

  /**
   * What a decoration key naming nothing in scope means, beside the `fields` of the place where it
   * is written. A likely misspelling of one of those fields or of a decorator in scope (`condtion`,
   * `captur`) is an error saying what was meant: ignoring it could change what the configuration
   * does (a route without its condition takes every request). Any other name is ignored, as the
   * incumbents ignore it, with a warning when `warn` is set: real configurations carry such keys
   * (`"bindings": {...}` in a published config.json).
   */
  unknownDecoration(
    name: string,
    where: Where,
    fields: Iterable<string>,
    warn = true,
  ): PorticoError | undefined {
    const decorators = this.#decoratorsInScope();
    const meant = likelyMeant(name, [...fields, ...decorators]);
    if (meant !== undefined) {
      return new PorticoError(
        ErrorCode.REFERENCE,
        `unknown decorator or field '${name}'; did you mean '${meant}'? decorators in scope: ${decorators.join(', ') || 'none'}`,
        { ...located(where), expected: `'${meant}', or the name of a decorator heap object` },
      );
    }
    if (warn) {
      this.logger.warn(
        `'${name}' names no field and no decorator in scope: ignored, as the incumbents ignore it`,
        { ...located(where) },
      );
    }
    return undefined;
  }

  /** The object named `name`, created on first use; with `kind`, it must be of that kind. */
  get<T = unknown>(name: string, kind?: Kind): Promise<T> {
    return this.#lookup(name, kind, undefined, NOWHERE) as Promise<T>;
  }

  /**
   * The object a reference stands for: a name, or an inline declaration (created once, owned by this
   * heap). For heaplets that look objects up themselves; `jsonPath` says where the reference is.
   */
  resolve<T = unknown>(
    ref: Reference | string | Record<string, unknown>,
    kind: Kind,
    jsonPath?: string,
  ): Promise<T> {
    if (ref instanceof Reference) {
      const site = { file: ref.file ?? this.file, jsonPath: ref.jsonPath, reference: ref };
      const object = this.#resolveValue(ref.value, kind, ref.types, site);
      const guard = ref.guard;
      if (guard === undefined) return object as Promise<T>;
      return object.then((value) => {
        if (guard.test(value) || isValidatedObject(value)) return value as T;
        const name = typeof ref.value === 'string' ? `'${ref.value}'` : 'the inline declaration';
        throw new PorticoError(ErrorCode.REFERENCE, `${name} is not ${guard.expected}`, {
          ...located(site),
          expected: `the name of ${guard.expected}`,
        });
      });
    }
    return this.#resolveValue(ref, kind, undefined, { file: this.file, jsonPath }) as Promise<T>;
  }

  /** Creates every object this heap declares; returns the problems instead of stopping at the first. */
  async createAll(): Promise<PorticoError[]> {
    const errors: PorticoError[] = [];
    const seen = new Set<string>();
    for (const slot of [...this.#slots.values()]) {
      try {
        await this.#instantiate(slot, undefined, undefined, NOWHERE);
      } catch (error) {
        const where = { file: this.file, jsonPath: slot.declaration?.jsonPath ?? this.jsonPath };
        // An object that failed because a dependency did repeats that dependency's problems.
        for (const found of problemsOf(locate(error, where, 'cannot create'))) {
          const key = found.toString();
          if (!seen.has(key)) errors.push(found);
          seen.add(key);
        }
      }
    }
    return errors;
  }

  /** Destroys every object this heap created, newest first; safe to call more than once. */
  destroy(): Promise<void> {
    this.#destruction ??= this.#destroyAll();
    return this.#destruction;
  }

  /** The objects this heap has created and not destroyed, oldest first, as created (undecorated). */
  created(): unknown[] {
    return this.#objects.list();
  }

  /** The names this heap declares, in declaration order (parents and defaults left out). */
  names(): string[] {
    return [...this.#slots.keys()];
  }

  /** Whether `get(name)` finds a declaration: here, in a parent, or among the defaults. */
  has(name: string): boolean {
    return this.#find(name) !== undefined;
  }

  shared<T>(key: string, make: (logger: Logger) => T): T {
    if (this.parent !== undefined) return this.parent.shared(key, make);
    const values = (this.#sharedValues ??= new Map());
    if (!values.has(key)) values.set(key, make(this.logger));
    return values.get(key) as T;
  }

  /** Every name `get` can find from here, sorted. */
  namesInScope(): string[] {
    const names = new Set<string>();
    for (let heap: Heap | undefined = this; heap; heap = heap.parent) {
      for (const name of heap.#slots.keys()) names.add(name);
      for (const name of heap.#defaults?.keys() ?? []) names.add(name);
    }
    return [...names].sort();
  }

  /** A heap whose names fall back to this one's (a route's heap). */
  child(options: ChildHeapOptions = {}): Heap {
    return new Heap({
      ...options,
      registry: this.registry,
      logger: options.logger ?? this.logger,
      environment: options.environment ?? this.environment,
      parent: this,
    });
  }

  #setDefaults(defaults: readonly unknown[]): void {
    if (this.parent !== undefined) {
      throw new PorticoError(ErrorCode.CONFIG, 'default objects belong to the top-level heap only');
    }
    const { results, errors } = readHeap(defaults, { file: undefined, jsonPath: 'defaults' });
    // The defaults come from the gateway's code, not from an operator: a bad one is a bug.
    if (errors.length > 0) throw errors[0];
    for (const result of results) {
      this.#defaults ??= new Map();
      if (this.#defaults.has(result.name!)) {
        throw new PorticoError(ErrorCode.DUPLICATE_NAME, `two default objects are named '${result.name}'`);
      }
      this.#defaults.set(result.name!, slotOf(result));
    }
  }

  #find(name: string): { heap: Heap; slot: Slot } | undefined {
    for (let heap: Heap | undefined = this; heap; heap = heap.parent) {
      const slot = heap.#slots.get(name) ?? heap.#defaults?.get(name);
      if (slot !== undefined) return { heap, slot };
    }
    return undefined;
  }

  #resolveValue(value: unknown, kind: Kind, types: readonly string[] | undefined, site: Site) {
    // An object reading the request body makes whatever is being loaded with it read it too.
    if (typeof value === 'string' && value !== '')
      return this.#lookup(value, kind, types, site).then(usedObject);
    if (isRecord(value)) return this.#createInline(value, kind, types, site).then(usedObject);
    return Promise.reject(
      problem(
        site.file,
        site.jsonPath ?? '$',
        `${quoteValue(value, site.reference, 'value')} is not a reference`,
        'the name of a heap object or an inline declaration',
      ),
    );
  }

  async #lookup(name: string, kind: Kind | undefined, types: readonly string[] | undefined, site: Site) {
    this.#assertAlive(name);
    const found = this.#find(name);
    if (found === undefined) {
      // A name a token took from the environment is described: it may be a secret put there by mistake.
      const named =
        writtenFromEnvironment(site.reference, 'value') === undefined
          ? `'${name}'`
          : quoteValue(name, site.reference, 'value');
      throw new PorticoError(
        ErrorCode.REFERENCE,
        `no heap object named ${named}; names in scope: ${this.namesInScope().join(', ') || 'none'}`,
        { ...located(site), expected: `the name of ${kind === undefined ? 'a heap object' : article(kind)}` },
      );
    }
    return found.heap.#instantiate(found.slot, kind, types, site);
  }

  #createInline(
    value: Record<string, unknown>,
    kind: Kind,
    types: readonly string[] | undefined,
    site: Site,
  ) {
    this.#assertAlive(String(value.type));
    let slot = this.#inline?.get(value);
    if (slot === undefined) {
      const file = site.file ?? this.file;
      const jsonPath = site.jsonPath ?? '$';
      const name = (type: string) => `${type}${file === undefined ? '' : `@${file}`}#${jsonPath}`;
      slot = slotOf(readDeclaration(value, { file, jsonPath }, name));
      (this.#inline ??= new Map()).set(value, slot);
    }
    return this.#instantiate(slot, kind, types, site);
  }

  /** The object of a slot of this heap: created once, shared by concurrent requests for it. */
  async #instantiate(slot: Slot, kind: Kind | undefined, types: readonly string[] | undefined, site: Site) {
    const declaration = slot.declaration;
    if (declaration === undefined) throw combine(slot.problems);
    const heaplet = await this.heapletFor(declaration, kind, types, site);
    if (slot.created !== undefined) return slot.created.value;
    if (slot.creating !== undefined) {
      const cycle = waitFor(slot.creating.creation);
      if (cycle !== undefined) throw cycleError(cycle, site.jsonPath === undefined ? declaration : site);
      return slot.creating.promise;
    }
    this.#assertAlive(declaration.name);
    const creation = new Creation(declaration.name);
    waitFor(creation);
    // Started on the next tick so that the slot shows the creation before any of its work runs.
    const promise = Promise.resolve().then(() =>
      runCreation(creation, () => this.#create(declaration, heaplet)),
    );
    slot.creating = { promise, creation };
    try {
      const value = await promise;
      slot.created = { value };
      return value;
    } finally {
      // A failed creation is forgotten, so that a later request tries (and reports) it again.
      slot.creating = undefined;
      creation.finish();
    }
  }

  /** @internal */
  async heapletFor(
    declaration: Declaration,
    kind: Kind | undefined,
    types: readonly string[] | undefined,
    site: Site,
  ): Promise<Heaplet> {
    const actual = this.registry.kindOf(declaration.type);
    const where = site.jsonPath === undefined ? declaration : site;
    if (kind !== undefined && actual !== undefined && actual !== kind) {
      throw new PorticoError(
        ErrorCode.REFERENCE,
        `'${declaration.name}' is ${article(actual)} (${declaration.type}), but ${article(kind)} is expected`,
        { ...located(where), expected: `the name of ${article(kind)}` },
      );
    }
    let heaplet: Heaplet;
    try {
      heaplet = await this.registry.resolve(declaration.type, kind);
    } catch (error) {
      throw locate(
        typeDescribed(error, declaration),
        { file: declaration.file, jsonPath: childPath(declaration.jsonPath, 'type') },
        'type',
      );
    }
    if (types !== undefined && ![heaplet.type, ...(heaplet.aliases ?? [])].some((t) => types.includes(t))) {
      throw new PorticoError(
        ErrorCode.REFERENCE,
        `'${declaration.name}' is a ${heaplet.type}, but ${types.join(' or ')} is expected`,
        { ...located(where), expected: `the name of ${types.join(' or ')}` },
      );
    }
    return heaplet;
  }

  /**
   * Creates and decorates an object; it is marked as reading the request body when an expression of
   * its configuration or decorations, or an object it uses, does (see `body-reads.ts`).
   */
  async #create(declaration: Declaration, heaplet: Heaplet): Promise<unknown> {
    const { value, reads } = await collectRequestBodyReads(() => this.#createDecorated(declaration, heaplet));
    if (reads) markRequestBodyReader(value);
    return value;
  }

  async #createDecorated(declaration: Declaration, heaplet: Heaplet): Promise<unknown> {
    const { name, file, jsonPath } = declaration;
    const validating = this.environment.validating === true;
    const options = {
      file,
      jsonPath: childPath(jsonPath, 'config'),
      properties: this.properties,
      logger: this.logger,
      ...(this.route === undefined ? {} : { route: this.route }),
      object: name,
    };
    const { value: config, writtenAt } = validating
      ? await this.#checkedConfig(heaplet, declaration, options)
      : parseConfigNoting(heaplet.config, declaration.config, options);
    // Validating, every reference is tried, so that all the problems behind the first are reported.
    const resolved = await resolveReferences(config, (ref) => this.resolve(ref, ref.kind), validating);
    const releases: Release[] = [];
    const configPath = childPath(jsonPath, 'config');
    const pathOf = (keys: readonly (string | number)[]) =>
      keys.reduce<string>((at, key) => childPath(at, String(key)), configPath);
    const context: HeapletContext<unknown> = {
      name,
      type: heaplet.type,
      config: resolved,
      heap: this,
      logger: this.logger,
      file,
      jsonPath,
      environment: this.environment,
      ...(declaration.logSink === undefined ? {} : { logSink: declaration.logSink }),
      ...(declaration.temporaryStorage === undefined
        ? this.temporaryStorageName === 'TemporaryStorage'
          ? {}
          : { temporaryStorage: this.temporaryStorageName }
        : { temporaryStorage: declaration.temporaryStorage }),
      configAt: (...keys) => ({
        ...(file === undefined ? {} : { file }),
        jsonPath: pathOf(keys),
      }),
      configWritten: (...keys) => writtenAt(pathOf(keys)),
      onDestroy: (run) => {
        releases.push(run);
      },
    };
    let object: unknown;
    try {
      // Validating, nothing is provisioned: the schema has run, the references are resolved, and
      // only a heaplet whose objects load more configuration (the Router) checks that too.
      object = !validating
        ? await heaplet.create(context)
        : heaplet.validate !== undefined
          ? await heaplet.validate(context)
          : new ValidatedObject(name, heaplet.type, heaplet.kind);
    } catch (error) {
      // What it acquired before failing is released now: nothing else holds it.
      await release(releases, this.logger, name, heaplet.type);
      throw locate(error, declaration, `cannot create '${name}' (${declaration.type})`);
    }
    // Tracked before decoration, so that an object whose decoration fails is still destroyed.
    this.#objects.track(name, heaplet.type, object, releases);
    this.logger.debug(`created heap object ${name}`, { type: heaplet.type });
    const info = {
      name,
      kind: heaplet.kind,
      heap: this,
      objectPath: objectPath(name, this.file),
      ...(declaration.logSink === undefined ? {} : { logSink: declaration.logSink }),
    };
    const decorated = await decorate(object, info, localSteps(declaration), this.#globals, (step) =>
      this.#decoratorFor(step),
    );
    nameHeapObject(decorated, name);
    return decorated;
  }

  /**
   * For `portico validate`: an object's config, parsed. When it has problems, the objects its
   * references name (inline declarations especially, which nothing else creates) are still tried,
   * and their problems thrown with the config's own.
   */
  async #checkedConfig(
    heaplet: Heaplet,
    declaration: Declaration,
    options: ParseOptions,
  ): Promise<{ value: unknown; writtenAt: (path: string) => string | undefined }> {
    const references: Reference[] = [];
    const checked = checkConfig(heaplet.config, declaration.config, { ...options, references });
    const { errors } = checked;
    if (errors.length === 0) return checked;
    try {
      await resolveReferences(references, (ref) => this.resolve(ref, ref.kind), true);
    } catch (error) {
      errors.push(...problemsOf(locate(error, declaration, `cannot create '${declaration.name}'`)));
    }
    throw combine(errors);
  }

  /**
   * The decorator a decoration written at `where` names (a route's own decorations, the top-level
   * keys of config.json): a name that is not a decorator in scope is a REFERENCE error, a name a
   * decorator may not have a CONFIG error.
   */
  decorator(name: string, value: unknown, where: Where): Promise<DecorationToApply> {
    return this.#decoratorFor({ name, value, ...where }, true) as Promise<DecorationToApply>;
  }

  /**
   * The decorator object a decoration names, with the decoration's value as its heaplet's
   * `decoration` schema reads it; a name that is not a decorator is a REFERENCE error, one that
   * names nothing is undefined (ignored) unless `required` or a likely misspelling.
   */
  async #decoratorFor(step: DecorationStep, required = false): Promise<DecorationToApply | undefined> {
    if (!required && !this.has(step.name)) {
      // Reported (warned about, or refused) when declared; ignored here.
      const problem = this.unknownDecoration(step.name, step, DECLARATION_FIELDS, false);
      if (problem !== undefined) throw problem;
      return undefined;
    }
    const problem = this.#decoratorProblem(step);
    if (problem !== undefined) throw problem;
    const found = this.#find(step.name)!;
    const declaration = found.slot.declaration;
    const heaplet =
      declaration === undefined
        ? undefined
        : await found.heap.heapletFor(declaration, 'decorator', undefined, step);
    // Read before the decorator is created: a wrong value is reported without it.
    const value =
      heaplet?.decoration === undefined ? step.value : this.#decorationValue(heaplet.decoration, step);
    const decorator = await found.heap.#instantiate(found.slot, 'decorator', undefined, step);
    // Validating, the decoration is checked (its value, its decorator) and nothing is decorated.
    if (isValidatedObject(decorator)) return { decorator: LEAVES_AS_IT_IS, value };
    if (!isDecorator(decorator)) {
      throw new PorticoError(
        ErrorCode.REFERENCE,
        `decorator '${step.name}' has no decorate method`,
        located(step),
      );
    }
    return { decorator, value };
  }

  /** A decoration's value read with its decorator's schema, at the decoration's own place. */
  #decorationValue(schema: Schema<unknown>, step: DecorationStep): unknown {
    return parseConfig(schema, step.value, {
      ...(step.file === undefined ? {} : { file: step.file }),
      jsonPath: step.jsonPath ?? '$',
      properties: this.properties,
      logger: this.logger,
      ...(this.route === undefined ? {} : { route: this.route }),
    });
  }

  /**
   * Why a decoration cannot be applied, found without creating anything: it names nothing in scope,
   * or an object that is not a decorator. A name whose type is not known yet passes here; creating
   * it reports the type.
   */
  #decoratorProblem(
    step: DecorationStep,
    fields: readonly string[] = DECLARATION_FIELDS,
    lenient = false,
  ): PorticoError | undefined {
    const found = this.#find(step.name);
    if (found === undefined && lenient) return this.unknownDecoration(step.name, step, fields);
    const type = found?.slot.declaration?.type;
    const actual = type === undefined ? undefined : this.registry.kindOf(type);
    if (found !== undefined && actual === 'decorator') {
      const refused = fieldClash(step.name);
      return refused === undefined ? undefined : badDecoratorName(refused, step.name, step);
    }
    if (found !== undefined && actual === undefined) return undefined;
    const what = actual === undefined ? '' : ` ('${step.name}' is ${article(actual)})`;
    const known = this.#decoratorsInScope();
    return new PorticoError(
      ErrorCode.REFERENCE,
      `unknown decorator '${step.name}'${what}; decorators in scope: ${known.join(', ') || 'none'}`,
      { ...located(step), expected: 'the name of a decorator heap object' },
    );
  }

  /** The decorations of a declaration that cannot apply, found when it is declared. */
  #localDecorationProblems(declaration: Declaration): PorticoError[] {
    const steps = localSteps(declaration);
    const [first] = steps;
    if (first === undefined) return [];
    const kind = this.registry.kindOf(declaration.type);
    if (kind !== undefined && kind !== 'filter' && kind !== 'handler') {
      return [notDecoratable(first, declaration.name)];
    }
    return steps.flatMap((step) => this.#decoratorProblem(step, DECLARATION_FIELDS, true) ?? []);
  }

  #decoratorsInScope(): string[] {
    return this.namesInScope().filter((name) => {
      const type = this.#find(name)?.slot.declaration?.type;
      return type !== undefined && this.registry.kindOf(type) === 'decorator';
    });
  }

  async #destroyAll(): Promise<void> {
    // Creations still under way finish (or fail) first, so that what they create is released too.
    const slots = [
      ...this.#slots.values(),
      ...(this.#defaults?.values() ?? []),
      ...(this.#inline?.values() ?? []),
    ];
    await Promise.allSettled(slots.map((slot) => slot.creating?.promise));
    await this.#objects.destroyAll(this.logger);
  }

  #assertAlive(name: string): void {
    if (this.#destruction === undefined) return;
    const heap = this.file === undefined ? 'the heap' : `the heap of ${this.file}`;
    throw new PorticoError(ErrorCode.REFERENCE, `${heap} is destroyed; '${name}' cannot be created`);
  }
}

/**
 * The registry's error about a type a token took from the environment, with the type described
 * instead of quoted: a secret put in `type` by mistake must not reach the log. Its `unknownType` is
 * the type as written (the token).
 */
function typeDescribed(error: unknown, declaration: Declaration): unknown {
  const written = writtenFromEnvironment(declaration, 'type');
  if (written === undefined || !isPorticoError(error)) return error;
  const { type } = declaration;
  const message = error.message.replaceAll(`'${type}'`, quoteValue(type, declaration, 'type'));
  return new PorticoError(
    error.code,
    // Quoted some other way (a plugin's own wording): only what kind of problem it is stays.
    message.includes(type) ? `the type ${quoteValue(type, declaration, 'type')} cannot be used` : message,
    { ...error.details, ...(error.details.unknownType === undefined ? {} : { unknownType: written }) },
  );
}

/** What a decoration applies when validating: the object, undecorated. */
const LEAVES_AS_IT_IS: Decorator = { decorate: (target) => target };

/**
 * The heap behind a plugin's view of it, for the core's own heaplets that need more than the view
 * (the Router makes a child heap per route).
 */
export function heapBehind(view: HeapView): Heap {
  if (view instanceof Heap) return view;
  throw new TypeError('not a heap made by this core');
}

function slotOf(result: DeclarationResult): Slot {
  return {
    declaration: result.declaration,
    problems: result.errors,
    creating: undefined,
    created: undefined,
  };
}

function isEmpty(record: Readonly<Record<string, unknown>> | undefined): boolean {
  return record === undefined || Object.keys(record).length === 0;
}
