import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { raw } from '../support/http.ts';

/**
 * Escaped unreserved characters are decoded once, on arrival (RFC 3986 §6.2.2.2, decision 0112):
 * `/%61pi/x` is `/api/x` for a route condition on the raw path, for a filter and for the upstream;
 * reserved escapes stay escapes, their hex digits in upper case (`%2f` is `%2F`). Raw sockets, so
 * that the escapes reach the gateway as written; a real upstream records the targets and the path a
 * filter saw. `encodedSeparators: keep` lets `%2F` through arrival, to show it is kept.
 */
describe('escaped unreserved characters, normalised on arrival, through portico start', () => {
  const seen: { target: string; filterSaw: string | undefined }[] = [];
  let upstream: http.Server;
  let gw: RunningGateway;

  beforeAll(async () => {
    upstream = http.createServer((request, response) => {
      seen.push({ target: request.url ?? '', filterSaw: request.headers['x-filter-saw'] as string });
      response.end(`upstream ${request.url}`);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as AddressInfo;
    const base = instanceDirectory({
      'config/admin.json': { prefix: 'openig', encodedSeparators: 'keep' },
      'config/routes/10-api.json': {
        name: '10-api',
        baseURI: `http://127.0.0.1:${port}`,
        // The raw path: before, `/%61pi/x` passed a condition on the decoded path but not this one.
        condition: "${matches(request.uri.rawPath, '^/api/')}",
        handler: {
          type: 'Chain',
          config: {
            filters: [
              {
                type: 'HeaderFilter',
                config: { messageType: 'REQUEST', add: { 'X-Filter-Saw': ['${request.uri.rawPath}'] } },
              },
            ],
            handler: 'ReverseProxyHandler',
          },
        },
      },
      'config/routes/99-other.json': {
        name: '99-other',
        handler: { type: 'StaticResponseHandler', config: { status: 404, entity: 'no api route' } },
      },
    });
    gw = await startGateway({ base });
  }, 60_000);

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await new Promise((resolve) => upstream?.close(resolve));
  });

  const get = (target: string) =>
    raw(gw.url, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);

  it.each([
    ['/api/x', '/api/x'],
    ['/%61pi/x', '/api/x'],
    ['/%61%70%69/x?q=%61', '/api/x?q=%61'],
    ['/%41%5a%30%39%2D%2e%5F%7e/../api/%7euser', '/api/~user'],
    ['/api/a%2fb', '/api/a%2Fb'],
    ['/%61pi/a%2Fb%25%32%65', '/api/a%2Fb%252e'],
    ['/api/caf%c3%a9', '/api/caf%C3%A9'],
  ])(
    '%s is routed, filtered and forwarded as %s (departure 125: the incumbents forward it as written)',
    async (target, expected) => {
      const before = seen.length;
      const reply = await get(target);
      expect(reply.status).toBe(200);
      expect(reply.text).toContain(`upstream ${expected}`);
      const path = expected.split('?')[0];
      expect(seen.slice(before)).toEqual([{ target: expected, filterSaw: path }]);
    },
  );

  it.each(['/%2e%2e/%2E%2E/api/x', '/api/%2e%2e/%2e%2e/%2e%2e/api/x'])(
    '%s never climbs above the root: it is /api/x',
    async (target) => {
      const before = seen.length;
      expect((await get(target)).status).toBe(200);
      expect(seen.slice(before).map((s) => s.target)).toEqual(['/api/x']);
    },
  );

  it('an escaped slash is not a separator: /%61pi%2Fx is not under /api/', async () => {
    const before = seen.length;
    const reply = await get('/%61pi%2fx');
    expect([reply.status, reply.text.endsWith('no api route')]).toEqual([404, true]);
    expect(seen.length).toBe(before);
  });
});
