import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';

const MAX_SESSIONS = 20;

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
      'config/routes/visit.json': {
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
      },
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
