import { Request } from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import { corpusFiles, loadCorpusRoute, requireCorpusUnderCi } from '@portico/test-support';
import { describe, expect, it } from 'vitest';
import plugin from './index.ts';

/** The compatibility corpus's route files that use ThrottlingFilter load unchanged and throttle. */
const available = requireCorpusUnderCi();

describe.skipIf(!available)('corpus routes with a ThrottlingFilter', () => {
  const files = available ? corpusFiles().filter(([, text]) => text.includes('"ThrottlingFilter"')) : [];

  it('finds them', () => {
    expect(files.length).toBeGreaterThanOrEqual(2);
  });

  it.each(files)('%s loads', async (file, text) => {
    const { heap, logger } = pluginHeap({
      plugins: [plugin],
      heap: [{ name: 'ClientHandler', type: 'ClientHandler' }],
    });
    const route = await loadCorpusRoute(file, text, heap, logger);
    await route.destroy();
    await heap.destroy();
  });

  it('throttles the simple throttle route of the devops guide at 2000 requests per second', async () => {
    const [file, text] = files.find(([name]) => name.endsWith('20-simplethrottle.json'))!;
    const { heap, logger } = pluginHeap({ plugins: [plugin] });
    const route = await loadCorpusRoute(file, text, heap, logger);
    // Until the first refusal: 2000 at once, plus those that returned meanwhile (2 per millisecond).
    const started = performance.now();
    let admitted = 0;
    let refused: string | undefined;
    while (refused === undefined && admitted < 100_000) {
      const response = await route.handle(testContext(), new Request({ uri: 'http://gw/simplethrottle' }));
      if (response.status === 200) admitted++;
      else refused = `${response.status} Retry-After ${response.headers.get('retry-after')}`;
    }
    const elapsedMs = performance.now() - started;
    expect(refused).toBe('429 Retry-After 1');
    expect(admitted).toBeGreaterThanOrEqual(2000);
    expect(admitted).toBeLessThanOrEqual(2000 + Math.ceil(elapsedMs * 2));
    await route.destroy();
    await heap.destroy();
  });
});
