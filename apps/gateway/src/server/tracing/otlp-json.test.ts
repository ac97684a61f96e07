import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { epochNanos } from '../epoch-nanos.testing.ts';
import { ExportEnvelope } from './otlp-json.ts';
import { SpanKind, type SpanKindValue, TraceSpan } from './span.ts';

// OpenTelemetry's own OTLP JSON serializer (the one its OTLP/HTTP exporter uses), as the oracle.
const require = createRequire(import.meta.url);
const { JsonTraceSerializer } = require('@opentelemetry/otlp-transformer') as {
  JsonTraceSerializer: { serializeRequest(spans: unknown[]): Uint8Array };
};

const RESOURCE = { 'service.name': 'gw', 'telemetry.sdk.name': 'portico' };
const SCOPE = '@portico/gateway';
const sink = { ended: () => {} };

interface Made {
  span: TraceSpan;
  endedAt: number;
}

function made(
  name: string,
  kind: SpanKindValue,
  ids: { traceId: string; spanId: string; parentSpanId: string | undefined; remoteParent: boolean },
  traceState: string | undefined,
  attributes: Record<string, string | number | boolean>,
  status = 0,
): Made {
  const { traceId, spanId, parentSpanId, remoteParent } = ids;
  const span = new TraceSpan(name, kind, traceId, spanId, parentSpanId, remoteParent, traceState, sink);
  for (const [key, value] of Object.entries(attributes)) span.setAttribute(key, value);
  span.setStatus({ code: status });
  return { span, endedAt: span.startedAt + 12.345678 };
}

// The SDK's spans share their resource and scope objects (the serializer groups by them).
const SDK_RESOURCE = { attributes: RESOURCE };
const SDK_SCOPE = { name: SCOPE };

/** The same span as OpenTelemetry's SDK hands its exporter (a ReadableSpan). */
function readable({ span, endedAt }: Made) {
  const hrTime = (at: number): [number, number] => {
    const nanos = epochNanos(at);
    return [Number(nanos.slice(0, -9)), Number(nanos.slice(-9))];
  };
  const attributes: Record<string, unknown> = {};
  for (let i = 0; i < span.attributes.length; i += 2)
    attributes[span.attributes[i] as string] = span.attributes[i + 1];
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => ({
      traceId: span.traceId,
      spanId: span.spanId,
      traceFlags: span.sampled ? 1 : 0,
      traceState: span.traceState === undefined ? undefined : { serialize: () => span.traceState },
    }),
    parentSpanContext:
      span.parentSpanId === undefined
        ? undefined
        : { spanId: span.parentSpanId, isRemote: span.remoteParent },
    startTime: hrTime(span.startedAt),
    endTime: hrTime(endedAt),
    attributes,
    droppedAttributesCount: 0,
    events: [],
    droppedEventsCount: 0,
    status: { code: span.statusCode },
    links: [],
    droppedLinksCount: 0,
    resource: SDK_RESOURCE,
    instrumentationScope: SDK_SCOPE,
  };
}

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

const TRACE = '0af7651916cd43dd8448eb211c80319c';

function spans(): Made[] {
  return [
    made(
      'GET proxied',
      SpanKind.SERVER,
      { traceId: TRACE, spanId: 'b7ad6b7169203331', parentSpanId: '00f067aa0ba902b7', remoteParent: true },
      'vendor=x,other=y',
      {
        'http.request.method': 'GET',
        'url.path': '/caf\u00e9/"quoted"\\back\nslash\u0001 \u{1f600}',
        'client.address': '127.0.0.1',
        'http.response.status_code': 503,
        ratio: 0.25,
        cached: false,
        seen: true,
        // One of each character that is escaped or not ASCII, each alone in its value.
        'a.backslash': 'x\\y',
        'a.quote': 'say "hi"',
        'a.control': 'tab\there',
        'a.delete': 'x\u007fy',
        'a.unit-separator': 'x\u001fy',
        'a.latin': 'caf\u00e9',
        'a.emoji': '\u{1f600}',
      },
      2,
    ),
    made(
      'GET',
      SpanKind.CLIENT,
      { traceId: TRACE, spanId: '53995c3f42cd8ad8', parentSpanId: 'b7ad6b7169203331', remoteParent: false },
      'vendor=x,other=y',
      { 'url.full': 'http://upstream:8080/x', 'http.response.status_code': 200 },
    ),
    made(
      'AddMark \u00e9t\u00e9',
      SpanKind.INTERNAL,
      {
        traceId: TRACE.replace('0a', 'ff'),
        spanId: '1111111111111111',
        parentSpanId: undefined,
        remoteParent: false,
      },
      undefined,
      {},
    ),
  ];
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
