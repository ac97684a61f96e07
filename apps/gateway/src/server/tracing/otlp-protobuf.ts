import type { TraceSpan } from './span.ts';

/**
 * OTLP/HTTP in protobuf (OTLP's default encoding): an `ExportTraceServiceRequest` of one resource
 * and one instrumentation scope, each span encoded into the batch's buffer as it ends, as the JSON
 * writer does. Ids go as bytes, times as fixed64, so a span is about a third of its JSON and costs
 * no digits to write. The envelope's lengths depend on the spans: its head is written in front of
 * them when the batch is sealed, in room kept at the buffer's start. The test compares what it
 * writes, decoded, with OpenTelemetry's own protobuf serializer's for the same spans.
 */

// Field tags (field number << 3 | wire type): 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32.
const REQUEST_RESOURCE_SPANS = (1 << 3) | 2;
const RESOURCE_SPANS_RESOURCE = (1 << 3) | 2;
const RESOURCE_SPANS_SCOPE_SPANS = (2 << 3) | 2;
const RESOURCE_ATTRIBUTES = (1 << 3) | 2;
const SCOPE_SPANS_SCOPE = (1 << 3) | 2;
const SCOPE_SPANS_SPANS = (2 << 3) | 2;
const SCOPE_NAME = (1 << 3) | 2;
const SPAN_TRACE_ID = (1 << 3) | 2;
const SPAN_SPAN_ID = (2 << 3) | 2;
const SPAN_TRACE_STATE = (3 << 3) | 2;
const SPAN_PARENT_SPAN_ID = (4 << 3) | 2;
const SPAN_NAME = (5 << 3) | 2;
const SPAN_KIND = (6 << 3) | 0;
const SPAN_START = (7 << 3) | 1;
const SPAN_END = (8 << 3) | 1;
const SPAN_ATTRIBUTES = (9 << 3) | 2;
const SPAN_STATUS = (15 << 3) | 2;
const SPAN_FLAGS = (16 << 3) | 5;
const KEY_VALUE_KEY = (1 << 3) | 2;
const KEY_VALUE_VALUE = (2 << 3) | 2;
const ANY_STRING = (1 << 3) | 2;
const ANY_BOOL = (2 << 3) | 0;
const ANY_INT = (3 << 3) | 0;
const ANY_DOUBLE = (4 << 3) | 1;
const STATUS_CODE = (3 << 3) | 0;

/** Keys whose encoded field is kept (the gateway sets a dozen; a bound for any other use). */
const MAX_KEYS = 256;
/** Bytes a span may take beyond which its length needs a third varint byte (rare: long attributes). */
const TWO_BYTE_LENGTH = 1 << 14;

const varintLength = (value: number): number => {
  let length = 1;
  for (let rest = value; rest >= 0x80; rest = Math.floor(rest / 0x80)) length++;
  return length;
};

/** Whether a string is ASCII: then its UTF-8 is its characters, one byte each. */
function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** A resource attribute (`KeyValue` with a string value, Resource field 1), encoded once. */
function resourceAttribute(key: string, value: string): Buffer {
  const keyValue = Buffer.concat([
    field(KEY_VALUE_KEY, Buffer.from(key)),
    field(KEY_VALUE_VALUE, field(ANY_STRING, Buffer.from(value))),
  ]);
  return field(RESOURCE_ATTRIBUTES, keyValue);
}

function varint(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return bytes;
}

/** A length-delimited field: its tag, length and bytes. */
function field(tag: number, bytes: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([tag, ...varint(bytes.length)]), bytes]);
}

/** Protobuf written into a byte buffer, grown when too small. */
class ProtoWriter {
  #buffer: Buffer;
  #at: number;

  constructor(storage: Buffer, at: number) {
    this.#buffer = storage;
    this.#at = at;
  }

  get length(): number {
    return this.#at;
  }

  get storage(): Buffer {
    return this.#buffer;
  }

  byte(value: number): void {
    this.#room(1);
    this.#buffer[this.#at++] = value;
  }

  bytes(bytes: Uint8Array): void {
    this.#room(bytes.length);
    const buffer = this.#buffer;
    let at = this.#at;
    for (let i = 0; i < bytes.length; i++) buffer[at++] = bytes[i]!;
    this.#at = at;
  }

