import { setTimeout as sleep } from 'node:timers/promises';
import servicePlugin, { type AuditService } from '@portico/audit-service';
import { Context, Request } from '@portico/gateway-core';
import { parseQueryFilter } from '@portico/gateway-core/audit';
import { loadRoute, pluginHeap } from '@portico/gateway-core/testing';
import { serviceUrl, startTcpRelay } from '@portico/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { engine, uniqueIndexName } from './fixtures/engine.ts';
import plugin from './index.ts';

const ES_URL = await serviceUrl('PORTICO_ES_URL', 'Elasticsearch');

const RATE = 200; // requests per second
const SECONDS = 30;
const CUT_AT = 10_000;
const CUT_FOR = 10_000;

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0
    ? 0
    : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function latencies(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: +percentile(sorted, 50).toFixed(3),
    p99: +percentile(sorted, 99).toFixed(3),
  };
}

/**
 * The shared Elasticsearch is never stopped: a TCP relay between the handler and it is closed for
 * 10 s (connections refused, open ones dropped) under a steady stream of requests through an
 * audited route, then opened again. Every request answered must be one document, once.
 */
describe.skipIf(ES_URL === undefined)('SearchEngineAuditEventHandler through an Elasticsearch outage', () => {
  const es = engine(ES_URL!);
  afterAll(() => es.cleanUp());

  it.each([
    ['unbuffered', undefined],
    ['buffered', { enabled: true, writeInterval: '200 ms', maxBatchedEvents: 500, maxSize: 2000 }],
  ])(
    '%s: 200 req/s for 30 s, Elasticsearch cut for 10 s: every event arrives exactly once',
    async (mode, buffering) => {
      const relay = await startTcpRelay(ES_URL!);
      const { hostname, port } = new URL(relay.url);
      const indexName = uniqueIndexName(`outage-${mode}`);
      const { heap, logger } = pluginHeap({
        plugins: [servicePlugin, plugin],
        file: 'config/config.json',
        heap: [
          {
            name: 'AuditService',
            type: 'AuditService',
            config: {
              config: { handlerForQueries: 'es' },
              delivery: { retryMax: '1 second' },
              'event-handlers': [
                {
                  class: 'org.forgerock.audit.handlers.elasticsearch.ElasticsearchAuditEventHandler',
                  config: {
                    name: 'es',
                    topics: ['access'],
                    connection: { host: hostname, port: Number(port) },
                    indexMapping: { indexName },
                    ...(buffering ? { buffering } : {}),
                  },
                },
              ],
            },
          },
        ],
      });
      const route = await loadRoute({
        id: 'audited',
        file: 'config/routes/audited.json',
        json: {
          auditService: 'AuditService',
          handler: { type: 'StaticResponseHandler', config: { status: 200 } },
        },
        parentHeap: heap,
        logger,
      });
      const service = await heap.get<AuditService>('AuditService');
      const phases = { before: [] as number[], during: [] as number[], after: [] as number[] };
      let answered = 0;
      const start = performance.now();
      let cut = false;
      let restored = false;
      const requests: Promise<void>[] = [];
      let sent = 0;
      while (performance.now() - start < SECONDS * 1000) {
        const elapsed = performance.now() - start;
        if (!cut && elapsed >= CUT_AT) {
          cut = true;
          await relay.cut();
        }
        if (cut && !restored && elapsed >= CUT_AT + CUT_FOR) {
          restored = true;
          await relay.restore();
        }
        const phase = !cut ? phases.before : restored ? phases.after : phases.during;
        const due = Math.floor((elapsed * RATE) / 1000);
        for (; sent < due; sent++) {
          const n = sent;
          const began = performance.now();
          requests.push(
            route
              .handle(
                new Context({
                  client: {
                    remoteAddress: '127.0.0.1',
                    remotePort: 40000,
                    localAddress: '127.0.0.1',
                    localPort: 8080,
                  },
                }),
                new Request({ uri: `http://gw.example/p/${n}`, headers: { host: 'gw.example' } }),
              )
              .then((response) => {
                phase.push(performance.now() - began);
                if (response.status === 200) answered++;
              }),
          );
        }
        await sleep(5);
      }
      await Promise.all(requests);
      // handlerForQueries: the service asks this handler.
      const some = await service.query('access', parseQueryFilter('/response/statusCode eq "200"'), 5);
      expect(some.ok && some.value).toHaveLength(5);
      // The gateway stopping: the service flushes (the handler in backoff is tried at once), then closes.
      await service.close();
      const status = service.status() as { handlers: Record<string, number>[] };
      const queue = status.handlers[0]!;
      const index = `${indexName}_access`;
      await es.call('POST', `/${index}/_refresh`);
      const found = await es.call('POST', `/${index}/_search`, {
        size: 10_000,
        _source: ['http.request.path'],
      });
      const paths = (found.body.hits.hits as { _source: { http: { request: { path: string } } } }[]).map(
        (hit) => hit._source.http.request.path,
      );
      const documents = await es.count(index);
      const closed = logger.records.find((record) => record.message === "audit handler 'es' closed");
      const figures = {
        mode,
        requestsAnswered: answered,
        documents,
        distinctPaths: new Set(paths).size,
        service: {
          queued: queue.queued,
          written: queue.written,
          retried: queue.retried,
          dropped: queue.dropped,
        },
        handler: closed?.data,
        latencyMs: {
          before: latencies(phases.before),
          during: latencies(phases.during),
          after: latencies(phases.after),
        },
      };
      console.log(`es outage figures: ${JSON.stringify(figures)}`);
      expect(answered).toBe(sent);
      expect(answered).toBeGreaterThanOrEqual(RATE * SECONDS * 0.95);
      expect(documents).toBe(answered);
      expect(new Set(paths).size).toBe(answered);
      expect(paths.length).toBe(answered);
      expect(queue.dropped).toBe(0);
      expect(queue.retried).toBeGreaterThan(0);
      // The request path never waits on the engine: its p99 during the outage stays small.
      expect(figures.latencyMs.during.p99).toBeLessThan(50);
      await relay.close();
    },
    90_000,
  );
});
