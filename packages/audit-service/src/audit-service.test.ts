import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Context, Request } from '@portico/gateway-core';
import { auditServicesOf, parseQueryFilter } from '@portico/gateway-core/audit';
import { createMemoryLogger, loadRoute, pluginHeap, recordingMetrics } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import { AuditService, eventIds } from './audit-service.ts';
import { DEFAULT_DELIVERY } from './delivery.ts';
import { applyPolicy, exclusionsOf } from './filter-policies.ts';
import { fakeClock, memoryLogs, settle, testHandlers } from './fixtures/memory-handler.ts';
import plugin from './index.ts';
import { EventTopicsMetaDataBuilder } from './topics.ts';

const memory = (name: string, more: Record<string, unknown> = {}) => ({
  class: 'org.forgerock.audit.handlers.memory.MemoryAuditEventHandler',
  config: { name, topics: ['access'], ...more },
});

function service(config: unknown, options: { base?: string } = {}) {
  const made = pluginHeap({
    plugins: [plugin, testHandlers],
    file: 'config.json',
    heap: [{ name: 'Audit', type: 'AuditService', config }],
    ...(options.base === undefined ? {} : { environment: { baseDirectory: options.base } }),
  });
  return { ...made, service: made.heap.get<AuditService>('Audit') };
}

const client = { remoteAddress: '10.0.0.9', remotePort: 40000, localAddress: '10.0.0.1', localPort: 8080 };

async function served(audit: unknown, requests = 1, headers: Record<string, string> = {}) {
  const { heap, logger } = pluginHeap({ plugins: [plugin, testHandlers], file: 'routes/r.json' });
  const route = await loadRoute({
    id: 'r',
    file: 'routes/r.json',
    json: { auditService: audit, handler: { type: 'StaticResponseHandler', config: { status: 200 } } },
    parentHeap: heap,
    logger,
  });
  for (let i = 0; i < requests; i++)
    await route.handle(
      new Context({ client }),
      new Request({ uri: `http://gw.example/p/${i}?q=${i}`, headers: { host: 'gw.example', ...headers } }),
    );
  return { route, heap, logger };
}

