import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Request } from '../http/message.ts';
import { pluginHeap, testContext } from '../testing/heap.ts';
import type { Handler } from '../types.ts';

describe('openig, the instance directories as the incumbents bind them', () => {
  it('reads as text, and as a java.io.File, at configuration time and per request', async () => {
    const { heap, environment, logger } = pluginHeap({
      heap: [
        {
          name: 'answer',
          type: 'StaticResponseHandler',
          config: {
            status: 200,
            // Configuration time: a plain setting.
            reason: '${openig.baseDirectory.name}',
            headers: { 'X-Routes': ['${openig.configDirectory}/routes'] },
            entity: '${openig.baseDirectory.path}|${fileToUrl(openig.temporaryDirectory)}',
          },
        },
      ],
    });
    const handler = await heap.get<Handler>('answer');
    const response = await handler.handle(testContext(), new Request({ uri: 'http://h/' }));
    expect(response.reason).toBe(path.basename(environment.baseDirectory));
    expect(response.headers.get('X-Routes')).toBe(`${environment.configDirectory}/routes`);
    expect(await response.entity.text()).toBe(
      `${environment.baseDirectory}|file://${path.resolve(environment.temporaryDirectory)}`,
    );
    expect(logger.records.filter((r) => r.level === 'warn')).toEqual([]);
  });

  it('gives way to a property of the same name', async () => {
    const { heap } = pluginHeap({
      properties: { openig: { configDirectory: '/elsewhere' } },
      heap: [
        {
          name: 'a',
          type: 'StaticResponseHandler',
          config: { status: 200, reason: '${openig.configDirectory}' },
        },
      ],
    });
    const response = await (await heap.get<Handler>('a')).handle(
      testContext(),
      new Request({ uri: 'http://h/' }),
    );
    expect(response.reason).toBe('/elsewhere');
  });
});
