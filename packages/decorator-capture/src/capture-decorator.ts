import {
  type Context,
  compileJavaRegex,
  type DecorationInfo,
  type Decorator,
  defineHeaplet,
  type Filter,
  type Handler,
  type LogSink,
  type Request,
  type Response,
  resolveLogSink,
  Schema,
  s,
} from '@portico/gateway-core';
import { INVALID, type ParseContext } from '@portico/gateway-core/schema';
import { drainUnread, sampleBody } from './entity-capture.ts';
import {
  bodyText,
  type CaptureMasks,
  contextJson,
  NO_MASKS,
  requestHead,
  responseHead,
} from './message-text.ts';

export const CAPTURE_POINTS = [
  'all',
  'request',
  'filtered_request',
  'response',
  'filtered_response',
] as const;
type CaptureName = (typeof CAPTURE_POINTS)[number];
export type CapturePoint = Exclude<CaptureName, 'all'>;

export interface CaptureSettings {
  /** The sink of every object this decorator decorates; else each object's own. */
  logSink: LogSink | undefined;
  captureEntity: boolean;
  captureContext: boolean;
  /** Bodies longer than this are cut, with a marker. */
  maxEntityLength: number;
  /** What is masked; nothing when not given. */
  masks?: CaptureMasks;
}

/**
 * Headers masked unless `masks.headers` says otherwise: credentials, and the cookies that are
 * sessions (the gateway's own among them), any of which would let a reader of the log act as the user.
 */
export const DEFAULT_MASKED_HEADERS: readonly string[] = [
  'Authorization',
  'Proxy-Authorization',
  'Cookie',
  'Set-Cookie',
  'Set-Cookie2',
];

/** A header or attribute name pattern (Java), matched whole and without regard to case. */
export function namePattern(pattern: string): RegExp {
  return compileJavaRegex(`(?i)^(?:${pattern})$`);
}

const FILTER_ONLY: readonly CapturePoint[] = ['filtered_request', 'filtered_response'];

/**
 * A `"capture"` decoration: one point or a list, case-insensitive; `true` means all and `false`
 * none (a convenience: the spec names only strings and lists).
 */
class CaptureDecorationSchema extends Schema<CaptureName[]> {
  readonly expected = `one of ${CAPTURE_POINTS.join(', ')}, a list of them, true or false`;
  readonly #one = s.enumOf(CAPTURE_POINTS);
  readonly #list = s.array(this.#one);

  parseValue(value: unknown, path: string, ctx: ParseContext): CaptureName[] | typeof INVALID {
    if (value === true) return ['all'];
    if (value === false) return [];
    if (Array.isArray(value)) return this.#list.parseValue(value, path, ctx);
    const one = this.#one.parseValue(value, path, ctx);
    return one === INVALID ? INVALID : [one];
  }

