import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Context, defineHeaplet, type Handler, type Request, s } from '@portico/gateway-core';
import { type AuditEventHandler, parseQueryFilter } from '@portico/gateway-core/audit';
import { pluginHeap } from '@portico/gateway-core/testing';
import { serviceUrl, startTcpRelay, waitFor } from '@portico/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { accessEvent, engine, uniqueIndexName } from './fixtures/engine.ts';
import plugin, { searchEngineHandlerOf } from './index.ts';

const ES_URL = await serviceUrl('PORTICO_ES_URL', 'Elasticsearch');

/** Records each request the handler's exchanges go through, then hands it to the ClientHandler. */
const seen: string[] = [];
const recordingPlugin = {
  ...plugin,
  name: '@portico/test-recording-handler',
  heaplets: [
    defineHeaplet({
      type: 'RecordingClientHandler',
      kind: 'handler',
      config: s.object({}),
      create: async ({ heap }) => {
        const inner = await heap.get<Handler>('ClientHandler', 'handler');
        return {
          handle: (context: Context, request: Request) => {
            seen.push(`${request.method} ${request.uri.path}`);
            return inner.handle(context, request);
          },
        } satisfies Handler;
      },
    }),
  ],
};

function handlerAt(url: string, config: Record<string, unknown>, heap: unknown[] = []) {
  const { hostname, port } = new URL(url);
  const made = pluginHeap({
    plugins: [plugin, recordingPlugin],
    heap: [
      ...heap,
      {
        name: 'Audit',
        type: 'ElasticsearchAuditEventHandler',
        config: {
          name: 'es',
          topics: ['access'],
          connection: { host: hostname, port: Number(port) },
          ...config,
        },
      },
    ],
  });
  return made.heap.get<AuditEventHandler>('Audit', 'audit-handler');
}