  varint(value: number): void {
    this.#room(10);
    const buffer = this.#buffer;
    let rest = value;
    while (rest >= 0x80) {
      buffer[this.#at++] = (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    buffer[this.#at++] = rest;
  }

  /** A field of bytes given as lowercase hex (a span or trace id). */
  hexField(tag: number, hex: string): void {
    const length = hex.length >> 1;
    this.#room(2 + length);
    const buffer = this.#buffer;
    buffer[this.#at++] = tag;
    buffer[this.#at++] = length;
    for (let i = 0; i < hex.length; i += 2)
      buffer[this.#at++] = (hexValue(hex.charCodeAt(i)) << 4) | hexValue(hex.charCodeAt(i + 1));
  }

  /** A string field: tag, UTF-8 length, UTF-8. */
  stringField(tag: number, text: string): void {
    this.byte(tag);
    this.#string(text, isAscii(text) ? text.length : Buffer.byteLength(text));
  }

  /** Epoch nanoseconds of a `performance.now()` reading as a fixed64 field. */
  timeField(tag: number, at: number): void {
    const epochMillis = performance.timeOrigin + at;
    const millis = Math.floor(epochMillis);
    const nanos = Math.floor((epochMillis - millis) * 1e6);
    // millis × 10^6 + nanos exceeds a double's 53 bits: split millis at 2^16 so every product is exact.
    const high = Math.floor(millis / 0x10000);
    const scaled = high * 1e6; // < 2^45
    let low = (scaled % 0x10000) * 0x10000 + ((millis % 0x10000) * 1e6 + nanos);
    let upper = Math.floor(scaled / 0x10000);
    upper += Math.floor(low / 0x1_0000_0000);
    low %= 0x1_0000_0000;
    this.#room(9);
    this.#buffer[this.#at++] = tag;
    this.#buffer.writeUInt32LE(low, this.#at);
    this.#buffer.writeUInt32LE(upper, this.#at + 4);
    this.#at += 8;
  }

  /** A fixed32 field; its tag a varint (field 16, a span's flags, takes two bytes). */
  fixed32Field(tag: number, value: number): void {
    this.varint(tag);
    this.#room(4);
    this.#buffer.writeUInt32LE(value, this.#at);
    this.#at += 4;
  }

  /** One attribute (`KeyValue`, span field 9): `key` its encoded key field. */
  attribute(key: Uint8Array, value: string | number | boolean): void {
    let valueLength: number;
    let textLength = 0;
    if (typeof value === 'string') {
      textLength = isAscii(value) ? value.length : Buffer.byteLength(value);
      valueLength = 1 + varintLength(textLength) + textLength;
    } else if (typeof value === 'boolean') valueLength = 2;
    else if (Number.isInteger(value) && value >= 0) valueLength = 1 + varintLength(value);
    else if (Number.isInteger(value)) valueLength = 11;
    else valueLength = 9;
    const entryLength = key.length + 1 + varintLength(valueLength) + valueLength;
    this.byte(SPAN_ATTRIBUTES);
    this.varint(entryLength);
    this.bytes(key);
    this.byte(KEY_VALUE_VALUE);
    this.varint(valueLength);
    if (typeof value === 'string') {
      this.byte(ANY_STRING);
      this.#string(value, textLength);
    } else if (typeof value === 'boolean') {
      this.byte(ANY_BOOL);
      this.byte(value ? 1 : 0);
    } else if (Number.isInteger(value) && value >= 0) {
      this.byte(ANY_INT);
      this.varint(value);
    } else if (Number.isInteger(value)) {
      // A negative int64: ten bytes of two's complement.
      this.byte(ANY_INT);
      this.#room(10);
      let rest = BigInt.asUintN(64, BigInt(value));
      for (let i = 0; i < 9; i++) {
        this.#buffer[this.#at++] = Number(rest & 0x7fn) | 0x80;
        rest >>= 7n;
      }
      this.#buffer[this.#at++] = Number(rest);
    } else {
      this.byte(ANY_DOUBLE);
      this.#room(8);
      this.#buffer.writeDoubleLE(value, this.#at);
      this.#at += 8;
    }
  }

  /** Keeps two bytes for a message's length; `endMessage` writes it once the message is written. */
  startMessage(): number {
    this.#room(2);
    this.#at += 2;
    return this.#at;
  }

  /** Writes the length of the message begun at `start`, moving it when it does not take two bytes. */
  endMessage(start: number): void {
    const length = this.#at - start;
    const buffer = this.#buffer;
    if (length < 0x80) {
      buffer.copyWithin(start - 1, start, this.#at);
      buffer[start - 2] = length;
      this.#at--;
    } else if (length < TWO_BYTE_LENGTH) {
      buffer[start - 2] = (length % 0x80) | 0x80;
      buffer[start - 1] = length >> 7;
    } else {
      const lengthBytes = varint(length);
      this.#room(lengthBytes.length - 2);
      this.#buffer.copyWithin(start - 2 + lengthBytes.length, start, this.#at);
      this.#buffer.set(lengthBytes, start - 2);
      this.#at += lengthBytes.length - 2;
    }
  }

  #string(text: string, length: number): void {
    this.varint(length);
    this.#room(length);
    const buffer = this.#buffer;
    if (length === text.length) {
      let at = this.#at;
      for (let i = 0; i < text.length; i++) buffer[at++] = text.charCodeAt(i);
      this.#at = at;
    } else {
      this.#at += buffer.write(text, this.#at, 'utf8');
    }
  }

  #room(bytes: number): void {
    if (this.#at + bytes <= this.#buffer.length) return;
    const larger = Buffer.allocUnsafe(Math.max(this.#buffer.length * 2, this.#at + bytes));
    this.#buffer.copy(larger, 0, 0, this.#at);
    this.#buffer = larger;
  }
}

function hexValue(c: number): number {
  return c <= 0x39 ? c - 0x30 : c - 0x57;
}

/** One export request's body being written: room for the envelope's head, then the spans as they end. */
class ProtobufBatch {
  readonly #out: ProtoWriter;
  readonly #envelope: ProtobufEnvelope;
  #spans = 0;

  constructor(envelope: ProtobufEnvelope, storage: Buffer) {
    this.#envelope = envelope;
    this.#out = new ProtoWriter(storage, envelope.headRoom);
  }

  get spans(): number {
    return this.#spans;
  }

  /** Adds one ended span (a `Span` of the scope's `spans`). */
  add(span: TraceSpan, endedAt: number): void {
    const out = this.#out;
    this.#spans++;
    out.byte(SCOPE_SPANS_SPANS);
    const start = out.startMessage();
    out.hexField(SPAN_TRACE_ID, span.traceId);
    out.hexField(SPAN_SPAN_ID, span.spanId);
    if (span.traceState !== undefined) out.stringField(SPAN_TRACE_STATE, span.traceState);
    if (span.parentSpanId !== undefined) out.hexField(SPAN_PARENT_SPAN_ID, span.parentSpanId);
    out.stringField(SPAN_NAME, span.name);
    out.byte(SPAN_KIND);
    out.byte(span.kind + 1);
    out.timeField(SPAN_START, span.startedAt);
    out.timeField(SPAN_END, endedAt);
    const attributes = span.attributes;
    for (let i = 0; i < attributes.length; i += 2)
      out.attribute(this.#envelope.key(attributes[i] as string), attributes[i + 1]!);
    // An unset status is left out (its default).
    if (span.statusCode !== 0) {
      out.byte(SPAN_STATUS);
      out.byte(2);
      out.byte(STATUS_CODE);
      out.byte(span.statusCode);
    }
    out.fixed32Field(SPAN_FLAGS, (span.sampled ? 1 : 0) | 0x100 | (span.remoteParent ? 0x200 : 0));
    out.endMessage(start);
  }

  /** The request's body: the envelope's head written in front of the spans (a view of `storage`). */
  seal(): Buffer {
    const from = this.#envelope.writeHead(this.#out.storage, this.#out.length - this.#envelope.headRoom);
    return this.#out.storage.subarray(from, this.#out.length);
  }

  /** The buffer the batch was written into, to be reused for another once its export is done. */
  get storage(): Buffer {
    return this.#out.storage;
  }
}

/** The `ExportTraceServiceRequest` around spans of one resource and one instrumentation scope. */
export class ProtobufEnvelope {
  readonly contentType = 'application/x-protobuf';
  /** The resource field of `ResourceSpans` and the scope field of `ScopeSpans`, encoded once. */
  readonly #resource: Buffer;
  readonly #scope: Buffer;
  /** Bytes kept at a batch's start for the head: the two fields and four tags and lengths. */
  readonly headRoom: number;
  readonly #keys = new Map<string, Buffer>();

  constructor(resource: Readonly<Record<string, string>>, scope: string) {
    const attributes = Buffer.concat(
      Object.entries(resource).map(([key, value]) => resourceAttribute(key, value)),
    );
    this.#resource = field(RESOURCE_SPANS_RESOURCE, attributes);
    this.#scope = field(SCOPE_SPANS_SCOPE, field(SCOPE_NAME, Buffer.from(scope)));
    this.headRoom = this.#resource.length + this.#scope.length + 2 * (1 + 5);
  }

  /** A batch to write spans into: into `storage` (an earlier batch's), or a new buffer sized for about `spans`. */
  batch(spans: number, storage?: Buffer): ProtobufBatch {
    return new ProtobufBatch(this, storage ?? Buffer.allocUnsafe(spans * 256 + this.headRoom + 1024));
  }

  /** The key field of a `KeyValue`, encoded once per key. */
  key(key: string): Buffer {
    let encoded = this.#keys.get(key);
    if (encoded === undefined) {
      encoded = field(KEY_VALUE_KEY, Buffer.from(key));
      if (this.#keys.size < MAX_KEYS) this.#keys.set(key, encoded);
    }
    return encoded;
  }

  /**
   * Writes the head (request → resource spans → resource, scope spans → scope) so that it ends where
   * the spans begin (`headRoom`); returns where it starts.
   */
  writeHead(buffer: Buffer, spansLength: number): number {
    const scopeSpans = this.#scope.length + spansLength;
    const resourceSpans = this.#resource.length + 1 + varintLength(scopeSpans) + scopeSpans;
    const head = Buffer.concat([
      Buffer.from([REQUEST_RESOURCE_SPANS, ...varint(resourceSpans)]),
      this.#resource,
      Buffer.from([RESOURCE_SPANS_SCOPE_SPANS, ...varint(scopeSpans)]),
      this.#scope,
    ]);
    const from = this.headRoom - head.length;
    head.copy(buffer, from);
    return from;
  }
}