describe('AuditService settings', () => {
  it('takes the incumbents’ declaration: config, event-handlers with class and config', async () => {
    const { service: made } = service({ config: {}, 'event-handlers': [memory('m1')] });
    const audit = await made;
    expect(audit).toBeInstanceOf(AuditService);
    expect(audit.silent).toBe(false);
    expect(audit.status()).toMatchObject({
      name: 'Audit',
      topics: ['access'],
      handlerForQueries: null,
      handlers: [{ name: 'm1', queued: 0, written: 0, retried: 0, dropped: 0, pending: 0 }],
    });
    // The handler was started with its topic's schema.
    expect([...memoryLogs.get('m1')!.started!.keys()]).toEqual(['access']);
  });

  it('takes config left out, the eventHandlers spelling, and the simple class name', async () => {
    const audit = await service({
      eventHandlers: [{ class: 'MemoryAuditEventHandler', config: memory('m2').config }],
    }).service;
    expect(audit.status()).toMatchObject({ handlers: [{ name: 'm2' }] });
  });

  it('is silent when every handler is disabled, or there is none', async () => {
    expect((await service({ 'event-handlers': [memory('m3', { enabled: false })] }).service).silent).toBe(
      true,
    );
    expect((await service({ 'event-handlers': [] }).service).silent).toBe(true);
  });

  const problems = async (config: unknown) => {
    const error = await service(config).service.then(
      () => undefined,
      (e: unknown) => e as { code: string; details: { jsonPath: string }; message: string },
    );
    return error && [error.code, error.details.jsonPath, error.message];
  };

  it('refuses what is wrong, each at its JSON path', async () => {
    expect(await problems({ config: {} })).toEqual([
      'PORTICO_E_CONFIG',
      '$.heap[0].config["event-handlers"]',
      expect.stringContaining("'event-handlers' is required"),
    ]);
    expect(await problems({ 'event-handlers': [], eventHandlers: [] })).toEqual([
      'PORTICO_E_CONFIG',
      '$.heap[0].config',
      expect.stringContaining('give the handlers once'),
    ]);
    expect(await problems({ 'event-handlers': [{ config: {} }] })).toEqual([
      'PORTICO_E_CONFIG',
      '$.heap[0].config["event-handlers"][0].class',
      'the setting is required',
    ]);
    expect(await problems({ 'event-handlers': [{ ...memory('x'), klass: 1 }] })).toEqual([
      'PORTICO_E_CONFIG',
      '$.heap[0].config["event-handlers"][0].klass',
      "unknown setting 'klass'",
    ]);
    expect(
      await problems({ 'event-handlers': [{ class: 'org.example.NoSuchAuditEventHandler', config: {} }] }),
    ).toEqual([
      'PORTICO_E_UNKNOWN_TYPE',
      expect.stringContaining('$.heap[0].config["event-handlers"][0]'),
      expect.any(String),
    ]);
    expect(await problems({ 'event-handlers': [{ class: 'Chain', config: {} }] })).toEqual([
      'PORTICO_E_REFERENCE',
      expect.stringContaining('$.heap[0].config["event-handlers"][0]'),
      expect.stringContaining('an audit-handler is expected'),
    ]);
    expect(await problems({ 'event-handlers': [memory('m', { topics: ['config'] })] })).toEqual([
      'PORTICO_E_CONFIG',
      '$.heap[0].config["event-handlers"][0].config.topics',
      expect.stringContaining('is not ["access"]'),
    ]);
    expect(
      await problems({
        'event-handlers': [{ class: 'MemoryAuditEventHandler', config: { topics: ['access'] } }],
      }),
    ).toEqual([
      'PORTICO_E_CONFIG',
      '$.heap[0].config["event-handlers"][0].config.name',
      'the setting is required',
    ]);
    expect(await problems({ config: { handlerForQueries: 5 }, 'event-handlers': [] })).toEqual([
      'PORTICO_E_CONFIG',
      '$.heap[0].config.config.handlerForQueries',
      expect.any(String),
    ]);
    expect(
      await problems({
        config: { filterPolicies: { field: { excludeIf: '/access/x' } } },
        'event-handlers': [],
      }),
    ).toEqual([
      'PORTICO_E_CONFIG',
      '$.heap[0].config.config.filterPolicies.field.excludeIf',
      expect.any(String),
    ]);
    expect(await problems({ 'event-handlers': [], delivery: { queueSize: 0 } })).toEqual([
      'PORTICO_E_CONFIG',
      '$.heap[0].config.delivery.queueSize',
      expect.any(String),
    ]);
    expect(await problems({ 'event-handlers': [], delivery: { retryInitial: 'unlimited' } })).toEqual([
      'PORTICO_E_CONFIG',
      '$.heap[0].config.delivery.retryInitial',
      expect.stringContaining('zero or unlimited'),
    ]);
  });

  it('takes the handlers as one expression too', async () => {
    const made = pluginHeap({
      plugins: [plugin, testHandlers],
      properties: { handlers: [memory('m4')] },
      heap: [{ name: 'Audit', type: 'AuditService', config: { 'event-handlers': '${handlers}' } }],
    });
    expect((await made.heap.get<AuditService>('Audit')).status()).toMatchObject({
      handlers: [{ name: 'm4' }],
    });
  });

  it('registers with the gateway for the administrative endpoints, and leaves when destroyed', async () => {
    const { heap, service: made } = service({ 'event-handlers': [memory('m5')] });
    const audit = await made;
    expect([...auditServicesOf(heap).keys()]).toEqual(['Audit']);
    expect(auditServicesOf(heap).get('Audit')).toBe(audit);
    await heap.destroy();
    expect(auditServicesOf(heap).size).toBe(0);
    expect(memoryLogs.get('m5')!.closed).toBe(true);
  });
});

