import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { epochNanos } from '../epoch-nanos.testing.ts';
import { ExportEnvelope } from './otlp-json.ts';
import {
  made,
  RESOURCE,
  readable,
  SCOPE,
  SpanKind,
  sink,
  spans,
  TRACE,
  TraceSpan,
} from './otlp-spans.testing.ts';

// OpenTelemetry's own OTLP JSON serializer (the one its OTLP/HTTP exporter uses), as the oracle.
const require = createRequire(import.meta.url);
const { JsonTraceSerializer } = require('@opentelemetry/otlp-transformer') as {
  JsonTraceSerializer: { serializeRequest(spans: unknown[]): Uint8Array };
};

/** JSON without the fields the protobuf JSON mapping lets a writer leave out at their default. */
function withoutDefaults(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDefaults);
  if (value === null || typeof value !== 'object') return value;
  const kept: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (field === 0 || (Array.isArray(field) && field.length === 0)) continue;
    if (field === undefined) continue;
    kept[key] = withoutDefaults(field);
  }
  return kept;
}

describe('OTLP/HTTP JSON, written span by span into a batch', () => {
  it("says what OpenTelemetry's own serializer says for the same spans (escapes, non-ASCII, types, parents, status, flags)", () => {
    const all = spans();
    const batch = new ExportEnvelope(RESOURCE, SCOPE).batch(1);
    for (const { span, endedAt } of all) batch.add(span, endedAt);
    expect(batch.spans).toBe(3);
    const ours = JSON.parse(batch.seal().toString('utf8'));
    const theirs = JSON.parse(
      Buffer.from(JsonTraceSerializer.serializeRequest(all.map(readable))).toString('utf8'),
    );
    expect(withoutDefaults(ours)).toEqual(withoutDefaults(theirs));
    // What the comparison leaves to defaults, checked as written.
    const [server, client] = ours.resourceSpans[0].scopeSpans[0].spans;
    expect(server.status).toEqual({ code: 2 });
    expect(server.flags).toBe(0x301);
    expect(client.status).toEqual({});
    expect(client.flags).toBe(0x101);
  });

  it('writes an empty batch as an empty export, and grows its buffer past the size it was made for', () => {
    const envelope = new ExportEnvelope(RESOURCE, SCOPE);
    expect(JSON.parse(envelope.batch(1).seal().toString()).resourceSpans[0].scopeSpans[0].spans).toEqual([]);
    const batch = envelope.batch(1);
    const long = made(
      'GET',
      SpanKind.SERVER,
      { traceId: TRACE, spanId: 'b7ad6b7169203331', parentSpanId: undefined, remoteParent: false },
      undefined,
      {
        'url.path': `/${'a'.repeat(100_000)}`,
      },
    );
    for (let i = 0; i < 5; i++) batch.add(long.span, long.endedAt);
    const written = JSON.parse(batch.seal().toString()).resourceSpans[0].scopeSpans[0].spans;
    expect(written).toHaveLength(5);
    expect(written[4].attributes[0].value.stringValue).toHaveLength(100_001);
  });

  it('writes epoch nanoseconds within a microsecond of the clock reading', () => {
    const at = performance.now();
    const exact = BigInt(Math.round((performance.timeOrigin + at) * 1000)) * 1000n;
    const written = BigInt(epochNanos(at));
    const apart = written > exact ? written - exact : exact - written;
    expect(apart < 1000n).toBe(true);
    expect(epochNanos(at)).toMatch(/^\d{19}$/);
  });

  it('keeps one value per attribute key, the last one set', () => {
    const span = new TraceSpan(
      'x',
      SpanKind.SERVER,
      TRACE,
      'b7ad6b7169203331',
      undefined,
      false,
      undefined,
      sink,
    );
    span.setAttribute('http.route', 'a');
    span.setAttribute('http.route', 'b');
    expect(span.attributes).toEqual(['http.route', 'b']);
    // addAttribute is for a key not set yet: it does not look.
    span.addAttribute('url.path', '/x');
    expect(span.attributes).toEqual(['http.route', 'b', 'url.path', '/x']);
  });
});
