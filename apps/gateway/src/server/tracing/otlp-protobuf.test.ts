import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { type Decoded, decode, REQUEST } from './otlp-decode.testing.ts';
import { ProtobufEnvelope } from './otlp-protobuf.ts';
import { made, RESOURCE, readable, SCOPE, SpanKind, spans, TRACE } from './otlp-spans.testing.ts';

// OpenTelemetry's own OTLP protobuf serializer (the one its OTLP/HTTP exporter uses), as the oracle.
const require = createRequire(import.meta.url);
const { ProtobufTraceSerializer } = require('@opentelemetry/otlp-transformer') as {
  ProtobufTraceSerializer: { serializeRequest(spans: unknown[]): Uint8Array };
};

/** A double attribute's bytes as a reader sees them (field 4 of AnyValue, fixed64). */
const doubleBits = (value: number) => {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value, true);
  return view.getBigUint64(0, true);
};

describe('OTLP/HTTP protobuf, written span by span into a batch', () => {
  it("says what OpenTelemetry's own serializer says for the same spans (non-ASCII, types, parents, status, flags)", () => {
    const all = spans();
    const envelope = new ProtobufEnvelope(RESOURCE, SCOPE);
    const batch = envelope.batch(1);
    for (const { span, endedAt } of all) batch.add(span, endedAt);
    expect(batch.spans).toBe(3);
    const ours = decode(batch.seal(), REQUEST);
    const theirs = decode(ProtobufTraceSerializer.serializeRequest(all.map(readable)), REQUEST);
    expect(ours).toEqual(theirs);
    // Checked as written, not only as equal to the oracle.
    const scopeSpans = (ours[1]![0] as Decoded)[2]![0] as Decoded;
    const [server, client] = scopeSpans[2] as Decoded[];
    expect(server![1]).toEqual([TRACE]);
    expect(server![4]).toEqual(['00f067aa0ba902b7']);
    expect(server![16]).toEqual([0x301]);
    expect(server![15]).toEqual([{ 3: [2n] }]);
    expect(client![15]).toBeUndefined();
    const ratio = (server![9] as Decoded[]).find((entry) => entry[1]![0] === 'ratio')!;
    expect(ratio[2]).toEqual([{ 4: [doubleBits(0.25)] }]);
    expect(envelope.contentType).toBe('application/x-protobuf');
  });

  it('writes start and end times as epoch nanoseconds, within a microsecond of the clock reading', () => {
    const { span, endedAt } = made(
      'x',
      SpanKind.SERVER,
      { traceId: TRACE, spanId: '1111111111111111', parentSpanId: undefined, remoteParent: false },
      undefined,
      {},
    );
    const batch = new ProtobufEnvelope(RESOURCE, SCOPE).batch(1);
    batch.add(span, endedAt);
    const written = ((decode(batch.seal(), REQUEST)[1]![0] as Decoded)[2]![0] as Decoded)[2]![0] as Decoded;
    const exact = (at: number) => BigInt(Math.round((performance.timeOrigin + at) * 1000)) * 1000n;
    for (const [field, at] of [
      [7, span.startedAt],
      [8, endedAt],
    ] as const) {
      const value = written[field]![0] as bigint;
      const apart = value > exact(at) ? value - exact(at) : exact(at) - value;
      expect(apart < 1000n).toBe(true);
    }
  });

  it('writes an empty batch as an empty export, spans of every length, and grows its buffer', () => {
    const envelope = new ProtobufEnvelope(RESOURCE, SCOPE);
    const empty = decode(envelope.batch(1).seal(), REQUEST);
    expect((empty[1]![0] as Decoded)[2]).toEqual([{ 1: [{ 1: [SCOPE] }] }]);
    // Lengths whose varint takes one, two and three bytes, in one batch made for a single span.
    const batch = envelope.batch(1);
    const lengths = [0, 10, 200, 20_000, 100_000];
    for (const length of lengths) {
      const { span, endedAt } = made(
        'GET',
        SpanKind.SERVER,
        { traceId: TRACE, spanId: 'b7ad6b7169203331', parentSpanId: undefined, remoteParent: false },
        undefined,
        length === 0 ? {} : { 'url.path': 'a'.repeat(length) },
      );
      batch.add(span, endedAt);
    }
    const written = ((decode(batch.seal(), REQUEST)[1]![0] as Decoded)[2]![0] as Decoded)[2] as Decoded[];
    expect(
      written.map(
        (span) => ((span[9]?.[0] as Decoded | undefined)?.[2]?.[0] as Decoded | undefined)?.[1]?.[0],
      ),
    ).toEqual(lengths.map((length) => (length === 0 ? undefined : 'a'.repeat(length))));
  });

  it('writes negative and large integers and booleans as the oracle does', () => {
    const { span, endedAt } = made(
      'x',
      SpanKind.INTERNAL,
      { traceId: TRACE, spanId: '1111111111111111', parentSpanId: undefined, remoteParent: false },
      undefined,
      { negative: -5, large: 2 ** 40, zero: 0, yes: true, no: false },
    );
    const batch = new ProtobufEnvelope(RESOURCE, SCOPE).batch(1);
    batch.add(span, endedAt);
    expect(decode(batch.seal(), REQUEST)).toEqual(
      decode(ProtobufTraceSerializer.serializeRequest([readable({ span, endedAt })]), REQUEST),
    );
  });
});