describe('access events through a route', () => {
  it('one per request, with the incumbents’ fields, written by every enabled handler', async () => {
    const { route } = await served(
      {
        type: 'AuditService',
        config: { 'event-handlers': [memory('r1'), memory('r2'), memory('r3', { enabled: false })] },
      },
      3,
    );
    await route.destroy();
    const events = memoryLogs.get('r1')!.events.map((e) => e.event);
    expect(events).toHaveLength(3);
    expect(memoryLogs.get('r2')!.events).toHaveLength(3);
    expect(memoryLogs.get('r3')!.events).toHaveLength(0);
    expect(new Set(events.map((e) => e._id)).size).toBe(3);
    expect(events[1]).toMatchObject({
      eventName: 'OPENIG-HTTP-ACCESS',
      _id: expect.stringMatching(/^[0-9a-f-]{36}-1$/),
      timestamp: expect.stringMatching(/Z$/),
      server: { ip: '10.0.0.1', port: 8080 },
      client: { ip: '10.0.0.9', port: 40000 },
      http: { request: { method: 'GET', path: 'http://gw.example/p/1', queryParameters: { q: ['1'] } } },
      response: { status: 'SUCCESSFUL', statusCode: '200', elapsedTimeUnits: 'MILLISECONDS' },
    });
    // Flushed and closed when the route went.
    expect(memoryLogs.get('r1')!.closed).toBe(true);
  });

  it('removes what the field policy excludes, naming header fields in any case', async () => {
    const { route, logger } = await served(
      {
        type: 'AuditService',
        config: {
          config: {
            filterPolicies: {
              field: {
                excludeIf: [
                  '/access/http/request/headers/authorization',
                  '/access/client',
                  '/access/http/request/queryParameters/q',
                ],
              },
            },
          },
          'event-handlers': [memory('p1')],
        },
      },
      1,
      { Authorization: 'Bearer secret', 'X-Kept': 'yes' },
    );
    await route.destroy();
    const [event] = memoryLogs.get('p1')!.events.map((e) => e.event as Record<string, any>);
    expect(event!.http.request.headers).toEqual({ host: ['gw.example'], 'X-Kept': ['yes'] });
    expect(event!.http.request.queryParameters).toEqual({});
    expect(event!.client).toBeUndefined();
    expect(event!.server).toEqual({ ip: '10.0.0.1', port: 8080 });
    expect(logger.records.filter((r) => r.level === 'warn')).toEqual([]);
  });

  it('drops an event holding a value the value policy excludes, unless one it includes', () => {
    const policy = exclusionsOf(
      {
        field: { excludeIf: ['/access/http/request/headers/authorization'] },
        value: {
          excludeIf: [
            '/access/http/request/headers/x-health-probe',
            '/access/http/request/queryParameters/debug',
          ],
          includeIf: ['/access/http/request/headers/x-audit-anyway'],
        },
      },
      ['access'],
      createMemoryLogger(),
    ).get('access')!;
    const event = (headers: Record<string, string[]>, queryParameters: Record<string, string[]> = {}) => ({
      _id: '1',
      timestamp: '2026-11-29T00:00:00.000Z',
      transactionId: 't',
      http: { request: { method: 'GET', headers, queryParameters } },
    });
    const probe = event({ 'X-Health-Probe': ['1'] });
    expect(applyPolicy(probe, policy)).toBe(false);
    expect(applyPolicy(event({}, { debug: ['true'] }), policy)).toBe(false);
    const kept = event({ 'X-Health-Probe': ['1'], 'X-Audit-Anyway': ['yes'], Authorization: ['Basic x'] });
    expect(applyPolicy(kept, policy)).toBe(true);
    expect(kept.http.request.headers).toEqual({ 'X-Health-Probe': ['1'], 'X-Audit-Anyway': ['yes'] });
    const plain = event({ Authorization: ['Basic x'] });
    expect(applyPolicy(plain, policy)).toBe(true);
    expect(plain.http.request.headers).toEqual({});
  });

  it('delivers none of the events a value policy drops, and the others as usual', async () => {
    const audit = (handler: string) => ({
      type: 'AuditService',
      config: {
        config: { filterPolicies: { value: { excludeIf: ['/access/http/request/headers/x-probe'] } } },
        'event-handlers': [memory(handler)],
      },
    });
    const probed = await served(audit('v1'), 2, { 'X-Probe': 'yes' });
    const plain = await served(audit('v2'), 2);
    await probed.route.destroy();
    await plain.route.destroy();
    expect(memoryLogs.get('v1')!.events).toEqual([]);
    expect(memoryLogs.get('v2')!.events).toHaveLength(2);
  });

  it('warns of a pointer that names no topic, and ignores it', () => {
    const logger = createMemoryLogger();
    const exclusions = exclusionsOf({ field: { excludeIf: ['/http/request/headers'] } }, ['access'], logger);
    expect(exclusions.get('access')).toEqual({ remove: [], dropIf: [], keepIf: [] });
    expect(logger.records[0]!.message).toContain("'/http/request/headers' names no topic");
  });
});

