import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, peakRssOf, type RunningGateway, startGateway } from '../support/gateway.ts';
import { keepAliveAgent, send } from '../support/http.ts';

const KEY_LENGTH = 12 * 1024;
const key = (name: string) => `${name}:`.padEnd(KEY_LENGTH, 'k');

/**
 * A ThrottlingFilter whose partition comes from a request header, in the real `portico start`: a
 * client sending a new 12 KB key with every request made a bucket kept for the whole hour each (150 MB
 * for 12,000 requests); the partitions kept in memory are bounded by `maxPartitions`.
 */
describe('throttling partitions from a header, through portico start', () => {
  let gw: RunningGateway;

  beforeAll(async () => {
    const base = instanceDirectory({
      'config/routes/throttled.json': {
        name: 'throttled',
        handler: {
          type: 'Chain',
          config: {
            filters: [
              {
                type: 'ThrottlingFilter',
                config: {
                  requestGroupingPolicy: "${request.headers['X-Key'][0]}",
                  rate: { numberOfRequests: 2, duration: '1 hour' },
                  maxPartitions: 500,
                },
              },
            ],
            handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'ok' } },
          },
        },
      },
    });
    gw = await startGateway({ base, env: { NODE_OPTIONS: '--conditions=portico-source' } });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
  });

  /** Sends `count` requests, 16 at a time, each with a new 12 KB partition key; their statuses. */
  async function flood(label: string, count: number): Promise<number[]> {
    const agent = keepAliveAgent(16);
    let next = 0;
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < count) {
          const reply = await send(gw.url, { headers: { 'X-Key': key(`${label}-${next++}`) }, agent });
          statuses.push(reply.status);
        }
      }),
    );
    agent.destroy();
    return statuses;
  }

  // The process's memory first grows to what serving such requests takes (about 150 MB more here,
  // with or without the filter), then stays: the second flood measures what the buckets keep.
  it('12,000 more new 12 KB keys keep the memory where it was; each partition is still throttled', async () => {
    expect((await flood('warm', 12_000)).filter((status) => status !== 200)).toEqual([]);
    const before = peakRssOf(gw.process.pid!);
    expect((await flood('measured', 12_000)).filter((status) => status !== 200)).toEqual([]);
    expect(peakRssOf(gw.process.pid!) - before).toBeLessThan(60 * 1024 * 1024);
    const warnings = gw
      .output()
      .split('\n')
      .filter((line) => line.includes('maxPartitions'));
    expect(warnings).toHaveLength(1);
    // A partition kept is throttled as before.
    const headers = { 'X-Key': 'steady' };
    const replies = [];
    for (let i = 0; i < 3; i++) replies.push((await send(gw.url, { headers })).status);
    expect(replies).toEqual([200, 200, 429]);
  }, 90_000);
});
