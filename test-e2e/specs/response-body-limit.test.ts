import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

const LIMIT = 1024 * 1024;

/**
 * A response body a filter reads whole is bounded by admin.json's `limits.maxBufferedBodySize`, as a
 * request body is, in the real `portico start`: it was always bounded by the 10 MB default instead,
 * so a lower limit did not hold and a higher one refused bodies it allowed.
 */
describe('a response body read whole, through portico start', () => {
  let upstream: Upstream;
  let gw: RunningGateway;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      const size = Number(new URL(req.url!, 'http://x').searchParams.get('size'));
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': size });
      res.end(Buffer.alloc(size, 'x'));
    });
    const base = instanceDirectory({
      'config/admin.json': { limits: { maxBufferedBodySize: LIMIT } },
      'config/routes/read.json': {
        name: 'read',
        baseURI: upstream.url,
        handler: {
          type: 'Chain',
          config: {
            filters: [
              {
                type: 'HeaderFilter',
                config: {
                  messageType: 'RESPONSE',
                  add: { 'X-Length': ['${response.entity.string.length()}'] },
                },
              },
            ],
            handler: 'ReverseProxyHandler',
          },
        },
      },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    // Exits cleanly: the refused response's upstream connection was let go of, so the pool closes.
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
  });

  it('within the limit: read', async () => {
    const reply = await send(`${gw.url}/x?size=${LIMIT}`);
    expect(reply.status).toBe(200);
    expect(reply.headers['x-length']).toBe(String(LIMIT));
  });

  it('past the limit, under the 10 MB default: refused', async () => {
    const reply = await send(`${gw.url}/x?size=${2 * LIMIT}`);
    expect(reply.status).toBe(413);
  });
});
