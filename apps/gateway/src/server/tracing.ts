import { createRequire } from 'node:module';
import type {
  Context as OtelContext,
  Span,
  SpanKind as SpanKinds,
  TextMapGetter,
  TextMapSetter,
  Tracer,
} from '@opentelemetry/api';
import type { Headers } from '@portico/gateway-core';
import type { TracingSettings } from './settings.ts';

// The SDK is required as CommonJS, the form Node resolves it to (`main`): the ESM builds its
// packages also ship are written for bundlers (extensionless imports Node's loader refuses).
const require = createRequire(import.meta.url);
const { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } =
  require('@opentelemetry/api') as typeof import('@opentelemetry/api');
const { W3CTraceContextPropagator } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
const { OTLPTraceExporter } =
  require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
const { resourceFromAttributes } =
  require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
const { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } =
  require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');

/** The span attribute that carries the gateway's transaction ID. */
export const TRANSACTION_ATTRIBUTE = 'portico.transaction_id';

const HEADERS_GETTER: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key),
  keys: () => [],
};

const LIST_SETTER: TextMapSetter<[string, string][]> = {
  set: (list, key, value) => {
    list.push([key, value]);
  },
};

/**
 * The server's traces: an OpenTelemetry tracer provider of its own (never registered as the
 * process's global one, so nothing else in the process is traced by it), exporting batches over
 * OTLP/HTTP in JSON. The W3C trace context is read from the client's request and written on each
 * upstream call. Loaded only when admin.json turns tracing on.
 */
export class Tracing {
  readonly filterSpans: boolean;
  readonly #provider: import('@opentelemetry/sdk-trace-base').BasicTracerProvider;
  readonly #tracer: Tracer;
  readonly #propagator: import('@opentelemetry/core').W3CTraceContextPropagator =
    new W3CTraceContextPropagator();

  constructor(settings: TracingSettings) {
    this.filterSpans = settings.filterSpans;
    this.#provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.samplingRatio) }),
      spanProcessors: [
        new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.exporter.config.endpoint })),
      ],
    });
    this.#tracer = this.#provider.getTracer('@portico/gateway');
  }

  /** A request's server span, a child of the client's trace when its `traceparent` names one. */
  serverSpan(method: string, headers: Headers, attributes: Record<string, string | number>): Span {
    const parent = this.#propagator.extract(ROOT_CONTEXT, headers, HEADERS_GETTER);
    return this.#tracer.startSpan(method, { kind: SpanKind.SERVER, attributes }, parent);
  }

  /** A span under `parent`: an upstream call's (CLIENT) or a filter's (INTERNAL). */
  childSpan(name: string, kind: SpanKinds, parent: Span, attributes?: Record<string, string | number>): Span {
    return this.#tracer.startSpan(name, { kind, ...(attributes ? { attributes } : {}) }, under(parent));
  }

  /** The W3C fields (`traceparent`, `tracestate`) that carry a span's context to the upstream. */
  fieldsOf(span: Span): [string, string][] {
    const fields: [string, string][] = [];
    this.#propagator.inject(under(span), fields, LIST_SETTER);
    return fields;
  }

  /** Exports what is still buffered and stops. */
  shutdown(): Promise<void> {
    return this.#provider.shutdown();
  }
}

function under(span: Span): OtelContext {
  return trace.setSpan(ROOT_CONTEXT, span);
}

/** Marks a span failed when the status says so (5xx, or no answer), then ends it. */
export function endWithStatus(span: Span, status: number | null | undefined, kind: SpanKinds): void {
  if (status !== null && status !== undefined) span.setAttribute('http.response.status_code', status);
  // A server span fails on 5xx; a client span on any error status and on no answer (semantic conventions).
  if (status === null || status === undefined || status >= (kind === SpanKind.CLIENT ? 400 : 500))
    span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
