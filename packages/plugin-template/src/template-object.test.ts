import { pluginHeap } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { type TemplateObject } from './index.ts';

function heapWith(config: unknown) {
  return pluginHeap({
    plugins: [plugin],
    file: 'routes/template.json',
    heap: [{ name: 'Greetings', type: 'TemplateObject', config }],
  }).heap;
}

describe('TemplateObject', () => {
  it('is created by name with its values, and released with its heap', async () => {
    const heap = heapWith({ values: { greeting: 'hello' } });
    const object = await heap.get<TemplateObject>('Greetings', 'object');
    expect(object.get('greeting')).toBe('hello');
    await heap.destroy();
    expect(object.get('greeting')).toBeUndefined();
  });

  it('refuses a value that is not a string, naming the file and the JSON path', async () => {
    await expect(heapWith({ values: { n: [1] } }).get('Greetings', 'object')).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: 'routes/template.json', jsonPath: '$.heap[0].config.values.n' },
    });
  });
});
