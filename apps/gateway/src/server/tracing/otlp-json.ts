import type { TraceSpan } from './span.ts';

/**
 * OTLP/HTTP JSON (the protobuf messages' JSON mapping; ids in hex, as OTLP's JSON form says; fields
 * at their default left out, as that mapping allows), each span written into its batch's buffer
 * as it ends: a batch is one buffer outside V8's heap, not hundreds of span objects that outlive the
 * young generation (what OpenTelemetry's batch processor holds until export), and no span is
 * formatted twice. The test compares what it writes with OpenTelemetry's own JSON serializer for the
 * same spans.
 */

const bytes = (text: string): Buffer => Buffer.from(text, 'latin1');
const SPAN_START = bytes('{"traceId":"');
const SPAN_ID = bytes('","spanId":"');
const PARENT_ID = bytes('","parentSpanId":"');
const AFTER_IDS = bytes('",');
const TRACE_STATE = bytes('"traceState":');
const NAME = bytes('"name":');
const KIND = bytes(',"kind":');
const START = bytes(',"startTimeUnixNano":');
const END = bytes(',"endTimeUnixNano":');
const ATTRIBUTES = bytes(',"attributes":[');
const KEY = bytes('{"key":');
const STRING_VALUE = bytes(',"value":{"stringValue":');
const INT_VALUE = bytes(',"value":{"intValue":');
const DOUBLE_VALUE = bytes(',"value":{"doubleValue":');
const TRUE_VALUE = bytes(',"value":{"boolValue":true');
const FALSE_VALUE = bytes(',"value":{"boolValue":false');
const ATTRIBUTE_END = bytes('}');
const STATUS = bytes('],"status":{');
const STATUS_CODE = bytes('"code":');
const FLAGS = bytes('},"flags":');

/** OTLP's span flags: the W3C trace flags, and that whether the parent is remote is known (0x100) and true (0x200). */
function spanFlags(span: TraceSpan): number {
  return (span.sampled ? 1 : 0) | 0x100 | (span.remoteParent ? 0x200 : 0);
}

/**
 * Epoch nanoseconds of a `performance.now()` reading, in decimal, as a batch writes them (to a
 * quarter of a microsecond, a double's precision here): the milliseconds, then the six digits of
 * nanoseconds past them.
 */
export function epochNanos(at: number): string {
  const epochMillis = performance.timeOrigin + at;
  const millis = Math.floor(epochMillis);
  return `${millis}${String(Math.floor((epochMillis - millis) * 1e6)).padStart(6, '0')}`;
}