  jsonSchema() {
    return { oneOf: [{ type: 'boolean' }, this.#one.jsonSchema(), this.#list.jsonSchema()] };
  }
}

/** The capture points a decoration names (as its schema read it); `all` is every point that applies. */
export function capturePoints(names: readonly CaptureName[], info: DecorationInfo): Set<CapturePoint> {
  const points = new Set<CapturePoint>();
  for (const name of names) {
    if (name !== 'all') points.add(name);
    else for (const point of CAPTURE_POINTS) if (point !== 'all') points.add(point);
  }
  if (info.kind !== 'filter') {
    const dropped = FILTER_ONLY.filter((point) => points.delete(point) && !names.includes('all'));
    if (dropped.length > 0) {
      info.heap.logger.warn(
        `capture points ${dropped.join(', ')} apply to filters only; ${info.name} is a handler`,
        {
          ...(info.file === undefined ? {} : { file: info.file }),
          jsonPath: info.jsonPath,
        },
      );
    }
  }
  return points;
}

/**
 * Writes the messages passing through the objects it decorates (`"capture": "all"`) to a log sink,
 * as HTTP messages: the request line or status line, the headers, and with `captureEntity` the body
 * (text as it is, `[binary entity]` otherwise, cut after `maxEntityLength` bytes with a marker),
 * with `captureContext` the named contexts as JSON. Capture never takes a body from its reader: a
 * streamed body is copied as it flows, and its record is written when the body has gone through.
 */
export class CaptureDecorator implements Decorator {
  readonly #settings: CaptureSettings;

  constructor(settings: CaptureSettings) {
    this.#settings = settings;
  }

  /** `decoration` is the capture points, read by the heaplet's `decoration` schema. */
  async decorate(target: unknown, decoration: CaptureName[], info: DecorationInfo): Promise<unknown> {
    if (info.kind !== 'filter' && info.kind !== 'handler') return target;
    const points = capturePoints(decoration, info);
    if (points.size === 0) return target;
    const sink = this.#settings.logSink ?? (await resolveLogSink(info.heap, info.logSink));
    const capture = new Capture(sink, `@Capture[${info.objectPath}]`, this.#settings);
    return info.kind === 'filter'
      ? capturedFilter(target as Filter, points, capture)
      : capturedHandler(target as Handler, points, capture);
  }
}

function capturedHandler(handler: Handler, points: Set<CapturePoint>, capture: Capture): Handler {
  return {
    async handle(context, request) {
      const teed = points.has('request') ? capture.request(context, request, 'request') : undefined;
      try {
        const response = await handler.handle(context, request);
        if (points.has('response')) capture.response(context, response, 'response');
        return response;
      } finally {
        drainUnread(teed);
      }
    },
  };
}

export function capturedFilter(filter: Filter, points: Set<CapturePoint>, capture: Capture): Filter {
  const wrapsNext = points.has('filtered_request') || points.has('response');
  return {
    async filter(context, request, next) {
      const teed = points.has('request') ? capture.request(context, request, 'request') : undefined;
      const captureNext: Handler = {
        async handle(c, r) {
          const filtered = points.has('filtered_request')
            ? capture.request(c, r, 'filtered request')
            : undefined;
          try {
            const response = await next.handle(c, r);
            if (points.has('response')) capture.response(c, response, 'response');
            return response;
          } finally {
            drainUnread(filtered);
          }
        },
      };
      try {
        const response = await filter.filter(context, request, wrapsNext ? captureNext : next);
        if (points.has('filtered_response')) capture.response(context, response, 'filtered response');
        return response;
      } finally {
        drainUnread(teed);
      }
    },
  };
}

/** Writes captured messages of one decorated object (or of one CaptureFilter). */
export class Capture {
  readonly #sink: LogSink;
  readonly #source: string;
  readonly #settings: CaptureSettings;

  constructor(sink: LogSink, source: string, settings: CaptureSettings) {
    this.#sink = sink;
    this.#source = source;
    this.#settings = settings;
  }

  get #masks(): CaptureMasks {
    return this.#settings.masks ?? NO_MASKS;
  }

  /** Captures a request; returns the pass-through stream of a teed body (see drainUnread). */
  request(context: Context, request: Request, label: string) {
    if (!this.#sink.isLoggable('INFO')) return undefined;
    const head = `--- (${label}) id:${context.transactionId} --->\n${requestHead(request, this.#masks)}`;
    return this.#write(context, head, request.headers, request.entity);
  }

  response(context: Context, response: Response, label: string): void {
    if (!this.#sink.isLoggable('INFO')) return;
    const head = `<--- (${label}) id:${context.transactionId} ---\n${responseHead(response, this.#masks)}`;
    this.#write(context, head, response.headers, response.entity);
  }

  #write(context: Context, head: string, headers: Request['headers'], entity: Request['entity']) {
    const routeId = context.router?.routeId;
    const contextText = this.#settings.captureContext
      ? `\n--- context ---\n${contextJson(context.contexts, this.#masks)}`
      : '';
    const write = (body: string) =>
      this.#sink.log({
        level: 'INFO',
        source: this.#source,
        message: `${head}${body === '' ? '' : `\n\n${body}`}${contextText}`,
        routeId,
      });
    if (!this.#settings.captureEntity) {
      write('');
      return undefined;
    }
    return sampleBody(entity, this.#settings.maxEntityLength, (sample) => write(bodyText(headers, sample)));
  }
}

/** A name pattern in the configuration: a Java regular expression, checked when it loads. */
function namePatternSetting() {
  return s.string().refine((pattern) => {
    try {
      namePattern(pattern);
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }, 'a header or attribute name, or a Java regular expression matching whole names');
}

export const CaptureDecoratorHeaplet = defineHeaplet({
  type: 'CaptureDecorator',
  kind: 'decorator',
  config: s.object({
    logSink: s.logSink().optional(),
    captureEntity: s.boolean().default(false),
    captureContext: s.boolean().default(false),
    // OpenIG 4's name for captureContext.
    captureExchange: s.boolean().optional(),
    // PingGateway's bound on a captured body, and its default.
    maxEntityLength: s.integer({ min: 0 }).default(512 * 1024),
    // PingGateway's masks; headers default to the credentials and session cookies.
    masks: s
      .object({
        headers: s.array(namePatternSetting()).optional(),
        attributes: s.array(namePatternSetting()).default(() => []),
        mask: s.string().default('*****'),
      })
      .optional(),
  }),
  decoration: new CaptureDecorationSchema(),
  create: ({ config }) => {
    return new CaptureDecorator({
      logSink: config.logSink,
      captureEntity: config.captureEntity,
      captureContext: config.captureContext || config.captureExchange === true,
      maxEntityLength: config.maxEntityLength,
      masks: {
        headers: (config.masks?.headers ?? DEFAULT_MASKED_HEADERS).map(namePattern),
        attributes: (config.masks?.attributes ?? []).map(namePattern),
        mask: config.masks?.mask ?? '*****',
      },
    });
  },
});
