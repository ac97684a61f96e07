import { describe, expect, it } from 'vitest';
import { ACCESS_AUDITOR, type AccessAuditor, type AccessRecord, accessEvent } from '../audit/access.ts';
import { s } from '../config/schema-builders.ts';
import { Context } from '../context/context.ts';
import { ErrorCode, PorticoError, problemsOf } from '../errors.ts';
import { defineHeaplet, definePlugin } from '../heap/heaplet.ts';
import { Headers } from '../http/headers.ts';
import { Request, Response } from '../http/message.ts';
import { pluginHeap } from '../testing/heap.ts';
import { loadRoute } from './route.ts';

/** An audit service for these tests: keeps the records it is given, counts its flushes. */
class RecordingAuditor implements AccessAuditor {
  readonly [ACCESS_AUDITOR] = true as const;
  readonly records: AccessRecord[] = [];
  flushes: number[] = [];
  access(record: AccessRecord): void {
    this.records.push(record);
  }
  flush(): Promise<void> {
    this.flushes.push(this.records.length);
    return Promise.resolve();
  }
}

const made: RecordingAuditor[] = [];
let releaseHeld: () => void = () => {};
const plugin = definePlugin({
  name: 'route-audit-test',
  version: '0.0.0',
  heaplets: [
    defineHeaplet({
      type: 'RecordingAuditService',
      kind: 'object',
      config: s.object({}),
      create: () => {
        const auditor = new RecordingAuditor();
        made.push(auditor);
        return auditor;
      },
    }),
    defineHeaplet({
      type: 'HeaderChanger',
      kind: 'filter',
      config: s.object({}),
      create: () => ({
        filter(context: Context, request: Request, next: { handle: typeof Function.prototype }) {
          request.headers.set('x-added', 'by the filter');
          request.headers.delete('x-gone');
          request.uri.rawPath = '/changed';
          request.method = 'PUT';
          return next.handle(context, request);
        },
      }),
    }),
    defineHeaplet({ type: 'PlainObject', kind: 'object', config: s.object({}), create: () => ({}) }),
    defineHeaplet({
      type: 'Held',
      kind: 'handler',
      config: s.object({}),
      create: () => ({
        handle: () =>
          new Promise<Response>((resolve) => {
            releaseHeld = () => resolve(new Response({ status: 200 }));
          }),
      }),
    }),
    defineHeaplet({
      type: 'Failing',
      kind: 'handler',
      config: s.object({ code: s.string().optional() }),
      create: ({ config }) => ({
        handle: () =>
          Promise.reject(
            config.code === 'upstream'
              ? Object.assign(new PorticoError(ErrorCode.UPSTREAM, 'down', {}), { upstreamStatus: 504 })
              : new Error('broken'),
          ),
      }),
    }),
  ],
});

async function route(json: Record<string, unknown>) {
  const { heap } = pluginHeap({
    plugins: [plugin],
    defaults: [{ name: 'AuditService', type: 'NoOpAuditService' }],
  });
  return loadRoute({ id: 'r', json, file: 'routes/r.json', parentHeap: heap, logger: heap.logger });
}

const request = () =>
  new Request({
    method: 'GET',
    uri: 'http://gw.example:8080/a/b?q=1&q=2&x=%20y',
    headers: { 'x-gone': 'here', cookie: 'sid=abc; lang=en', host: 'gw.example:8080' },
  });

const client = { remoteAddress: '10.0.0.9', remotePort: 40000, localAddress: '10.0.0.1', localPort: 8080 };

const ok = { type: 'StaticResponseHandler', config: { status: 201, headers: { 'x-answer': ['yes'] } } };

