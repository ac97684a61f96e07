import { bytes, JsonBytes } from '../json-bytes.ts';
import type { TraceSpan } from './span.ts';

/**
 * OTLP/HTTP JSON (the protobuf messages' JSON mapping; ids in hex, as OTLP's JSON form says; fields
 * at their default left out, as that mapping allows), each span written into its batch's buffer
 * as it ends: a batch is one buffer outside V8's heap, not hundreds of span objects that outlive the
 * young generation (what OpenTelemetry's batch processor holds until export), and no span is
 * formatted twice. The test compares what it writes with OpenTelemetry's own JSON serializer for the
 * same spans.
 */

const SPAN_START = bytes('{"traceId":"');
const SPAN_ID = bytes('","spanId":"');
const PARENT_ID = bytes('","parentSpanId":"');
const AFTER_IDS = bytes('",');
const TRACE_STATE = bytes('"traceState":');
const NAME = bytes('"name":');
const KIND = bytes(',"kind":');
const START = bytes(',"startTimeUnixNano":');
const END = bytes('","endTimeUnixNano":"');
const ATTRIBUTES = bytes(',"attributes":[');
const STRING_VALUE = bytes(',"value":{"stringValue":');
const INT_VALUE = bytes(',"value":{"intValue":');
const DOUBLE_VALUE = bytes(',"value":{"doubleValue":');
const TRUE_VALUE = bytes(',"value":{"boolValue":true');
const FALSE_VALUE = bytes(',"value":{"boolValue":false');
/** Keys whose `{"key":...` is kept written (the gateway sets a dozen; a bound for any other use). */
const MAX_KEYS = 256;
const ATTRIBUTE_END = bytes('}');
const STATUS = bytes('],"status":{');
const STATUS_CODE = bytes('"code":');
const FLAGS = bytes('},"flags":');

/** OTLP's span flags: the W3C trace flags, and that whether the parent is remote is known (0x100) and true (0x200). */
function spanFlags(span: TraceSpan): number {
  return (span.sampled ? 1 : 0) | 0x100 | (span.remoteParent ? 0x200 : 0);
}

/** One attribute as an OTLP `KeyValue`, as a string (the resource's, written once). */
function attributeJson(key: string, value: string | number | boolean): string {
  const typed =
    typeof value === 'string'
      ? `{"stringValue":${JSON.stringify(value)}}`
      : typeof value === 'boolean'
        ? `{"boolValue":${value}}`
        : Number.isInteger(value)
          ? `{"intValue":${value}}`
          : `{"doubleValue":${JSON.stringify(value)}}`;
  return `{"key":${JSON.stringify(key)},"value":${typed}}`;
}

const QUOTE = 0x22;
const COMMA = 0x2c;

/**
 * One export request's body being written: the envelope's head (resource and scope), the spans as
 * they end, and the tail when it is sealed. A span is written piece by piece straight into the
 * buffer, constants copied and short strings and numbers written by loops: building it as a string
 * first made about 1.7 KB of garbage per request for V8 to collect.
 */
class JsonBatch {
  readonly #out: JsonBytes;
  #spans = 0;
  readonly #tail: Uint8Array;
  readonly #keys: Map<string, Uint8Array>;

  constructor(head: Uint8Array, tail: Uint8Array, storage: Buffer, keys: Map<string, Uint8Array>) {
    this.#out = new JsonBytes(storage);
    this.#out.constant(head);
    this.#tail = tail;
    this.#keys = keys;
  }

  get spans(): number {
    return this.#spans;
  }

  /** Adds one ended span. */
  add(span: TraceSpan, endedAt: number): void {
    const out = this.#out;
    if (this.#spans > 0) out.byte(COMMA);
    this.#spans++;
    out.constant(SPAN_START);
    out.ascii(span.traceId);
    out.constant(SPAN_ID);
    out.ascii(span.spanId);
    if (span.parentSpanId !== undefined) {
      out.constant(PARENT_ID);
      out.ascii(span.parentSpanId);
    }
    out.constant(AFTER_IDS);
    if (span.traceState !== undefined) {
      out.constant(TRACE_STATE);
      out.string(span.traceState);
      out.byte(COMMA);
    }
    out.constant(NAME);
    out.string(span.name);
    out.constant(KIND);
    out.number(span.kind + 1);
    out.constant(START);
    out.byte(QUOTE);
    out.epochNanos(span.startedAt);
    out.constant(END);
    out.epochNanos(endedAt);
    out.byte(QUOTE);
    out.constant(ATTRIBUTES);
    const attributes = span.attributes;
    for (let i = 0; i < attributes.length; i += 2) {
      if (i > 0) out.byte(COMMA);
      out.constant(this.#key(attributes[i] as string));
      this.#value(attributes[i + 1]!);
      out.constant(ATTRIBUTE_END);
    }
    out.constant(STATUS);
    if (span.statusCode !== 0) {
      out.constant(STATUS_CODE);
      out.number(span.statusCode);
    }
    out.constant(FLAGS);
    out.number(spanFlags(span));
    out.byte(0x7d);
  }

  /** The request's body: the spans and the envelope's tail (a view of `storage`). */
  seal(): Buffer {
    this.#out.constant(this.#tail);
    return this.#out.storage.subarray(0, this.#out.length);
  }

  /** The buffer the batch was written into, to be reused for another once its export is done. */
  get storage(): Buffer {
    return this.#out.storage;
  }

  /** `{"key":"<key>"`, written once per key: every span repeats the same few keys. */
  #key(key: string): Uint8Array {
    let written = this.#keys.get(key);
    if (written === undefined) {
      written = Buffer.from(`{"key":${JSON.stringify(key)}`);
      if (this.#keys.size < MAX_KEYS) this.#keys.set(key, written);
    }
    return written;
  }

  #value(value: string | number | boolean): void {
    const out = this.#out;
    if (typeof value === 'string') {
      out.constant(STRING_VALUE);
      out.string(value);
    } else if (typeof value === 'boolean') {
      out.constant(value ? TRUE_VALUE : FALSE_VALUE);
    } else {
      out.constant(Number.isInteger(value) ? INT_VALUE : DOUBLE_VALUE);
      out.number(value);
    }
    out.byte(0x7d);
  }
}

/** The `ExportTraceServiceRequest` around spans of one resource and one instrumentation scope. */
export class ExportEnvelope {
  readonly contentType = 'application/json';
  readonly #head: Buffer;
  readonly #tail = bytes(']}]}]}');
  readonly #keys = new Map<string, Uint8Array>();

  constructor(resource: Readonly<Record<string, string>>, scope: string) {
    const attributes = Object.entries(resource)
      .map(([key, value]) => attributeJson(key, value))
      .join(',');
    this.#head = Buffer.from(
      `{"resourceSpans":[{"resource":{"attributes":[${attributes}]},` +
        `"scopeSpans":[{"scope":{"name":${JSON.stringify(scope)}},"spans":[`,
    );
  }

  /**
   * A batch to write spans into: into `storage` (a buffer an earlier batch was written into), or a
   * new buffer sized for about `spans` of them.
   */
  batch(spans: number, storage?: Buffer): JsonBatch {
    const buffer = storage ?? Buffer.allocUnsafe(spans * 640 + 1024);
    return new JsonBatch(this.#head, this.#tail, buffer, this.#keys);
  }
}