describe('events that break their schema', () => {
  it('are counted, delivered, and said at most once a minute', async () => {
    const clock = fakeClock();
    const logger = createMemoryLogger();
    const handlerHeap = pluginHeap({
      plugins: [testHandlers],
      heap: [{ name: 'h', type: 'MemoryAuditEventHandler', config: { name: 's1', topics: ['access'] } }],
    });
    const handler = await handlerHeap.heap.get('h', 'audit-handler');
    const audit = new AuditService({
      name: 'a',
      handlers: [handler as never],
      metadata: EventTopicsMetaDataBuilder.coreTopicSchemas().build(),
      exclusions: new Map(),
      delivery: DEFAULT_DELIVERY,
      logger,
      clock,
    });
    const bad = { transactionId: 't', timestamp: 'now', client: { port: 'eighty' } };
    audit.publish('access', bad);
    audit.publish('access', bad);
    clock.advance(60_000);
    audit.publish('access', bad);
    audit.publish('access', { transactionId: 't', timestamp: 'now' });
    await audit.flush();
    expect(audit.counters).toMatchObject({ received: 4, invalid: 3 });
    const said = logger.records.filter((r) => r.message.includes("broke their topic's schema"));
    expect(said.map((r) => r.message)).toEqual([
      "audit service 'a': 1 events broke their topic's schema",
      "audit service 'a': 2 events broke their topic's schema",
    ]);
    expect(said[0]!.data).toMatchObject({ example: 'access: /client/port is not of type "integer"' });
    expect(memoryLogs.get('s1')!.events).toHaveLength(4);
    expect(() => audit.publish('nosuch', bad)).toThrow(
      expect.objectContaining({ code: 'PORTICO_E_BAD_REQUEST' }),
    );
    expect(() => audit.publish('access', { timestamp: 'now' })).toThrow(/transactionId and a timestamp/);
  });
});

describe('custom topics from the instance directory', () => {
  it('reads <instance>/audit-schemas/<topic>.json: a core topic is extended, another added', async () => {
    const base = path.join(process.env.TMPDIR ?? '/tmp', `portico-audit-${process.pid}-${Date.now()}`);
    mkdirSync(path.join(base, 'audit-schemas'), { recursive: true });
    const schema = (properties: Record<string, unknown>) => ({
      schema: { $schema: 'http://json-schema.org/draft-04/schema#', id: '/', type: 'object', properties },
    });
    writeFileSync(
      path.join(base, 'audit-schemas', 'access.json'),
      JSON.stringify(schema({ tenant: { type: 'string' } })),
    );
    writeFileSync(
      path.join(base, 'audit-schemas', 'OAuth2AccessTopic.json'),
      JSON.stringify(
        schema({ _id: { type: 'string' }, transactionId: { type: 'string' }, scope: { type: 'string' } }),
      ),
    );
    const audit = await service({ 'event-handlers': [memory('c1')] }, { base }).service;
    expect(audit.topics).toEqual(['access', 'OAuth2AccessTopic']);
    expect(Object.keys(memoryLogs.get('c1')!.started!.get('access')!.properties as object)).toContain(
      'tenant',
    );
    writeFileSync(path.join(base, 'audit-schemas', 'broken.json'), '{');
    await expect(service({ 'event-handlers': [] }, { base }).service).rejects.toThrow(
      /broken.json cannot be read/,
    );
  });
});

describe('queries through handlerForQueries', () => {
  it('are answered by the named handler, by filter and by id', async () => {
    const { route, heap } = await served(
      {
        type: 'AuditService',
        config: { config: { handlerForQueries: 'q1' }, 'event-handlers': [memory('q1'), memory('q2')] },
      },
      3,
    );
    await route.handle(
      new Context({ client }),
      new Request({ uri: 'http://gw.example/', headers: { host: 'gw.example' } }),
    );
    const [audit] = [...auditServicesOf(heap).values()];
    await settle(10);
    const all = await audit!.query('access', parseQueryFilter('true'), 100);
    expect(all.ok && all.value).toHaveLength(4);
    const some = await audit!.query('access', parseQueryFilter('/http/request/path co "/p/"'), 2);
    expect(some.ok && some.value.map((e) => (e as any).http.request.path)).toEqual([
      'http://gw.example/p/0',
      'http://gw.example/p/1',
    ]);
    const id = (all.ok && all.value[3]!._id) as string;
    expect(await audit!.read('access', id)).toMatchObject({ ok: true, value: { _id: id } });
    expect(await audit!.read('access', 'nope')).toMatchObject({ ok: false, status: 404 });
    expect(await audit!.query('nosuch', parseQueryFilter('true'), 1)).toMatchObject({
      ok: false,
      status: 501,
    });
  });

  it('are refused (501) without a handler for queries, or one that cannot query', async () => {
    const none = await service({ 'event-handlers': [memory('n1')] }).service;
    expect(await none.query('access', { op: 'true' }, 1)).toMatchObject({
      ok: false,
      status: 501,
      message: 'the audit service has no handlerForQueries',
    });
    const { service: made, logger } = service({
      config: { handlerForQueries: 'gone' },
      'event-handlers': [memory('n2')],
    });
    expect(await (await made).read('access', 'x')).toMatchObject({ ok: false, status: 501 });
    expect(logger.records.some((r) => r.message.includes("the handler for queries 'gone'"))).toBe(true);
    const writeOnly = await service({
      config: { handlerForQueries: 'w' },
      'event-handlers': [{ class: 'WriteOnlyAuditEventHandler', config: { name: 'w', topics: ['access'] } }],
    }).service;
    expect(await writeOnly.query('access', { op: 'true' }, 1)).toMatchObject({
      ok: false,
      status: 501,
      message: "the handler 'w' cannot query access events",
    });
  });

  it('answer 503 when the handler fails', async () => {
    const audit = await service({ config: { handlerForQueries: 'f1' }, 'event-handlers': [memory('f1')] })
      .service;
    memoryLogs.get('f1')!.events = null as never;
    expect(await audit.query('access', { op: 'true' }, 1)).toMatchObject({ ok: false, status: 503 });
  });
});

