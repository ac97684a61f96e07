import { type AccessAuditor, failureStatus, isAccessAuditor } from '../audit/access.ts';
import { type Condition, condition } from '../config/condition-schema.ts';
import { keepMarks, mergeMarked } from '../config/from-environment.ts';
import { checkConfig } from '../config/parse-config.ts';
import { Reference } from '../config/reference.ts';
import type { Infer } from '../config/schema.ts';
import { s } from '../config/schema-builders.ts';
import type { Context, RouterInfo } from '../context/context.ts';
import { observationOf, observing } from '../context/observation.ts';
import { combineProblems, ErrorCode, isPorticoError, PorticoError, problemsOf } from '../errors.ts';
import { collectRequestBodyReads } from '../expression/body-reads.ts';
import type { Bindings } from '../expression/compiler.ts';
import type { Heap } from '../heap/heap.ts';
import { referenceAt } from '../heap/references.ts';
import type { Headers } from '../http/headers.ts';
import type { Request, Response } from '../http/message.ts';
import type { Uri } from '../http/uri.ts';
import { isRecord } from '../is-record.ts';
import type { Logger } from '../logging.ts';
import { metricsOf } from '../metrics/metrics.ts';
import { RouteMeter } from '../metrics/route-metrics.ts';
import type { Handler } from '../types.ts';
import { answerOf } from './answer.ts';
import { conditionReadsEntity, holdsSettled } from './conditions.ts';
import { decoratedEntryHandler, entryDecorations } from './entry-decorations.ts';
import { chainOf } from './route-chain.ts';
import { pathPrefixOf } from './route-index.ts';
import { isSessionProducer, SessionScopeHandler } from './session-producer.ts';
import { uriSetting } from './uri-setting.ts';

/** A route's path is never a URI template here: one frozen empty map serves every request. */
const NO_VARIABLES: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** The fields a route has; every other top-level key is a decoration of its handler. */
export const routeSchema = s.object({
  name: s.string().optional(),
  condition: condition().optional(),
  heap: s.any().optional(),
  handler: s.any(),
  baseURI: uriSetting().optional(),
  session: s.any().optional(),
  auditService: s.any().optional(),
  globalDecorators: s.map(s.any()).optional(),
  // OpenIG routes may carry a monitor flag; Portico always counts route traffic.
  monitor: s.any().optional(),
  /** Values the route's expressions read by name, at load and per request (`${frConfigs.amUrl}`). */
  properties: s.map(s.any()).optional(),
  /** The route's secret stores (`{"stores": [...]}`), read by its heap (declareSecrets). */
  secrets: s.any().optional(),
});
const ROUTE_FIELDS = new Set([...Object.keys(routeSchema.shape), 'comment', 'comments']);

/** Names an operator sees for a route. */
export interface RouteInfo {
  id: string;
  name: string;
  file: string | undefined;
  label: string | undefined;
  /** The condition as written (`true`, `false` or its expression); undefined without one. */
  condition: string | undefined;
  /** Its chain as written: the filters, then the handler, by name or type (`chainOf`). */
  chain: readonly string[];
}

/**
 * One route: a condition selecting requests, its own heap (child of the router's), and the handler
 * the selected requests go to. It counts the requests it is processing so that removing or
 * replacing it waits for them before its heap is destroyed.
 */
export class Route implements Handler {
  readonly id: string;
  readonly name: string;
  readonly file: string | undefined;
  readonly #condition: Condition | undefined;
  /** A prefix the request path must have for the condition to hold, when one is evident. */
  readonly pathPrefix: string | undefined;
  readonly #handler: Handler;
  readonly #baseURI: Uri | undefined;
  readonly #heap: Heap;
  /** The condition reads the request body (`request.entity`, `request.form`), buffered before it runs. */
  readonly #readsBody: boolean;
  /** Something the route runs reads the request body, at any phase: buffered before the handler runs. */
  readonly #handlerReadsBody: boolean;
  /** The route's `auditService`: told of every exchange through the route. */
  readonly #auditor: AccessAuditor | undefined;
  /** The route's series of the gateway's metrics, when something collects them. */
  readonly #meter: RouteMeter | undefined;
  readonly #chain: readonly string[];
  #active = 0;
  #drained: (() => void) | undefined;

