import { describe, expect, it } from 'vitest';
import { formatTraceparent, IdSource, parseTraceparent, sampledByRatio } from './trace-context.ts';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN = 'b7ad6b7169203331';

describe('parseTraceparent (W3C Trace Context)', () => {
  it('reads version 00: ids, the sampled flag, and the tracestate that came with it', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`, 'vendor=a,other=b')).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      sampled: true,
      traceState: 'vendor=a,other=b',
    });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`, undefined)).toMatchObject({ sampled: false });
    // Only the sampled bit counts among the flags.
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-03`, undefined)).toMatchObject({ sampled: true });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-02`, undefined)).toMatchObject({ sampled: false });
  });

  it('accepts a later version with more fields after its four, and reads the four', () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-whatever`, undefined)).toMatchObject({
      traceId: TRACE,
      sampled: true,
    });
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['short', `00-${TRACE}-${SPAN}-0`],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['version 00 with more after it', `00-${TRACE}-${SPAN}-01-x`],
    ['a later version with something other than a dash after its four fields', `01-${TRACE}-${SPAN}-01x`],
    ['uppercase hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['an all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['a misplaced dash', `00-${TRACE}${SPAN.slice(0, 1)}-${SPAN.slice(1)}-01`],
    ['two fields joined (two traceparent headers)', `00-${TRACE}-${SPAN}-01, 00-${TRACE}-${SPAN}-01`],
    ['a non-hex flag', `00-${TRACE}-${SPAN}-0g`],
  ])('ignores a traceparent that is %s (the request starts its own trace)', (_, value) => {
    expect(parseTraceparent(value, 'vendor=a')).toBeUndefined();
  });

  it('drops a tracestate that is too long, has too many members, or is not well-formed, keeping the traceparent', () => {
    const parent = `00-${TRACE}-${SPAN}-01`;
    expect(parseTraceparent(parent, `k=${'v'.repeat(511)}`)?.traceState).toBeUndefined();
    const members = Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(',');
    expect(parseTraceparent(parent, members)?.traceState).toBeUndefined();
    expect(parseTraceparent(parent, members.split(',').slice(0, 32).join(','))?.traceState).toBeDefined();
    expect(parseTraceparent(parent, 'novalue')?.traceState).toBeUndefined();
    expect(parseTraceparent(parent, 'a=b,,c=d')?.traceState).toBeUndefined();
    expect(parseTraceparent(parent, 'a=\u00e9')?.traceState).toBeUndefined();
    expect(parseTraceparent(parent, '')?.traceState).toBeUndefined();
  });

  it('formats the context it carries on', () => {
    expect(formatTraceparent(TRACE, SPAN, true)).toBe(`00-${TRACE}-${SPAN}-01`);
    expect(formatTraceparent(TRACE, SPAN, false)).toBe(`00-${TRACE}-${SPAN}-00`);
    expect(parseTraceparent(formatTraceparent(TRACE, SPAN, true), undefined)?.spanId).toBe(SPAN);
  });
});

describe('IdSource', () => {
  it('gives lowercase hex ids of 32 and 16 digits, none repeated across many refills of its pool', () => {
    const ids = new IdSource();
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const trace = ids.traceId();
      const span = ids.spanId();
      expect(trace).toMatch(/^[0-9a-f]{32}$/);
      expect(span).toMatch(/^[0-9a-f]{16}$/);
      seen.add(trace).add(span);
    }
    expect(seen.size).toBe(10000);
  });
});

describe('sampledByRatio', () => {
  it('keeps every trace at 1, none at 0, and about the ratio between, alike for the same id', () => {
    const ids = new IdSource();
    const traces = Array.from({ length: 20000 }, () => ids.traceId());
    expect(traces.every((id) => sampledByRatio(id, 1))).toBe(true);
    expect(traces.some((id) => sampledByRatio(id, 0))).toBe(false);
    const kept = traces.filter((id) => sampledByRatio(id, 0.25)).length / traces.length;
    expect(kept).toBeGreaterThan(0.23);
    expect(kept).toBeLessThan(0.27);
    expect(traces.map((id) => sampledByRatio(id, 0.25))).toEqual(
      traces.map((id) => sampledByRatio(id, 0.25)),
    );
  });
});
