import type { Headers, Logger } from '@portico/gateway-core';
import type { TracingSettings } from './settings.ts';
import { ExportEnvelope } from './tracing/otlp-json.ts';
import { ProtobufEnvelope } from './tracing/otlp-protobuf.ts';
import { SpanKind, type SpanKindValue, STATUS_ERROR, TraceSpan } from './tracing/span.ts';
import { SpanExporter } from './tracing/span-exporter.ts';
import { formatTraceparent, IdSource, parseTraceparent, sampledByRatio } from './tracing/trace-context.ts';

export type { TraceSpan } from './tracing/span.ts';

/** The instrumentation scope the gateway's spans are exported under. */
const SCOPE = '@portico/gateway';

/**
 * The server's OpenTelemetry traces (decision 0112): spans in OpenTelemetry's model, sampled
 * parent-based (a client's `traceparent` decides for its trace; `samplingRatio` of the traces that
 * start here are kept), the W3C trace context read from the client's request and written on each
 * upstream call, and batches exported over OTLP/HTTP in protobuf (or JSON). Made here rather than with
 * OpenTelemetry's SDK, whose span objects, context objects and export transform cost a traced
 * request about twice what the gateway spends proxying it (bench/README.md, "observability").
 * Loaded only when admin.json turns tracing on.
 */
export class Tracing {
  readonly filterSpans: boolean;
  readonly #ratio: number;
  readonly #ids = new IdSource();
  readonly #exporter: SpanExporter;

  constructor(settings: TracingSettings, logger: Logger) {
    this.filterSpans = settings.filterSpans;
    this.#ratio = settings.samplingRatio;
    const resource = {
      'service.name': settings.serviceName,
      'telemetry.sdk.language': 'nodejs',
      'telemetry.sdk.name': 'portico',
    };
    const { endpoint, protocol } = settings.exporter.config;
    this.#exporter = new SpanExporter({
      endpoint,
      envelope:
        protocol === 'http/json'
          ? new ExportEnvelope(resource, SCOPE)
          : new ProtobufEnvelope(resource, SCOPE),
      logger,
    });
  }

  /**
   * A request's server span, a child of the client's trace when its `traceparent` names one. Its
   * attributes are the caller's to add (`addAttribute`): made here from an object, they cost a
   * walk of its keys per request.
   */
  serverSpan(method: string, headers: Headers): TraceSpan {
    const parent = parseTraceparent(headers.get('traceparent'), headers.get('tracestate'));
    const spanId = this.#ids.spanId();
    if (parent !== undefined)
      return new TraceSpan(
        method,
        SpanKind.SERVER,
        parent.traceId,
        spanId,
        parent.spanId,
        true,
        parent.traceState,
        this.#sinkIf(parent.sampled),
      );
    const traceId = this.#ids.traceId();
    return new TraceSpan(
      method,
      SpanKind.SERVER,
      traceId,
      spanId,
      undefined,
      false,
      undefined,
      this.#sinkIf(sampledByRatio(traceId, this.#ratio)),
    );
  }

  /** A span under `parent`: an upstream call's (CLIENT) or a filter's (INTERNAL). */
  childSpan(name: string, kind: SpanKindValue, parent: TraceSpan): TraceSpan {
    return new TraceSpan(
      name,
      kind,
      parent.traceId,
      this.#ids.spanId(),
      parent.spanId,
      false,
      parent.traceState,
      this.#sinkIf(parent.sampled),
    );
  }

  /** The W3C fields (`traceparent`, `tracestate`) that carry a span's context to the upstream. */
  fieldsOf(span: TraceSpan): [string, string][] {
    const fields: [string, string][] = [
      ['traceparent', formatTraceparent(span.traceId, span.spanId, span.sampled)],
    ];
    if (span.traceState !== undefined) fields.push(['tracestate', span.traceState]);
    return fields;
  }

  /** Where a span of a sampled trace goes when it ends; a span of another records nothing. */
  #sinkIf(sampled: boolean): SpanExporter | undefined {
    return sampled ? this.#exporter : undefined;
  }

  /** Exports what is still gathered and stops. */
  shutdown(): Promise<void> {
    return this.#exporter.shutdown();
  }
}

/** Marks a span failed when the status says so (5xx, or no answer), then ends it. */
export function endWithStatus(span: TraceSpan, status: number | null | undefined, kind: SpanKindValue): void {
  // Set once, as the span ends: nothing to look for.
  if (status !== null && status !== undefined) span.addAttribute('http.response.status_code', status);
  // A server span fails on 5xx; a client span on any error status and on no answer (semantic conventions).
  if (status === null || status === undefined || status >= (kind === SpanKind.CLIENT ? 400 : 500))
    span.setStatus({ code: STATUS_ERROR });
  span.end();
}
