import { defineHeaplet, definePlugin, s } from '@portico/gateway-core';
import { pluginHeap } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { candidateNames, lookupDataSource } from './index.ts';

/** An object that is not a data source, to be named by mistake. */
const other = definePlugin({
  name: 'lookup-test',
  version: '0.0.0',
  core: '*',
  heaplets: [
    defineHeaplet({ type: 'NotADataSource', kind: 'object', config: s.object({}), create: () => ({}) }),
  ],
});

const dataSource = (name: string) => ({
  name,
  type: 'JdbcDataSource',
  config: { jdbcUrl: 'jdbc:postgresql://127.0.0.1:1/none', minIdle: 0 },
});

function heapWith(declarations: unknown[]) {
  return pluginHeap({ plugins: [plugin, other], file: 'routes/sql.json', heap: declarations }).heap;
}

const where = { file: 'routes/sql.json', jsonPath: '$.heap[1].config.dataSource' };

describe('JNDI-style data source names', () => {
  it('stand for the heap names without the java:comp/env/ prefix, then the last segment', () => {
    expect(candidateNames('java:comp/env/jdbc/forgerock')).toEqual([
      'java:comp/env/jdbc/forgerock',
      'jdbc/forgerock',
      'forgerock',
    ]);
    expect(candidateNames('jdbc/users')).toEqual(['jdbc/users', 'users']);
    expect(candidateNames('UsersDb')).toEqual(['UsersDb']);
  });

  it.each([['java:comp/env/jdbc/forgerock'], ['jdbc/forgerock'], ['forgerock']])(
    'find a JdbcDataSource declared as %s',
    async (declared) => {
      const heap = heapWith([dataSource(declared)]);
      const found = await lookupDataSource(heap, 'java:comp/env/jdbc/forgerock', where);
      expect(found).toBe(await heap.get(declared));
      await heap.destroy();
    },
  );

  it('prefer the most specific name declared', async () => {
    const heap = heapWith([dataSource('forgerock'), dataSource('jdbc/forgerock')]);
    const found = await lookupDataSource(heap, 'java:comp/env/jdbc/forgerock', where);
    expect(found).toBe(await heap.get('jdbc/forgerock'));
    await heap.destroy();
  });

  it('are found in parent heaps too (a route using the data source of config.json)', async () => {
    const parent = heapWith([dataSource('forgerock')]);
    const child = parent.child({ file: 'routes/sql.json' });
    expect(await lookupDataSource(child, 'java:comp/env/jdbc/forgerock', where)).toBe(
      await parent.get('forgerock'),
    );
    await parent.destroy();
  });

  it('that match nothing are a REFERENCE error listing the names tried', async () => {
    const heap = heapWith([]);
    await expect(lookupDataSource(heap, 'java:comp/env/jdbc/missing', where)).rejects.toMatchObject({
      code: 'PORTICO_E_REFERENCE',
      message: expect.stringContaining("'jdbc/missing', 'missing'"),
      details: where,
    });
  });

  it('that name something else are a REFERENCE error', async () => {
    const heap = heapWith([{ name: 'forgerock', type: 'NotADataSource' }]);
    await expect(lookupDataSource(heap, 'java:comp/env/jdbc/forgerock', where)).rejects.toMatchObject({
      code: 'PORTICO_E_REFERENCE',
      message: "'forgerock' is not a data source",
    });
  });
});
