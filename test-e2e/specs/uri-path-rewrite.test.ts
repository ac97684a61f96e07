import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { raw } from '../support/http.ts';

/**
 * UriPathRewriteFilter against the path a client spells with escapes: the Router's conditions read
 * `/%61pi` as `/api`, so the mapping of `/api` must hold it too, or the request would reach the
 * upstream at the path the mapping exists to replace. Arrival decodes escaped unreserved characters
 * (decision 0112), so the filter meets `/api`. Raw sockets, a real upstream recording the request
 * targets it gets.
 */
describe('UriPathRewriteFilter, through portico start, with escaped paths', () => {
  const targets: string[] = [];
  let upstream: http.Server;
  let gw: RunningGateway;

  beforeAll(async () => {
    upstream = http.createServer((request, response) => {
      targets.push(request.url ?? '');
      response.end('ok');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as AddressInfo;
    const base = instanceDirectory({
      'config/routes/10-api.json': {
        name: '10-api',
        baseURI: `http://127.0.0.1:${port}`,
        condition: "${matches(request.uri.path, '^/api/')}",
        handler: {
          type: 'Chain',
          config: {
            filters: [{ type: 'UriPathRewriteFilter', config: { mappings: { '/api': '/v1' } } }],
            handler: 'ReverseProxyHandler',
          },
        },
      },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await new Promise((resolve) => upstream?.close(resolve));
  });

  it.each([
    ['/api/x', '/v1/x'],
    ['/%61pi/x', '/v1/x'],
    ['/%61%70%69/x?q=%61', '/v1/x?q=%61'],
    ['/ap%69/%7euser', '/v1/~user'],
  ])('%s reaches the upstream as %s', async (target, expected) => {
    const before = targets.length;
    const reply = await raw(gw.url, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(reply.status).toBe(200);
    expect(targets.slice(before)).toEqual([expected]);
  });
});
