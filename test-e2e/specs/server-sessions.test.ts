import { serviceUrl, startTcpRelay, type TcpRelay, waitFor } from '@portico/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';

const MAX_SESSIONS = 20;
const redis = await serviceUrl('PORTICO_REDIS_URL', 'Redis');

/** A route counting the visits of its client in the session: `visit <n>`. */
const VISIT_ROUTE = {
  name: 'visit',
  handler: {
    type: 'Chain',
    config: {
      filters: [
        {
          type: 'AssignmentFilter',
          config: {
            onRequest: [
              {
                target: '${session.visits}',
                value: '${(session.visits == null ? 0 : session.visits) + 1}',
              },
            ],
          },
        },
      ],
      handler: {
        type: 'StaticResponseHandler',
        config: { status: 200, entity: 'visit ${session.visits}' },
      },
    },
  },
};

/**
 * The server-side sessions in memory, in the real `portico start`: a client that sends no cookie to
 * a route writing the session makes a new session with every request, each kept for the whole
 * timeout; the store keeps at most `session.store.maxSessions`, and the sessions in use go on.
 */
describe('server-side sessions in memory, through portico start', () => {
  let gw: RunningGateway;

  beforeAll(async () => {
    const base = instanceDirectory({
      'config/admin.json': { session: { store: { type: 'memory', maxSessions: MAX_SESSIONS } } },
      'config/routes/visit.json': VISIT_ROUTE,
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
  });

  it('a flood of new sessions fills the store and is refused; a session in use goes on', async () => {
    const first = await send(gw.url);
    expect(first.text).toBe('visit 1');
    const cookie = String(first.headers['set-cookie']).split(';')[0]!;
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) statuses.push((await send(gw.url)).status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(MAX_SESSIONS - 1);
    expect(statuses.filter((status) => status === 500)).toHaveLength(200 - (MAX_SESSIONS - 1));
    expect(gw.output()).toContain('the in-memory session store is full');
    const again = await send(gw.url, { headers: { Cookie: cookie } });
    expect(again.status).toBe(200);
    expect(again.text).toBe('visit 2');
  });
});

/**
 * The server-side sessions in Redis, in the real `portico start`, with Redis failing behind a relay
 * (the shared Redis stays up): a visit that cannot be stored was answered 200 with a cookie naming a
 * session that was never stored.
 */
describe.skipIf(!redis)('server-side sessions in Redis, Redis failing, through portico start', () => {
  let relay: TcpRelay;
  let gw: RunningGateway;

  beforeAll(async () => {
    relay = await startTcpRelay(redis!);
    const base = instanceDirectory({
      'config/admin.json': {
        session: {
          store: { type: 'redis', uri: relay.url, prefix: `portico:e2e:${process.pid}:`, timeout: '300 ms' },
        },
      },
      'config/routes/visit.json': VISIT_ROUTE,
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await relay?.close();
  });

  it('answers 500 without a cookie while Redis is down, logs the outage once, and goes on after it', async () => {
    const first = await send(gw.url);
    expect(first.text).toBe('visit 1');
    const cookie = String(first.headers['set-cookie']).split(';')[0]!;
    await relay.cut();
    for (let i = 0; i < 5; i++) {
      const refused = await send(gw.url, { headers: { Cookie: cookie } });
      expect(refused.status).toBe(500);
      expect(refused.text).toBe('Internal Server Error');
      expect(refused.headers['set-cookie']).toBeUndefined();
    }
    const outages = gw
      .output()
      .split('\n')
      .filter((line) => line.includes('the session store is unavailable'));
    expect(outages).toHaveLength(1);
    expect(JSON.parse(outages[0]!)).toMatchObject({ level: 50, code: 'PORTICO_E_SESSION' });
    await relay.restore();
    // The session stored before the outage is there again once the client has reconnected.
    const visits: string[] = [];
    await waitFor(
      'a visit counted again',
      async () => {
        visits.push((await send(gw.url, { headers: { Cookie: cookie } })).text);
        return visits.at(-1) !== 'Internal Server Error';
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(visits.at(-1)).toBe('visit 2');
  });
});