  constructor(init: {
    id: string;
    name: string;
    file?: string;
    condition?: Condition;
    handler: Handler;
    baseURI?: Uri;
    heap: Heap;
    /** The handler (its filters, decorations, session) reads the request body, at any phase. */
    readsRequestBody?: boolean;
    /** The route's audit service (its `auditService`). */
    auditor?: AccessAuditor;
    /** The route's series of the gateway's metrics. */
    meter?: RouteMeter;
    /** Its chain as written, for operators. */
    chain?: readonly string[];
  }) {
    this.id = init.id;
    this.name = init.name;
    this.file = init.file;
    this.#condition = init.condition;
    this.pathPrefix = pathPrefixOf(init.condition);
    this.#readsBody = conditionReadsEntity(init.condition, 'request');
    this.#handlerReadsBody = init.readsRequestBody === true;
    this.#handler = init.handler;
    this.#baseURI = init.baseURI;
    this.#heap = init.heap;
    this.#auditor = init.auditor;
    this.#meter = init.meter;
    this.#chain = init.chain ?? [];
  }

  get info(): RouteInfo {
    const condition = this.#condition?.expression;
    return {
      id: this.id,
      name: this.name,
      file: this.file,
      label: this.#condition?.label,
      condition:
        condition === undefined || typeof condition === 'boolean' ? condition?.toString() : condition.text,
      chain: this.#chain,
    };
  }

  get active(): number {
    return this.#active;
  }

  /** True when the route has a condition (the router only makes bindings for those). */
  get conditional(): boolean {
    return this.#condition !== undefined && this.#condition.expression !== true;
  }

