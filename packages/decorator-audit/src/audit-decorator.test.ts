import {
  Context,
  defineHeaplet,
  definePlugin,
  type Filter,
  type Handler,
  PorticoError,
  Request,
  Response,
  s,
} from '@portico/gateway-core';
import { loadRoute, pluginHeap, recordingHandler } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { type AuditEvent, auditSystemOf, type MonitorEndpointHandler } from './index.ts';

/** Handlers that answer, fail, or answer with a response standing for a failure; a filter that only looks at requests. */
const types = definePlugin({
  name: '@portico/audit-test-types',
  version: '0.0.0',
  core: '*',
  heaplets: [
    defineHeaplet({
      type: 'Answer',
      kind: 'handler',
      config: s.object({ status: s.integer().default(200) }),
      create: ({ config }): Handler => ({ handle: async () => Response.empty(config.status) }),
    }),
    defineHeaplet({
      type: 'Throws',
      kind: 'handler',
      config: s.object({}),
      create: (): Handler => ({
        handle: async () => {
          throw new Error('broken');
        },
      }),
    }),
    defineHeaplet({
      type: 'Unreachable',
      kind: 'handler',
      config: s.object({}),
      create: (): Handler => ({
        handle: async () => new Response({ status: 502, cause: new Error('connection refused') }),
      }),
    }),
    defineHeaplet({
      type: 'RequestOnly',
      kind: 'filter',
      config: s.object({}),
      create: (): Filter => ({
        filter: (context, request, next) => {
          request.headers.set('X-Seen', 'yes');
          return next.handle(context, request);
        },
      }),
    }),
  ],
});

function setup(heap: unknown[]) {
  const made = pluginHeap({
    plugins: [plugin, types],
    file: 'routes/10-api.json',
    heap,
    defaults: [{ name: 'audit', type: 'AuditDecorator' }],
  });
  const events: AuditEvent[] = [];
  auditSystemOf(made.heap).addListener((event) => events.push(event));
  return { ...made, events };
}

const request = () => new Request({ uri: 'http://gateway/items' });
const call = async (h: Handler, context = new Context()) => h.handle(context, request());

describe('AuditDecorator', () => {
  it('notifies request before the object runs, then response and completed after it', async () => {
    const { heap, events } = setup([]);
    const seenWhileRunning: string[][] = [];
    const { handler } = recordingHandler(() => {
      seenWhileRunning.push(...events.map((e) => [...e.tags]));
      return Response.empty(200);
    });
    const audit = await heap.get<{ decorate: (t: unknown, v: unknown, i: object) => Handler }>('audit');
    const decorated = audit.decorate(handler, true, { name: 'backend', kind: 'handler', heap });
    await call(decorated);
    expect(seenWhileRunning).toEqual([['request']]);
    expect(events.map((e) => e.tags)).toEqual([['request'], ['response', 'completed']]);
  });

  it('gives each event its data (request, response, contexts), source and a millisecond timestamp', async () => {
    const { heap, events } = setup([
      { name: 'backend', type: 'Answer', config: { status: 201 }, audit: true },
    ]);
    const context = new Context({ transactionId: 'tx-7' }).child('router', { routeId: '10-api' });
    const before = Date.now();
    const response = await call(await heap.get<Handler>('backend'), context);
    const after = Date.now();
    expect(events).toHaveLength(2);
    const [start, end] = events as [AuditEvent, AuditEvent];
    expect(start.source).toBe('backend');
    expect(start.data.request.uri.toString()).toBe('http://gateway/items');
    expect(start.data.response).toBeUndefined();
    expect(start.data.contexts).toMatchObject({
      transactionId: { transactionId: 'tx-7' },
      router: { routeId: '10-api' },
    });
    expect(end.data.response).toBe(response);
    for (const event of events) {
      expect(Number.isInteger(event.timestamp)).toBe(true);
      expect(event.timestamp).toBeGreaterThanOrEqual(before);
      expect(event.timestamp).toBeLessThanOrEqual(after);
    }
  });

  it('says completed whatever the status (a 404 handled is completed)', async () => {
    const { heap, events } = setup([
      { name: 'missing', type: 'Answer', config: { status: 404 }, audit: true },
    ]);
    expect((await call(await heap.get<Handler>('missing'))).status).toBe(404);
    expect(events.map((e) => e.tags)).toEqual([['request'], ['response', 'completed']]);
  });

  it('says exception when the object throws, and lets the error through', async () => {
    const { heap, events } = setup([{ name: 'broken', type: 'Throws', audit: true }]);
    await expect(call(await heap.get<Handler>('broken'))).rejects.toThrow('broken');
    expect(events.map((e) => e.tags)).toEqual([['request'], ['response', 'exception']]);
    expect(events[1]!.data.response).toBeUndefined();
  });

  it('says exception when the object answers with a failure without throwing', async () => {
    const { heap, events } = setup([{ name: 'upstream', type: 'Unreachable', audit: true }]);
    expect((await call(await heap.get<Handler>('upstream'))).status).toBe(502);
    expect(events.map((e) => e.tags)).toEqual([['request'], ['response', 'exception']]);
  });

  it('emits response for a filter that only filters the request, once it returns', async () => {
    const { heap, events } = setup([{ name: 'look', type: 'RequestOnly', audit: true }]);
    const order: string[] = [];
    const next: Handler = {
      handle: async () => {
        order.push(`next ran after ${events.length} event(s)`);
        return Response.empty(200);
      },
    };
    await (await heap.get<Filter>('look')).filter(new Context(), request(), next);
    expect(order).toEqual(['next ran after 1 event(s)']);
    expect(events.map((e) => [e.source, ...e.tags])).toEqual([
      ['look', 'request'],
      ['look', 'response', 'completed'],
    ]);
  });

  it.each([
    ['api', ['api']],
    [
      ['api', 'v2'],
      ['api', 'v2'],
    ],
    [['api', 7, null], ['api']],
    [true, []],
    [{ tags: 'x' }, []],
  ])('adds the user tags of %j', async (decoration, tags) => {
    const { heap, events } = setup([{ name: 'backend', type: 'Answer', audit: decoration }]);
    await call(await heap.get<Handler>('backend'));
    expect(events.map((e) => e.tags)).toEqual([
      ['request', ...tags],
      ['response', 'completed', ...tags],
    ]);
  });

  it('never fails a request when a listener throws, and reports that once', async () => {
    const { heap, logger } = setup([{ name: 'backend', type: 'Answer', audit: true }]);
    auditSystemOf(heap).addListener(() => {
      throw new PorticoError('PORTICO_E_CONFIG', 'listener bug');
    });
    const backend = await heap.get<Handler>('backend');
    for (let i = 0; i < 3; i++) expect((await call(backend)).status).toBe(200);
    expect(logger.records.filter((r) => r.message.includes('audit listener failed'))).toHaveLength(1);
  });

  it('shares one audit system across the routes of a gateway, none between gateways', async () => {
    const first = setup([]);
    const second = setup([]);
    const route = first.heap.child({ file: 'routes/20-web.json' });
    expect(auditSystemOf(route)).toBe(auditSystemOf(first.heap));
    expect(auditSystemOf(second.heap)).not.toBe(auditSystemOf(first.heap));
  });
});

