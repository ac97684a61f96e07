import { serviceUrl } from '@portico/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { instanceDirectory, startGateway, writeInstanceFile } from '../support/gateway.ts';
import { json, keepAliveAgent, send } from '../support/http.ts';

const ES_URL = await serviceUrl('PORTICO_ES_URL', 'Elasticsearch');
const INDEX = `portico-e2e-es-${process.pid}-${Date.now().toString(36)}`;

async function es(method: string, at: string, body?: unknown): Promise<Record<string, any>> {
  const answer = await fetch(`${ES_URL}${at}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await answer.json()) as Record<string, any>;
}

/** `count` requests to /audited/<prefix>-<n>, sixteen at a time; the URLs answered 200. */
async function load(url: string, count: number, prefix: string): Promise<string[]> {
  const agent = keepAliveAgent(16);
  const urls = Array.from({ length: count }, (_, n) => `${url}/audited/${prefix}-${n}`);
  const answered: string[] = [];
  for (let i = 0; i < urls.length; i += 16) {
    const wave = urls.slice(i, i + 16);
    const statuses = await Promise.all(wave.map(async (at) => (await send(at, { agent })).status));
    answered.push(...wave.filter((_, k) => statuses[k] === 200));
  }
  agent.destroy();
  return answered;
}

/**
 * The search engine handler in the real gateway, against the Elasticsearch 8 of test-e2e/services,
 * declared as the incumbents declare it: buffered with a long writeInterval, so that what SIGTERM
 * finds in the buffer must be written by the stop.
 */
describe.skipIf(ES_URL === undefined)('ElasticsearchAuditEventHandler in the real gateway', () => {
  afterAll(() => es('DELETE', `/${INDEX}*`));

  it('indexes one document per request answered, all of them once SIGTERM has stopped it; queries answer', {
    timeout: 90_000,
  }, async () => {
    const { hostname, port } = new URL(ES_URL!);
    const base = instanceDirectory({});
    writeInstanceFile(base, 'config/config.json', {
      heap: [
        {
          name: 'AuditService',
          type: 'AuditService',
          config: {
            config: { handlerForQueries: 'elasticsearch' },
            'event-handlers': [
              {
                class: 'org.forgerock.audit.handlers.elasticsearch.ElasticsearchAuditEventHandler',
                config: {
                  name: 'elasticsearch',
                  topics: ['access'],
                  connection: { host: hostname, port: Number(port), useSSL: false },
                  indexMapping: { indexName: INDEX },
                  buffering: { enabled: true, writeInterval: '30 seconds', maxBatchedEvents: 100 },
                },
              },
            ],
          },
        },
      ],
      handler: { type: 'Router' },
    });
    writeInstanceFile(base, 'config/routes/audited.json', {
      name: 'audited',
      condition: "${find(request.uri.path, '^/audited/')}",
      auditService: 'AuditService',
      handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'ok' } },
    });
    const gw = await startGateway({ base });
    const answered = await load(gw.url, 400, 'a');
    expect(answered).toHaveLength(400);
    const found = await json(`${gw.url}/openig/api/audit/AuditService/access?_queryFilter=true&_pageSize=5`);
    expect(found.status).toBe(200);
    expect(found.body.result).toHaveLength(5);
    expect(found.body.result[0]).toMatchObject({ eventName: 'OPENIG-HTTP-ACCESS', _id: expect.any(String) });
    const one = await json(`${gw.url}/openig/api/audit/AuditService/access/${found.body.result[0]._id}`);
    expect(one.body).toEqual(found.body.result[0]);
    // A query writes the buffer first; these 50 stay buffered (less than a batch, a 30 s interval)
    // until SIGTERM, whose flush must write them.
    answered.push(...(await load(gw.url, 50, 'b')));
    const index = `${INDEX}_access`;
    await es('POST', `/${index}/_refresh`);
    expect((await es('GET', `/${index}/_count`)).count).toBe(400);
    expect(await gw.stop()).toBe(0);

    await es('POST', `/${index}/_refresh`);
    const { count } = await es('GET', `/${index}/_count`);
    expect(count).toBe(450);
    const hits = await es('POST', `/${index}/_search`, { size: 1000, _source: ['http.request.path'] });
    const paths = hits.hits.hits.map((hit: any) => hit._source.http.request.path as string);
    expect(new Set(paths)).toEqual(new Set(answered));
  });
});