describe.skipIf(ES_URL === undefined)('SearchEngineAuditEventHandler on Elasticsearch 8', () => {
  const es = engine(ES_URL!);
  afterAll(() => es.cleanUp());

  it('indexes one event as PUT <index>_access/_doc/<_id>, a batch by _bulk, each once by its _id', async () => {
    const indexName = uniqueIndexName('write');
    const handler = await handlerAt(ES_URL!, { indexMapping: { indexName } });
    const index = `${indexName}_access`;
    const one = accessEvent();
    await handler.publish('access', [one]);
    const stored = await es.call('GET', `/${index}/_doc/${one._id}`);
    expect(stored.body._source).not.toHaveProperty('_id');
    expect(stored.body._source).toMatchObject({
      eventName: 'OPENIG-HTTP-ACCESS',
      transactionId: one.transactionId,
      http: { request: { headers: { x_custom_header: ['v'] }, queryParameters: { a_b: ['1'] } } },
      _normalized: {
        fieldNames: {
          '/http/request/headers/x_custom_header': 'x.custom.header',
          '/http/request/queryParameters/a_b': 'a.b',
        },
      },
    });
    const batch = [accessEvent(), accessEvent(), accessEvent()];
    await handler.publish('access', batch);
    // Redelivery (a batch retried after a failure that wrote part of it) replaces, never adds.
    await handler.publish('access', batch);
    await handler.publish('access', [one]);
    expect(await es.count(index)).toBe(4);
    expect(searchEngineHandlerOf(handler)!.counters).toMatchObject({
      requests: 4,
      indexed: 8,
      failedRequests: 0,
    });
    await handler.close();
  });

  it('answers queries (the filter as an engine query, bounded) and reads by _id', async () => {
    const indexName = uniqueIndexName('query');
    const handler = await handlerAt(ES_URL!, { indexMapping: { indexName } });
    const events = Array.from({ length: 6 }, (_, i) =>
      accessEvent({
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        userId: i % 2 === 0 ? 'alice' : 'bob',
        response: {
          status: i < 4 ? 'SUCCESSFUL' : 'FAILED',
          statusCode: i < 4 ? '200' : '503',
          elapsedTime: i * 10,
          elapsedTimeUnits: 'MILLISECONDS',
        },
      }),
    );
    await handler.publish('access', events);
    const query = (text: string, limit = 100) =>
      handler.query!('access', { filter: parseQueryFilter(text), limit }).then((found) =>
        found.map((e) => e._id),
      );
    const ids = events.map((e) => e._id);
    expect(await query('true')).toEqual(ids);
    expect(await query('true', 2)).toEqual(ids.slice(0, 2));
    expect(await query('/response/statusCode eq "503"')).toEqual(ids.slice(4));
    expect(await query('userId eq "alice" and response/elapsedTime ge 20')).toEqual([ids[2], ids[4]]);
    expect(await query('/response/status sw "FAIL" or /userId eq "bob"')).toEqual([
      ids[1],
      ids[3],
      ids[4],
      ids[5],
    ]);
    expect(await query('/http/request/path co "gw.example"')).toEqual(ids);
    expect(await query('/http/request/headers/x.custom.header pr')).toEqual(ids);
    expect(await query('timestamp gt "2026-01-01T00:00:03Z"')).toEqual(ids.slice(4));
    expect(await query('!(/userId pr)')).toEqual([]);
    expect(await query('false')).toEqual([]);
    const read = await handler.read!('access', events[3]!._id);
    expect(read).toEqual(events[3]);
    expect(await handler.read!('access', 'no-such-id')).toBeUndefined();
    expect(await handler.read!('other', events[3]!._id)).toBeUndefined();
    expect(await handler.query!('other', { filter: parseQueryFilter('true'), limit: 10 })).toEqual([]);
    await handler.close();
    const empty = await handlerAt(ES_URL!, { indexMapping: { indexName: uniqueIndexName('none') } });
    expect(await empty.query!('access', { filter: parseQueryFilter('true'), limit: 10 })).toEqual([]);
    expect(await empty.read!('access', 'x')).toBeUndefined();
    await empty.close();
  });

  it('buffered: holds events, writes _bulk batches of maxBatchedEvents each writeInterval, keeps them while the engine is away', async () => {
    const relay = await startTcpRelay(ES_URL!);
    const indexName = uniqueIndexName('buffered');
    const index = `${indexName}_access`;
    const handler = await handlerAt(relay.url, {
      indexMapping: { indexName },
      buffering: { enabled: true, writeInterval: '200 ms', maxBatchedEvents: 2, maxSize: 5 },
    });
    const counters = searchEngineHandlerOf(handler)!.counters;
    await handler.start?.(new Map());
    await handler.publish('access', [accessEvent()]);
    expect(counters.buffered).toBe(1);
    expect(await es.count(index)).toBe(0);
    // Written by the timer (the first write also creates the index, which takes the engine a while).
    await waitFor('the timer to write the buffered event', async () => counters.buffered === 0);
    expect(await es.count(index)).toBe(1);
    // A full batch (maxBatchedEvents) goes at once, without waiting for the interval.
    await handler.publish('access', [accessEvent(), accessEvent(), accessEvent()]);
    await handler.flush!();
    expect(await es.count(index)).toBe(4);
    expect(counters).toMatchObject({ requests: 3, indexed: 4, buffered: 0 });

    await relay.cut();
    await handler.publish('access', [accessEvent(), accessEvent()]);
    await handler.publish('access', [accessEvent(), accessEvent(), accessEvent()]);
    // maxSize 5: the buffer is full, so the next batch is refused (the service keeps it and retries).
    await expect(handler.publish('access', [accessEvent()])).rejects.toThrow(/at most 5 events/);
    await expect(handler.flush!()).rejects.toThrow(/could not be written/);
    expect(counters.retried).toBeGreaterThan(0);
    expect(counters.buffered).toBe(5);
    await relay.restore();
    await handler.flush!();
    expect(await es.count(index)).toBe(9);
    await handler.close();
    await relay.close();
  });

  it('unbuffered: a write the engine cannot take rejects (the service retries); a refused document is logged, not retried', async () => {
    const relay = await startTcpRelay(ES_URL!);
    const indexName = uniqueIndexName('refused');
    const index = `${indexName}_access`;
    const handler = await handlerAt(relay.url, { indexMapping: { indexName } });
    const counters = searchEngineHandlerOf(handler)!.counters;
    await relay.cut();
    await expect(handler.publish('access', [accessEvent()])).rejects.toThrow();
    await expect(handler.publish('access', [accessEvent(), accessEvent()])).rejects.toThrow();
    expect(counters.failedRequests).toBe(2);
    await relay.restore();
    await handler.publish('access', [accessEvent()]);
    // elapsedTime is mapped as a number now: a text there is refused for good (400).
    const bad = accessEvent({ response: { elapsedTime: 'slow' } });
    await handler.publish('access', [bad]);
    await handler.publish('access', [accessEvent(), accessEvent({ response: { elapsedTime: 'slower' } })]);
    expect(counters.rejected).toBe(2);
    expect(await es.count(index)).toBe(2);
    await handler.close();
    await relay.close();
    await expect(handler.publish('access', [accessEvent()])).rejects.toThrow(/closed/);
  });

  it.each(['SearchEngineClientHandler', 'ElasticsearchClientHandler'])(
    'sends its exchanges through the %s heap object when one is declared',
    async (name) => {
      seen.length = 0;
      const indexName = uniqueIndexName('through');
      const handler = await handlerAt(ES_URL!, { indexMapping: { indexName } }, [
        { name: 'ClientHandler', type: 'ClientHandler', config: {} },
        { name, type: 'RecordingClientHandler', config: {} },
      ]);
      const event = accessEvent();
      await handler.publish('access', [event]);
      await handler.publish('access', [accessEvent(), accessEvent()]);
      expect(await handler.read!('access', event._id)).toEqual(event);
      expect(seen).toEqual([
        `PUT /${indexName}_access/_doc/${event._id}`,
        'POST /_bulk',
        `GET /${indexName}_access/_doc/${event._id}`,
      ]);
      expect(await es.count(`${indexName}_access`)).toBe(3);
      await handler.close();
    },
  );
});

describe('SearchEngineAuditEventHandler connection settings', () => {
  it('sends Basic credentials, to the default index audit_access; useSSL makes it https', async () => {
    const requests: { method?: string; url?: string; authorization?: string }[] = [];
    const server = http.createServer((req, res) => {
      requests.push({ method: req.method, url: req.url, authorization: req.headers.authorization });
      req.resume();
      res.writeHead(201, { 'content-type': 'application/json', 'x-elastic-product': 'Elasticsearch' });
      res.end(JSON.stringify({ _index: 'audit_access', _id: 'x', result: 'created' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const handler = await handlerAt(`http://127.0.0.1:${port}`, {
      connection: { host: '127.0.0.1', port, username: 'elastic', password: 's3cret' },
    });
    await handler.publish('access', [accessEvent({ _id: 'abc' })]);
    expect(requests).toEqual([
      {
        method: 'PUT',
        url: '/audit_access/_doc/abc',
        authorization: `Basic ${Buffer.from('elastic:s3cret').toString('base64')}`,
      },
    ]);
    await handler.close();
    server.close();
    const tls = await handlerAt('http://127.0.0.1:1', {
      connection: { host: 'es.example', port: 9243, useSSL: true },
    });
    const url = (searchEngineHandlerOf(tls)!.client.connectionPool.connections[0] as { url: URL }).url;
    expect(url.href).toBe('https://es.example:9243/');
    await tls.close();
  });
});