describe('MonitorEndpointHandler', () => {
  it('serves counts per source and tag, and the requests in progress, as JSON', async () => {
    const { heap, logger } = setup([]);
    // The monitor and the audited objects live in different routes of one gateway.
    const monitorRoute = await loadRoute({
      id: '00-monitor',
      file: 'routes/00-monitor.json',
      json: { handler: { type: 'MonitorEndpointHandler' } },
      parentHeap: heap,
      logger,
    });
    let release: () => void = () => undefined;
    const slowDone = new Promise<void>((resolve) => {
      release = resolve;
    });
    const gate: Handler = {
      handle: async () => {
        await slowDone;
        return Response.empty(200);
      },
    };
    const apiRoute = await loadRoute({
      id: '10-api',
      file: 'routes/10-api.json',
      json: { heap: [{ name: 'ok', type: 'Answer', audit: ['api'] }], handler: 'ok' },
      parentHeap: heap,
      logger,
    });
    const brokenRoute = await loadRoute({
      id: '11-broken',
      file: 'routes/11-broken.json',
      json: { heap: [{ name: 'broken', type: 'Throws', audit: 'api' }], handler: 'broken' },
      parentHeap: heap,
      logger,
    });
    const audit = await heap.get<{ decorate: (t: unknown, v: unknown, i: object) => Handler }>('audit');
    const slow = audit.decorate(gate, ['api', 'slow'], { name: 'slow', kind: 'handler', heap });

    await apiRoute.handle(new Context(), request());
    await apiRoute.handle(new Context(), request());
    await expect(brokenRoute.handle(new Context(), request())).rejects.toThrow('broken');
    const pending = call(slow);

    const read = async () => (await monitorRoute.handle(new Context(), request())).entity.json();
    const during = await read();
    expect(during).toEqual({
      sources: {
        ok: { 'in progress': 0, events: { request: 2, response: 2, completed: 2, api: 4 } },
        broken: { 'in progress': 0, events: { request: 1, response: 1, exception: 1, api: 2 } },
        slow: { 'in progress': 1, events: { request: 1, api: 1, slow: 1 } },
      },
      tags: {
        api: { 'in progress': 1, completed: 2, 'internal errors': 1 },
        slow: { 'in progress': 1, completed: 0, 'internal errors': 0 },
      },
    });
    release();
    await pending;
    const after = (await read()) as {
      sources: Record<string, { 'in progress': number }>;
      tags: Record<string, unknown>;
    };
    expect(after.sources.slow!['in progress']).toBe(0);
    expect(after.tags.slow).toEqual({ 'in progress': 0, completed: 1, 'internal errors': 0 });
    const response = await monitorRoute.handle(new Context(), request());
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('stops counting once destroyed', async () => {
    const { heap } = setup([
      { name: 'monitor', type: 'MonitorEndpointHandler' },
      { name: 'ok', type: 'Answer', audit: 'api' },
    ]);
    const monitor = await heap.get<MonitorEndpointHandler>('monitor');
    const ok = await heap.get<Handler>('ok');
    await call(ok);
    await heap.destroy();
    await call(ok);
    expect(monitor.snapshot().tags.api).toEqual({ 'in progress': 0, completed: 1, 'internal errors': 0 });
  });
});
