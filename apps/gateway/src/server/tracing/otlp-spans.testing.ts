import { epochNanos } from '../epoch-nanos.testing.ts';
import { SpanKind, type SpanKindValue, TraceSpan } from './span.ts';

export { SpanKind, TraceSpan };

/** Spans for the OTLP writers' tests, and the same spans as OpenTelemetry's SDK gives its serializers. */

export const RESOURCE = { 'service.name': 'gw', 'telemetry.sdk.name': 'portico' };
export const SCOPE = '@portico/gateway';
export const sink = { ended: () => {} };

export interface Made {
  span: TraceSpan;
  endedAt: number;
}

export function made(
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
export function readable({ span, endedAt }: Made) {
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

export const TRACE = '0af7651916cd43dd8448eb211c80319c';

export function spans(): Made[] {
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