  /**
   * True when the route takes this request: no condition, or one that evaluates to true. A promise
   * when the condition must wait: for the request body it reads, or for lazy maps still loading.
   */
  accepts(bindings: Bindings, request: Request): boolean | Promise<boolean> {
    // A body that cannot be buffered (larger than the limit) fails the request (413), as it does in
    // the filters: it could not be sent on whole after a partial read anyway.
    if (this.#readsBody) return request.entity.bytes().then(() => holdsSettled(this.#condition, bindings));
    return holdsSettled(this.#condition, bindings);
  }

  handle(context: Context, request: Request): Promise<Response> {
    this.#active++;
    // Without metrics collected, a route pays this test and nothing more.
    if (this.#meter !== undefined) return this.#metered(this.#meter, context, request);
    // A route without an audit service pays this test, and nothing more.
    if (this.#auditor !== undefined) return this.#audited(this.#auditor, context, request);
    return this.#enter(context, request);
  }

  /**
   * Counts the request in the route's series, and its answer once it settles: in the reaction that
   * counts it out of the route (`#leave`'s place), so metering adds a closure and no promise.
   */
  #metered(meter: RouteMeter, context: Context, request: Request): Promise<Response> {
    const started = meter.enter();
    const settle = (outcome: unknown): void => {
      this.#leave();
      meter.settle(started, outcome);
    };
    return this.#auditor !== undefined
      ? this.#audited(this.#auditor, context, request, settle)
      : this.#enter(context, request, settle);
  }

  /** `settled` runs once the answer settles (with the response or the failure): `#leave` by default. */
  #enter(
    context: Context,
    request: Request,
    settled: (outcome: unknown) => void = this.#leave,
  ): Promise<Response> {
    // Read after the body went upstream (a response-phase filter), it would be gone: buffered now,
    // within the entity limit (413 past it), and sent on from memory.
    if (this.#handlerReadsBody && !request.entity.isBuffered) {
      return request.entity.bytes().then(
        () => this.#pass(context, request, settled),
        (error: unknown) => {
          settled(error);
          throw error;
        },
      );
    }
    return this.#pass(context, request, settled);
  }

  /**
   * Hands a counted request to the route's handler; counted down once its answer settles. Not an
   * `async` function: its frame and promises cost about half a kilobyte per request on the hot path,
   * where this needs one reaction on the handler's promise (bench/README.md, "Bytes allocated").
   */
  #pass(context: Context, request: Request, settled: (outcome: unknown) => void): Promise<Response> {
    let router: RouterInfo;
    try {
      // A rebase replaces request.uri, so the object received stays as it was; without one, filters
      // may change request.uri in place, so the route keeps a copy.
      const original = request.uri;
      request.uri = this.#baseURI ? original.rebase(this.#baseURI) : original.copy();
      router = {
        routeId: this.id,
        routeName: this.name,
        originalUri: original,
        matchedUri: '',
        remainingUri: request.uri.rawPath,
        uriTemplateVariables: NO_VARIABLES,
      };
    } catch (error) {
      settled(error);
      return Promise.reject(error);
    }
    if (observing()) observationOf(context)?.routed(this.id, this.name);
    const answer = answerOf(this.#handler, context.child('router', router), request);
    // Counted down before whoever awaits the answer resumes (this reaction is registered first).
    answer.then(settled, settled);
    return answer;
  }

  /**
   * Hands the request on and tells the audit service of the exchange once its answer settles: the
   * request as it entered the route (its URI object is never changed: the route hands a copy on, and
   * the headers are a copy that shares the arrived fields until a filter changes them), the status
   * of the response or of the gateway's answer to the failure, and the time it took.
   */
  #audited(
    auditor: AccessAuditor,
    context: Context,
    request: Request,
    settled: (outcome: unknown) => void = this.#leave,
  ): Promise<Response> {
    const started = Date.now();
    const { method, uri } = request;
    const headers: Headers = request.headers.clone();
    const record = (status: number, responseHeaders: Headers | undefined) => {
      try {
        auditor.access({
          started,
          elapsed: Date.now() - started,
          transactionId: context.transactionId,
          client: context.client,
          method,
          uri,
          headers,
          status,
          responseHeaders,
        });
      } catch {
        // An auditor must not throw (it queues); one that does must not reject this reaction, which
        // nothing awaits: the exchange is answered all the same.
      }
    };
    const answer = this.#enter(context, request, settled);
    answer.then(
      (response) => record(response.status, response.headers),
      (error: unknown) => record(failureStatus(error), undefined),
    );
    return answer;
  }

  /** One function for every request (no closure each). */
  readonly #leave = (): void => {
    if (--this.#active === 0) this.#drained?.();
  };

  /** The objects the route's heap has created (the routers it nests, for `portico validate`). */
  created(): unknown[] {
    return this.#heap.created();
  }

  /** Waits for in-flight requests (at most `graceMs`), then destroys the route's heap. */
  async destroy(graceMs = 30_000): Promise<void> {
    if (this.#active > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        this.#drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    if (this.#auditor !== undefined) {
      // The last exchanges' records are given once their answers' reactions have run: after this turn.
      await new Promise<void>((resolve) => setImmediate(resolve));
      await this.#auditor.flush();
    }
    await this.#heap.destroy();
  }
}

export interface LoadRouteOptions {
  id: string;
  json: unknown;
  file?: string;
  /** The heap routes inherit from (the router's). */
  parentHeap: Heap;
  logger: Logger;
  /** The name of the router loading it, the `router` label of its metrics. */
  router?: string;
}

/**
 * Builds a route from its configuration. Every problem found is reported (thrown as one coded error
 * carrying the others in `details.cause`); whatever was created before a failure is destroyed.
 */
export async function loadRoute(options: LoadRouteOptions): Promise<Route> {
  const { id, json, file, parentHeap, logger, router } = options;
  // `portico validate` creates every object the route declares, referenced or not, to report all.
  const validating = parentHeap.environment.validating === true;
  const fields = pickRouteFields(json);
  const properties = routeProperties((fields as { properties?: unknown } | null)?.properties);
  // As the route will be named, for the warnings of its expressions (its condition, its objects').
  const written = (fields as { name?: unknown } | null)?.name;
  const routeName = typeof written === 'string' ? written : id;
  const { value: checked, errors } = checkConfig(routeSchema, fields, {
    jsonPath: '$',
    logger,
    route: routeName,
    properties: mergeMarked(parentHeap.properties, properties),
    ...(file === undefined ? {} : { file }),
  });
  // Serving, a route whose fields are wrong fails at once. Validating, its heap, decorations and
  // handler are still checked (from the fields as written), so that one run reports every problem.
  if (!checked && !validating) throw combine(errors, file);
  const config = checked ?? asWritten(fields);
  /** Problems found so far: thrown at once when serving, collected when validating. */
  const problems: PorticoError[] = [...errors];
  const found = (more: PorticoError[]) => {
    if (more.length > 0 && !validating) throw combine(more, file);
    problems.push(...more);
  };
  const heap = parentHeap.child({
    jsonPath: '$.heap',
    route: routeName,
    ...(properties === undefined ? {} : { properties }),
    ...(file === undefined ? {} : { file }),
    ...(isRecord(config.globalDecorators)
      ? { globalDecorations: Object.entries(config.globalDecorators) }
      : {}),
  });
  try {
    const declared = config.heap === undefined ? [] : heap.declare(config.heap, '$.heap');
    if (config.secrets !== undefined) declared.push(...heap.declareSecrets(config.secrets));
    declared.push(...heap.globalDecorationProblems());
    found(declared);
    if (config.secrets !== undefined) found(await secretsBlockProblems(heap));
    const decorators = entryDecorations(heap, isRecord(json) ? json : {}, ROUTE_FIELDS, file, problems);
    // No handler written: the schema said so; nothing more to check of it.
    if (config.handler === undefined) throw combine(problems, file);
    const name = config.name ?? id;
    // Anything the route's handler, its decorations or its session read of the request body, at any
    // phase, makes the route buffer the body before its handler runs.
    const { value: handler, reads } = await collectRequestBodyReads(() =>
      routeHandler(heap, config, decorators, problems, { name, file, logger }),
    );
    const auditor = await routeAuditor(heap, config.auditService, file, problems);
    if (problems.length > 0) throw combine(problems, file);
    const metrics = metricsOf(heap);
    const route = new Route({
      id,
      name,
      handler,
      heap,
      readsRequestBody: reads,
      chain: chainOf(isRecord(json) ? json.handler : undefined),
      ...(auditor === undefined ? {} : { auditor }),
      // Its series resolved now, once: a request then only counts.
      ...(metrics.enabled && !validating ? { meter: new RouteMeter(metrics, name, id, router ?? '') } : {}),
      ...(file === undefined ? {} : { file }),
      ...(config.condition === undefined ? {} : { condition: config.condition }),
      ...(config.baseURI === undefined ? {} : { baseURI: config.baseURI }),
    });
    if (validating) {
      const unused = await heap.createAll();
      if (unused.length > 0) throw combine(unused, file);
    }
    return route;
  } catch (error) {
    const failure = validating ? withUnusedProblems(error, await heap.createAll(), file) : error;
    await heap.destroy();
    throw failure;
  }
}

/**
 * For `portico validate`, a route whose fields did not pass the schema: the fields as written, those
 * of the wrong shape left out (the schema reported them), without the condition and the baseURI
 * (what the schema makes of them is not at hand; the route is not built anyway).
 */
function asWritten(fields: unknown): RouteConfig {
  const written = isRecord(fields) ? fields : {};
  const { condition: _, baseURI: __, name, ...rest } = written;
  const config = { ...rest, ...(typeof name === 'string' ? { name } : {}) };
  keepMarks(written, config);
  return config as RouteConfig;
}

type RouteConfig = Infer<typeof routeSchema>;

/** The route's handler: resolved, decorated by the route's decorations, in the route's session. */
async function routeHandler(
  heap: Heap,
  config: RouteConfig,
  decorators: [string, unknown][],
  problems: PorticoError[],
  { name, file, logger }: { name: string; file: string | undefined; logger: Logger },
): Promise<Handler> {
  // Route decoration: decorates this route's handler only, after its local and global decorations.
  let handler = await decoratedEntryHandler(
    heap,
    () => heap.resolve<Handler>(referenceAt(config, 'handler', 'handler', '$.handler', file), 'handler'),
    decorators,
    { name, label: `route '${name}'`, file },
    problems,
  );
  // A route's own session producer (`"session": "JwtSession"`) replaces the request's session for
  // everything the route does: it wraps the decorated handler, as the incumbent's session filter.
  if (config.session !== undefined) handler = await routeSession(heap, config.session, handler, logger, file);
  return handler;
}

/**
 * For `portico validate`: the problems of a route that failed, and those of the objects its heap
 * declares that the failure left uncreated (an object nothing references, of an unknown type), each
 * once.
 */
function withUnusedProblems(error: unknown, unused: PorticoError[], file: string | undefined): unknown {
  const found = problemsOf(error);
  if (found.length === 0) return error;
  const seen = new Set(found.map((p) => p.toString()));
  const added = unused.filter((p) => !seen.has(p.toString()));
  return added.length === 0 ? error : combine([...found, ...added], file);
}

const DEFAULT_AUDIT_SERVICE = 'AuditService';

/**
 * The audit service the route's `auditService` names (a heap name or an inline declaration), which
 * must be one (an AuditService): otherwise a PORTICO_E_REFERENCE problem at `$.auditService`.
 */
async function routeAuditor(
  heap: Heap,
  auditService: unknown,
  file: string | undefined,
  problems: PorticoError[],
): Promise<AccessAuditor | undefined> {
  // Without the field, the heap object named AuditService, if any, as the incumbents do: by default
  // the silent NoOpAuditService; one declared in config.json audits every route, one in a route's
  // heap that route.
  const named = auditService ?? (heap.has(DEFAULT_AUDIT_SERVICE) ? DEFAULT_AUDIT_SERVICE : undefined);
  if (named === undefined) return undefined;
  const reference = new Reference(
    'object',
    named as string | Record<string, unknown>,
    '$.auditService',
    file,
    undefined,
    { test: isAccessAuditor, expected: 'an audit service such as AuditService' },
  );
  try {
    const auditor = await heap.resolve(reference, 'object');
    // Validating, the service is a stand-in (checked, not created). One that keeps nothing is left
    // out: the route's requests cost what they cost without it.
    return isAccessAuditor(auditor) && auditor.silent !== true ? auditor : undefined;
  } catch (error) {
    if (!isPorticoError(error)) throw error;
    problems.push(...problemsOf(error));
    return undefined;
  }
}

/** The route's handler, using the session producer `session` names (a heap name or inline declaration). */
async function routeSession(
  heap: Heap,
  session: unknown,
  handler: Handler,
  logger: Logger,
  file: string | undefined,
): Promise<Handler> {
  const producer = await heap.resolve(session as string, 'object', '$.session');
  if (!isSessionProducer(producer)) {
    throw new PorticoError(ErrorCode.CONFIG, 'the session object does not produce sessions', {
      jsonPath: '$.session',
      expected: 'a session producer such as JwtSession',
      ...(file === undefined ? {} : { file }),
    });
  }
  return new SessionScopeHandler(producer, handler, logger);
}

function pickRouteFields(json: unknown): unknown {
  if (!isRecord(json)) return json;
  const fields = Object.fromEntries(Object.entries(json).filter(([key]) => ROUTE_FIELDS.has(key)));
  // A field a token took from the environment stays one: its messages must not quote it.
  keepMarks(json, fields);
  return fields;
}

/** The route's problems as one error (a generic one naming the file when there is none). */
function combine(errors: PorticoError[], file: string | undefined): PorticoError {
  return combineProblems(
    errors,
    () =>
      new PorticoError(ErrorCode.ROUTE, 'the route could not be loaded', file === undefined ? {} : { file }),
  );
}

/** A route's `properties` when they are an object (the schema reports anything else). */
function routeProperties(value: unknown): Record<string, unknown> | undefined {
  return isRecord(value) ? value : undefined;
}

/**
 * The problems of the stores of a `secrets` block (a name that is no secret store, a store that
 * cannot be created), reported when its file loads rather than at the first secret asked for.
 */
export async function secretsBlockProblems(heap: Heap): Promise<PorticoError[]> {
  try {
    await heap.secretStores();
    return [];
  } catch (error) {
    if (!isPorticoError(error)) throw error;
    return problemsOf(error);
  }
}
