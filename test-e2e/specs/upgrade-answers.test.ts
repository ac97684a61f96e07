import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { raw, send, waitFor } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * An upgrade request on a route whose handler does not take it over (a ClientHandler) is answered
 * with the route's response, read whole. A client can send `Upgrade: websocket` to any route: a body
 * the route kept through the temporary storage (an EntityExtractFilter on responses) must neither
 * end the process when it is too large to read nor leave its spill file behind.
 */
describe('upgrade requests on a route that answers them with a kept body, through portico start', () => {
  let upstream: Upstream;
  let gw: RunningGateway;
  let temporary: string;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      // Larger than a body may be read into memory (10 MB), or only larger than the storage's memory.
      const size = req.url === '/large' ? 11 * 1024 * 1024 : 256 * 1024;
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': size });
      res.end(Buffer.alloc(size, 'x'));
    });
    const base = instanceDirectory({
      'config/admin.json': { temporaryDirectory: 'tmp' },
      'config/routes/10-extract.json': {
        name: '10-extract',
        baseURI: upstream.url,
        handler: {
          type: 'Chain',
          config: {
            filters: [
              {
                type: 'EntityExtractFilter',
                config: {
                  messageType: 'RESPONSE',
                  target: '${attributes.extracted}',
                  bindings: [{ key: 'id', pattern: 'id=(\\d+)' }],
                },
              },
            ],
            handler: 'ClientHandler',
          },
        },
      },
    });
    temporary = path.join(base, 'tmp');
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
  });

  const upgrade = (target: string) =>
    `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`;
  const spillFiles = () => (existsSync(temporary) ? readdirSync(temporary) : []);

  it('a kept body is sent, and its spill file removed', async () => {
    const reply = await raw(gw.url, upgrade('/small'));
    expect(reply.status).toBe(200);
    expect(reply.text.length).toBeGreaterThan(256 * 1024);
    await waitFor('the spill files removed', () => spillFiles().length === 0 || undefined, {
      timeoutMs: 5000,
    });
  });

  it('a kept body too large to read is answered 500, and the gateway goes on serving', async () => {
    const reply = await raw(gw.url, upgrade('/large'));
    expect(reply.status).toBe(500);
    expect(gw.process.exitCode).toBeNull();
    expect((await send(`${gw.url}/small`)).status).toBe(200);
  });
});
