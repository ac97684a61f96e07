import type { AuditEventHandler } from '@portico/gateway-core/audit';
import { pluginHeap } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin from './index.ts';

function audit(config: unknown) {
  const { heap, logger } = pluginHeap({
    plugins: [plugin],
    file: 'routes/template.json',
    heap: [{ name: 'AuditLog', type: 'TemplateAuditHandler', config }],
  });
  return { handler: heap.get<AuditEventHandler>('AuditLog', 'audit-handler'), logger };
}

const event = { _id: 'e1', timestamp: '2026-01-01T00:00:00.000Z', transactionId: 't1' };

describe('TemplateAuditHandler', () => {
  it('writes each event it is given to the log, one record each, once published', async () => {
    const { handler, logger } = audit({ name: 'log', topics: ['access'] });
    const log = await handler;
    expect(log).toMatchObject({ name: 'log', topics: ['access'], enabled: true });
    await log.publish('access', [event, { ...event, _id: 'e2' }]);
    const records = logger.records.filter((r) => r.message.startsWith('audit '));
    expect(records.map((r) => [r.level, r.message, (r.data as { _id: string })._id])).toEqual([
      ['info', 'audit access', 'e1'],
      ['info', 'audit access', 'e2'],
    ]);
    await log.close();
  });

  it('takes its settings as expressions, and may be disabled', async () => {
    const log = await audit({ name: '${"log"}', enabled: '${false}', topics: ['access'], level: 'debug' })
      .handler;
    expect(log).toMatchObject({ name: 'log', enabled: false, topics: ['access'] });
  });

  it('requires a name and the topics ["access"], naming the file and the JSON path', async () => {
    await expect(audit({ topics: ['access'] }).handler).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: 'routes/template.json', jsonPath: '$.heap[0].config.name' },
    });
    await expect(audit({ name: 'log', topics: 'access' }).handler).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: 'routes/template.json', jsonPath: '$.heap[0].config.topics' },
    });
  });
});