/** One attribute as an OTLP `KeyValue`, as a string (the resource's, written once). */
export function attributeJson(key: string, value: string | number | boolean): string {
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

/** Whether a character must be escaped in a JSON string, or is not ASCII (then written as UTF-8). */
const special = (c: number): boolean => c < 0x20 || c > 0x7e || c === QUOTE || c === 0x5c;

/**
 * One export request's body being written: the envelope's head (resource and scope), the spans as
 * they end, and the tail when it is sealed. A span is written piece by piece straight into the
 * buffer, constants copied and short strings and numbers written by loops: building it as a string
 * first made about 1.7 KB of garbage per request for V8 to collect.
 */
export class JsonBatch {
  #buffer: Buffer;
  #at: number;
  #spans = 0;
  readonly #tail: Uint8Array;
  /** The last millisecond written, and its digits. */
  #millis = -1;
  #millisDigits: Uint8Array = new Uint8Array(0);

  constructor(head: Buffer, tail: Uint8Array, expectedBytes: number) {
    this.#buffer = Buffer.allocUnsafe(Math.max(expectedBytes, head.length + tail.length + 1024));
    this.#at = head.copy(this.#buffer, 0);
    this.#tail = tail;
  }

  get spans(): number {
    return this.#spans;
  }

  /** Adds one ended span. */
  add(span: TraceSpan, endedAt: number): void {
    if (this.#spans > 0) this.#byte(COMMA);
    this.#spans++;
    this.#constant(SPAN_START);
    this.#ascii(span.traceId);
    this.#constant(SPAN_ID);
    this.#ascii(span.spanId);
    if (span.parentSpanId !== undefined) {
      this.#constant(PARENT_ID);
      this.#ascii(span.parentSpanId);
    }
    this.#constant(AFTER_IDS);
    if (span.traceState !== undefined) {
      this.#constant(TRACE_STATE);
      this.#string(span.traceState);
      this.#byte(COMMA);
    }
    this.#constant(NAME);
    this.#string(span.name);
    this.#constant(KIND);
    this.#integer(span.kind + 1);
    this.#constant(START);
    this.#nanos(span.startedAt);
    this.#constant(END);
    this.#nanos(endedAt);
    this.#constant(ATTRIBUTES);
    const attributes = span.attributes;
    for (let i = 0; i < attributes.length; i += 2) {
      if (i > 0) this.#byte(COMMA);
      this.#constant(KEY);
      this.#string(attributes[i] as string);
      this.#value(attributes[i + 1]!);
      this.#constant(ATTRIBUTE_END);
    }
    this.#constant(STATUS);
    if (span.statusCode !== 0) {
      this.#constant(STATUS_CODE);
      this.#integer(span.statusCode);
    }
    this.#constant(FLAGS);
    this.#integer(spanFlags(span));
    this.#byte(0x7d);
  }

  /** The request's body: the spans and the envelope's tail. */
  seal(): Buffer {
    this.#constant(this.#tail);
    this.#millisDigits = new Uint8Array(0);
    return this.#buffer.subarray(0, this.#at);
  }

  #value(value: string | number | boolean): void {
    if (typeof value === 'string') {
      this.#constant(STRING_VALUE);
      this.#string(value);
    } else if (typeof value === 'boolean') {
      this.#constant(value ? TRUE_VALUE : FALSE_VALUE);
    } else if (Number.isSafeInteger(value) && value >= 0) {
      this.#constant(INT_VALUE);
      this.#integer(value);
    } else {
      this.#constant(Number.isInteger(value) ? INT_VALUE : DOUBLE_VALUE);
      this.#ascii(JSON.stringify(value));
    }
    this.#byte(0x7d);
  }

  /** A JSON string: written as it is when nothing in it needs escaping and it is ASCII (the usual case). */
  #string(text: string): void {
    this.#room(text.length + 2);
    const buffer = this.#buffer;
    let at = this.#at;
    buffer[at++] = QUOTE;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (special(c)) {
        this.#escaped(text);
        return;
      }
      buffer[at++] = c;
    }
    buffer[at++] = QUOTE;
    this.#at = at;
  }

  #escaped(text: string): void {
    const json = JSON.stringify(text);
    this.#room(Buffer.byteLength(json));
    this.#at += this.#buffer.write(json, this.#at, 'utf8');
  }

  /** Text known to be ASCII with nothing to escape (hex ids, a number's digits). */
  #ascii(text: string): void {
    this.#room(text.length);
    const buffer = this.#buffer;
    let at = this.#at;
    for (let i = 0; i < text.length; i++) buffer[at++] = text.charCodeAt(i);
    this.#at = at;
  }

  /** A non-negative safe integer's decimal digits, written without making a string. */
  #integer(value: number): void {
    let digits = 1;
    for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
    this.#room(digits);
    const buffer = this.#buffer;
    let rest = value;
    for (let i = this.#at + digits - 1; i >= this.#at; i--) {
      buffer[i] = 0x30 + (rest % 10);
      rest = Math.floor(rest / 10);
    }
    this.#at += digits;
  }

  /** `epochNanos(at)` in quotes (OTLP's JSON writes a fixed64 as a decimal string), without making a string. */
  #nanos(at: number): void {
    const epochMillis = performance.timeOrigin + at;
    const millis = Math.floor(epochMillis);
    // Spans end many to a millisecond under load: its digits are made once.
    if (millis !== this.#millis) {
      this.#millis = millis;
      this.#millisDigits = bytes(String(millis));
    }
    let nanos = Math.floor((epochMillis - millis) * 1e6);
    this.#byte(QUOTE);
    this.#constant(this.#millisDigits);
    this.#room(7);
    const buffer = this.#buffer;
    for (let i = this.#at + 5; i >= this.#at; i--) {
      buffer[i] = 0x30 + (nanos % 10);
      nanos = (nanos / 10) | 0;
    }
    this.#at += 6;
    buffer[this.#at++] = QUOTE;
  }

  #byte(value: number): void {
    this.#room(1);
    this.#buffer[this.#at++] = value;
  }

  /** Bytes made once; copied by a loop, quicker than `set` for a few dozen bytes. */
  #constant(bytes: Uint8Array): void {
    this.#room(bytes.length);
    const buffer = this.#buffer;
    let at = this.#at;
    for (let i = 0; i < bytes.length; i++) buffer[at++] = bytes[i]!;
    this.#at = at;
  }

  #room(bytes: number): void {
    if (this.#at + bytes <= this.#buffer.length) return;
    const larger = Buffer.allocUnsafe(Math.max(this.#buffer.length * 2, this.#at + bytes));
    this.#buffer.copy(larger, 0, 0, this.#at);
    this.#buffer = larger;
  }
}

/** The `ExportTraceServiceRequest` around spans of one resource and one instrumentation scope. */
export class ExportEnvelope {
  readonly #head: Buffer;
  readonly #tail = bytes(']}]}]}');

  constructor(resource: Readonly<Record<string, string>>, scope: string) {
    const attributes = Object.entries(resource)
      .map(([key, value]) => attributeJson(key, value))
      .join(',');
    this.#head = Buffer.from(
      `{"resourceSpans":[{"resource":{"attributes":[${attributes}]},` +
        `"scopeSpans":[{"scope":{"name":${JSON.stringify(scope)}},"spans":[`,
    );
  }

  /** A batch to write spans into, its buffer sized for about `spans` of them. */
  batch(spans: number): JsonBatch {
    return new JsonBatch(this.#head, this.#tail, spans * 640);
  }
}
