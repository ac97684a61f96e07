import { pluginHeap } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { type TemplateAuditHandler } from './index.ts';

function audit(config: unknown) {
  const { heap, logger } = pluginHeap({
    plugins: [plugin],
    file: 'routes/template.json',
    heap: [{ name: 'AuditLog', type: 'TemplateAuditHandler', config }],
  });
  return { handler: heap.get<TemplateAuditHandler>('AuditLog', 'audit-handler'), logger };
}

describe('TemplateAuditHandler', () => {
  it('writes the events of its topics to the log, one record each', async () => {
    const { handler, logger } = audit({ topics: ['access'] });
    (await handler).publish('access', { path: '/a' });
    (await handler).publish('config', { path: '/b' });
    const records = logger.records.filter((r) => r.message.startsWith('audit '));
    expect(records).toEqual([{ level: 'info', message: 'audit access', data: { path: '/a' } }]);
  });

  it('refuses topics that are not a list, naming the file and the JSON path', async () => {
    await expect(audit({ topics: 'access' }).handler).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: 'routes/template.json', jsonPath: '$.heap[0].config.topics' },
    });
  });
});
