/** The kinds of span the gateway makes, as OpenTelemetry's API numbers them. */
export const SpanKind = { INTERNAL: 0, SERVER: 1, CLIENT: 2 } as const;
export type SpanKindValue = (typeof SpanKind)[keyof typeof SpanKind];

/** OpenTelemetry's status codes (unset, ok, error). */
export const STATUS_ERROR = 2;

/** Where a recorded span goes when it ends (the exporter's batch). */
export interface SpanSink {
  ended(span: TraceSpan, endedAt: number): void;
}

/**
 * One span: what the OTLP export needs and nothing else, its attributes a flat list of keys and
 * values. A span of a trace not sampled records nothing (no sink) and only carries its context on.
 */
export class TraceSpan {
  name: string;
  readonly kind: SpanKindValue;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  /** The parent came in the client's traceparent (the OTLP flags say so). */
  readonly remoteParent: boolean;
  readonly traceState: string | undefined;
  readonly sampled: boolean;
  /** `performance.now()` when it started. */
  readonly startedAt: number;
  /** Keys and values, alternately; a key set again has its value replaced. */
  readonly attributes: (string | number | boolean)[] = [];
  statusCode = 0;
  #sink: SpanSink | undefined;

  constructor(
    name: string,
    kind: SpanKindValue,
    traceId: string,
    spanId: string,
    parentSpanId: string | undefined,
    remoteParent: boolean,
    traceState: string | undefined,
    sink: SpanSink | undefined,
  ) {
    this.name = name;
    this.kind = kind;
    this.traceId = traceId;
    this.spanId = spanId;
    this.parentSpanId = parentSpanId;
    this.remoteParent = remoteParent;
    this.traceState = traceState;
    this.sampled = sink !== undefined;
    this.startedAt = performance.now();
    this.#sink = sink;
  }

  /** Adds an attribute the span does not have yet (no look for an earlier value of the key). */
  addAttribute(key: string, value: string | number | boolean): void {
    if (this.#sink !== undefined) this.attributes.push(key, value);
  }

  setAttribute(key: string, value: string | number | boolean): void {
    if (this.#sink === undefined) return;
    const attributes = this.attributes;
    for (let i = 0; i < attributes.length; i += 2) {
      if (attributes[i] === key) {
        attributes[i + 1] = value;
        return;
      }
    }
    attributes.push(key, value);
  }

  updateName(name: string): void {
    this.name = name;
  }

  setStatus(status: { code: number }): void {
    this.statusCode = status.code;
  }

  /** Ends it (once): a recorded span goes to its sink. */
  end(): void {
    const sink = this.#sink;
    if (sink === undefined) return;
    this.#sink = undefined;
    sink.ended(this, performance.now());
  }
}
