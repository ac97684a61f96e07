import type { AuditEventHandler } from '@portico/gateway-core/audit';
import { pluginHeap } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { searchEngineHandlerOf } from './index.ts';

function load(config: unknown, type = 'SearchEngineAuditEventHandler') {
  const { heap } = pluginHeap({
    plugins: [plugin],
    file: 'config/config.json',
    properties: { audit: { topics: ['access'], es: { host: 'h', port: 1 } } },
    heap: [{ name: 'Audit', type, config }],
  });
  return heap.get<AuditEventHandler>('Audit', 'audit-handler');
}

async function settingsOf(config: unknown, type?: string) {
  const handler = await load(config, type);
  const settings = searchEngineHandlerOf(handler)!.settings;
  await handler.close();
  return settings;
}

async function loadError(config: unknown) {
  try {
    await (await load(config)).close();
  } catch (error) {
    return error as { code: string; message: string; details: { jsonPath: string; file?: string } };
  }
  throw new Error('loaded');
}

const base = { name: 'es', topics: ['access'] };

describe('SearchEngineAuditEventHandler settings', () => {
  it('defaults: localhost:9200 without TLS, no credentials, index audit, buffering off (1 s, 500, 10000)', async () => {
    const settings = await settingsOf(base);
    expect(settings).toEqual({
      name: 'es',
      enabled: true,
      topics: ['access'],
      connection: { host: 'localhost', port: 9200, useSSL: false },
      indexName: 'audit',
      buffering: { enabled: false, writeInterval: 1000, maxBatchedEvents: 500, maxSize: 10_000 },
    });
  });

  it('takes every field as written, and under the incumbents’ class names', async () => {
    const config = {
      ...base,
      connection: { host: 'es.example', port: 9243, useSSL: true, username: 'u', password: 'p' },
      indexMapping: { indexName: 'gw-audit' },
      buffering: { enabled: true, writeInterval: '250 ms', maxBatchedEvents: 50, maxSize: 200 },
    };
    const expected = {
      connection: { host: 'es.example', port: 9243, useSSL: true, username: 'u', password: 'p' },
      indexName: 'gw-audit',
      buffering: { enabled: true, writeInterval: 250, maxBatchedEvents: 50, maxSize: 200 },
    };
    expect(await settingsOf(config)).toMatchObject(expected);
    expect(await settingsOf(config, 'ElasticsearchAuditEventHandler')).toMatchObject(expected);
    expect(
      await settingsOf(config, 'org.forgerock.audit.handlers.elasticsearch.ElasticsearchAuditEventHandler'),
    ).toMatchObject(expected);
  });

  it('takes every setting as an expression, objects included', async () => {
    const settings = await settingsOf({
      name: '${"es"}',
      enabled: '${false}',
      topics: '${audit.topics}',
      connection: '${audit.es}',
      indexMapping: { indexName: '${"x"}' },
      buffering: { enabled: '${true}', writeInterval: '${"2 seconds"}', maxBatchedEvents: '${7}' },
    });
    expect(settings).toMatchObject({
      name: 'es',
      enabled: false,
      connection: { host: 'h', port: 1, useSSL: false },
      indexName: 'x',
      buffering: { enabled: true, writeInterval: 2000, maxBatchedEvents: 7, maxSize: 10_000 },
    });
  });

  it('port 0 and 65535 are the bounds', async () => {
    expect((await settingsOf({ ...base, connection: { port: 0 } })).connection.port).toBe(0);
    expect((await settingsOf({ ...base, connection: { port: 65535 } })).connection.port).toBe(65535);
  });

  it.each([
    [{ connection: { port: -1 } }, '$.heap[0].config.connection.port'],
    [{ connection: { port: 65536 } }, '$.heap[0].config.connection.port'],
    [{ connection: { port: 'http' } }, '$.heap[0].config.connection.port'],
    [{ connection: { host: '' } }, '$.heap[0].config.connection.host'],
    [{ connection: { useSSL: 'yes' } }, '$.heap[0].config.connection.useSSL'],
    [{ connection: { password: 'p' } }, '$.heap[0].config.connection.username'],
    [{ connection: 'localhost' }, '$.heap[0].config.connection'],
    [{ indexMapping: { indexName: 'Audit' } }, '$.heap[0].config.indexMapping.indexName'],
    [{ indexMapping: { indexName: 'a/b' } }, '$.heap[0].config.indexMapping.indexName'],
    [{ indexMapping: { indexName: '_audit' } }, '$.heap[0].config.indexMapping.indexName'],
    [{ indexMapping: { indexName: '' } }, '$.heap[0].config.indexMapping.indexName'],
    [{ indexMapping: { indexName: 'a'.repeat(250) } }, '$.heap[0].config.indexMapping.indexName'],
    [
      { buffering: { enabled: true, writeInterval: '0 seconds' } },
      '$.heap[0].config.buffering.writeInterval',
    ],
    [
      { buffering: { enabled: true, writeInterval: 'unlimited' } },
      '$.heap[0].config.buffering.writeInterval',
    ],
    [{ buffering: { enabled: true, writeInterval: 'soon' } }, '$.heap[0].config.buffering.writeInterval'],
    [{ buffering: { maxBatchedEvents: 0 } }, '$.heap[0].config.buffering.maxBatchedEvents'],
    [{ buffering: { maxBatchedEvents: 1.5 } }, '$.heap[0].config.buffering.maxBatchedEvents'],
    [{ buffering: { maxSize: 0 } }, '$.heap[0].config.buffering.maxSize'],
    [{ buffering: { enabled: 'no' } }, '$.heap[0].config.buffering.enabled'],
    [{ topics: ['access', 'authentication'] }, '$.heap[0].config.topics'],
    [{ topics: undefined }, '$.heap[0].config.topics'],
    [{ name: undefined }, '$.heap[0].config.name'],
  ])('refuses %j at its JSON path', async (change, jsonPath) => {
    const error = await loadError({ ...base, ...change });
    expect(error).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath, file: 'config/config.json' },
    });
  });
});