describe("a route's auditService", () => {
  it('is told of each request once its answer settles, as the request entered the route', async () => {
    made.length = 0;
    const r = await route({
      auditService: { type: 'RecordingAuditService', config: {} },
      handler: { type: 'Chain', config: { filters: [{ type: 'HeaderChanger' }], handler: ok } },
    });
    const auditor = made[0]!;
    const context = new Context({ client });
    const answer = r.handle(context, request());
    expect(auditor.records).toEqual([]);
    expect((await answer).status).toBe(201);
    expect(auditor.records).toHaveLength(1);
    const [record] = auditor.records;
    expect(record).toMatchObject({ method: 'GET', status: 201, transactionId: context.transactionId });
    expect(record!.uri.toString()).toBe('http://gw.example:8080/a/b?q=1&q=2&x=%20y');
    expect(record!.headers.get('x-gone')).toBe('here');
    expect(record!.headers.has('x-added')).toBe(false);
    expect(record!.responseHeaders?.get('x-answer')).toBe('yes');
    expect(record!.elapsed).toBeGreaterThanOrEqual(0);
    expect(Math.abs(record!.started - Date.now())).toBeLessThan(5000);
    await r.handle(new Context({ client }), request());
    expect(auditor.records).toHaveLength(2);
  });

  it('makes the incumbents’ access event from a record', async () => {
    made.length = 0;
    const r = await route({
      heap: [{ name: 'Audit', type: 'RecordingAuditService' }],
      auditService: 'Audit',
      handler: ok,
    });
    const context = new Context({ client: { ...client, isSecure: true } });
    await r.handle(context, request());
    const record = made[0]!.records[0]!;
    const event = accessEvent(record, 'id-1');
    expect(JSON.parse(JSON.stringify(event))).toEqual({
      _id: 'id-1',
      timestamp: new Date(record.started).toISOString(),
      eventName: 'OPENIG-HTTP-ACCESS',
      transactionId: context.transactionId,
      server: { ip: '10.0.0.1', port: 8080 },
      client: { ip: '10.0.0.9', port: 40000 },
      http: {
        request: {
          secure: true,
          method: 'GET',
          path: 'http://gw.example:8080/a/b',
          queryParameters: { q: ['1', '2'], x: [' y'] },
          headers: { 'x-gone': ['here'], host: ['gw.example:8080'] },
          cookies: { sid: 'abc', lang: 'en' },
        },
        response: { headers: { 'Content-Length': ['0'], 'x-answer': ['yes'] } },
      },
      response: {
        status: 'SUCCESSFUL',
        statusCode: '201',
        elapsedTime: record.elapsed,
        elapsedTimeUnits: 'MILLISECONDS',
      },
    });
    expect(event.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('gives the headers as they arrived, names differing in case together, as Headers.toJSON would', () => {
    const arrived = Headers.fromRaw([
      'Set-Cookie',
      'a=1',
      'X-One',
      '1',
      'set-cookie',
      'b=2',
      'Cookie',
      'c=3',
    ]);
    const record: AccessRecord = {
      started: 0,
      elapsed: 1,
      transactionId: 't',
      client: new Context({ client }).client,
      method: 'GET',
      uri: request().uri,
      headers: Headers.fromRaw(['Host', 'gw.example', 'X-Many', '1', 'x-many', '2', 'cookie', 'sid=abc']),
      status: 200,
      responseHeaders: arrived,
    };
    const event = accessEvent(record, 'id') as unknown as { http: Record<string, { headers: unknown }> };
    expect(event.http.response!.headers).toEqual(Headers.fromRaw(arrived.toRaw()).toJSON());
    expect(event.http.response!.headers).toEqual({
      'Set-Cookie': ['a=1', 'b=2'],
      'X-One': ['1'],
      Cookie: ['c=3'],
    });
    // The request's Cookie field is given as cookies, not among its headers.
    expect(event.http.request!.headers).toEqual({ Host: ['gw.example'], 'X-Many': ['1', '2'] });
  });

  it('is told of failures too, with the status the gateway answers them with', async () => {
    made.length = 0;
    const r = await route({
      heap: [{ name: 'Audit', type: 'RecordingAuditService' }],
      auditService: 'Audit',
      handler: { type: 'Failing', config: {} },
    });
    await expect(r.handle(new Context(), request())).rejects.toThrow('broken');
    const upstream = await route({
      heap: [{ name: 'Audit', type: 'RecordingAuditService' }],
      auditService: 'Audit',
      handler: { type: 'Failing', config: { code: 'upstream' } },
    });
    await expect(upstream.handle(new Context(), request())).rejects.toThrow('down');
    const notFound = await route({
      heap: [{ name: 'Audit', type: 'RecordingAuditService' }],
      auditService: 'Audit',
      handler: { type: 'StaticResponseHandler', config: { status: 404 } },
    });
    await notFound.handle(new Context(), request());
    await new Promise((resolve) => setImmediate(resolve));
    const records = made.map((m) => m.records[0]!);
    expect(records.map((record) => [record.status, record.responseHeaders === undefined])).toEqual([
      [500, true],
      [504, true],
      [404, false],
    ]);
    expect(records.map((record) => accessEvent(record, 'x').response)).toMatchObject([
      { status: 'FAILED', statusCode: '500' },
      { status: 'FAILED', statusCode: '504' },
      { status: 'FAILED', statusCode: '404' },
    ]);
  });

  it('waits, when the route goes, for the service to deliver what the route gave it', async () => {
    made.length = 0;
    const r = await route({
      heap: [{ name: 'Audit', type: 'RecordingAuditService' }],
      auditService: 'Audit',
      handler: { type: 'Held', config: {} },
    });
    const inFlight = r.handle(new Context(), request());
    const destroyed = r.destroy(5000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(made[0]!.flushes).toEqual([]);
    releaseHeld();
    await inFlight;
    await destroyed;
    // Once, after the last record.
    expect(made[0]!.flushes).toEqual([1]);
  });

  it('may be the default AuditService, which records nothing', async () => {
    const r = await route({ auditService: 'AuditService', handler: ok });
    expect((await r.handle(new Context(), request())).status).toBe(201);
    await r.destroy();
  });

  it('must be an audit service: anything else is a reference error at $.auditService', async () => {
    const failures = [];
    for (const auditService of ['Plain', 'Missing', { type: 'PlainObject' }, 'Changer'])
      failures.push(
        await route({
          heap: [
            { name: 'Plain', type: 'PlainObject' },
            { name: 'Changer', type: 'HeaderChanger' },
          ],
          auditService,
          handler: ok,
        }).catch((e: unknown) => e),
      );
    expect(failures.flatMap(problemsOf).map((p) => [p.code, p.details.jsonPath, p.details.file])).toEqual(
      Array(4).fill(['PORTICO_E_REFERENCE', '$.auditService', 'routes/r.json']),
    );
    expect(problemsOf(failures[0]).map((p) => p.message)).toEqual([
      "'Plain' is not an audit service such as AuditService",
    ]);
  });

  it('costs a route without one nothing: no record, the request as it was', async () => {
    const r = await route({ handler: ok });
    expect((await r.handle(new Context(), request())).status).toBe(201);
  });
});

describe('a route without an auditService', () => {
  it('uses the heap object named AuditService, as the incumbents do', async () => {
    made.length = 0;
    const r = await route({ heap: [{ name: 'AuditService', type: 'RecordingAuditService' }], handler: ok });
    await r.handle(new Context(), request());
    expect(made[0]!.records).toHaveLength(1);
  });
});