describe('delivery', () => {
  it('retries a handler that fails, and a route that goes waits for it', async () => {
    const { route } = await served(
      {
        type: 'AuditService',
        config: { 'event-handlers': [memory('d1')], delivery: { retryInitial: '5 ms', retryMax: '20 ms' } },
      },
      0,
    );
    memoryLogs.get('d1')!.failNext = 3;
    for (let i = 0; i < 4; i++)
      await route.handle(
        new Context({ client }),
        new Request({ uri: 'http://gw.example/', headers: { host: 'gw.example' } }),
      );
    await route.destroy();
    const log = memoryLogs.get('d1')!;
    expect(log.events).toHaveLength(4);
    expect(log.overlap).toBe(1);
    expect(log.closed).toBe(true);
  });

  it('writes a drained batch in the turn of the event loop that made its events', async () => {
    const { route } = await served({ type: 'AuditService', config: { 'event-handlers': [memory('d2')] } }, 3);
    // The records were taken on the request path; one turn makes them events and hands them over.
    await new Promise((resolve) => setImmediate(resolve));
    expect(memoryLogs.get('d2')!.events).toHaveLength(3);
    await route.destroy();
  });
});

describe('metrics', () => {
  it("reports each handler's queue, writes, retries and drops, read from its counters when scraped", async () => {
    const recorded = recordingMetrics();
    const { heap, logger } = pluginHeap({
      plugins: [plugin, testHandlers],
      file: 'routes/r.json',
      metrics: recorded.metrics,
    });
    const route = await loadRoute({
      id: 'r',
      file: 'routes/r.json',
      json: {
        auditService: {
          type: 'AuditService',
          config: { 'event-handlers': [memory('m1')], delivery: { retryInitial: '5 ms', retryMax: '20 ms' } },
        },
        handler: { type: 'StaticResponseHandler', config: { status: 200 } },
      },
      parentHeap: heap,
      logger,
    });
    const [service] = [...auditServicesOf(heap).keys()];
    memoryLogs.get('m1')!.failNext = 1;
    for (let i = 0; i < 3; i++)
      await route.handle(
        new Context({ client }),
        new Request({ uri: 'http://gw.example/', headers: { host: 'gw.example' } }),
      );
    const written = () => recorded.value('portico_audit_events_written_total', service!, 'm1');
    for (let i = 0; i < 100 && written() !== 3; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(written()).toBe(3);
    expect(recorded.value('portico_audit_events_retried_total', service!, 'm1')).toBeGreaterThan(0);
    expect(recorded.value('portico_audit_queue_events', service!, 'm1')).toBe(0);
    expect(recorded.value('portico_audit_events_dropped_total', service!, 'm1')).toBe(0);
    expect(recorded.value('portico_audit_records_dropped_total', service!)).toBe(0);
    await route.destroy();
    // Destroyed with its route: no longer reported.
    expect(recorded.isObserved('portico_audit_events_written_total')).toBe(false);
  });
});

describe('eventIds', () => {
  it('counts after one random UUID: unique, short enough for the incumbents id column', () => {
    const ids = eventIds();
    const made = Array.from({ length: 1000 }, () => ids());
    expect(new Set(made).size).toBe(1000);
    expect(made[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-0$/);
    expect(made[999]!.endsWith(`-${(999).toString(36)}`)).toBe(true);
    expect(`${made[0]!.slice(0, 37)}${Number.MAX_SAFE_INTEGER.toString(36)}`.length).toBeLessThanOrEqual(56);
    expect(eventIds()().slice(0, 36)).not.toBe(made[0]!.slice(0, 36));
  });
});
