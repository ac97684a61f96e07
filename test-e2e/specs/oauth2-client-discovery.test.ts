import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';

/** A route for `/<prefix>/...`: OAuth2ClientFilter, its failure page naming the error, without registrations. */
const discoveringRoute = (prefix: string, filter: Record<string, unknown>) => ({
  name: prefix,
  condition: `\${matches(request.uri.path, '^/${prefix}/')}`,
  handler: {
    type: 'Chain',
    config: {
      filters: [
        {
          type: 'OAuth2ClientFilter',
          config: {
            clientEndpoint: `/${prefix}/openid`,
            requireHttps: false,
            registrations: [],
            loginHandler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'choose' } },
            failureHandler: {
              type: 'StaticResponseHandler',
              config: {
                status: 403,
                entity: '${attributes.openid.error.error}: ${attributes.openid.error.error_description}',
              },
            },
            ...filter,
          },
        },
      ],
      handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'protected' } },
    },
  },
});

/**
 * `/login?discovery=` takes a host from the client. Through the running gateway, a client naming
 * this machine's own addresses (loopback, by address and by name) never gets the gateway to send a
 * request there (departure 64): with dynamic registration metadata the default handler refuses
 * addresses that are not public; without metadata nothing is fetched from a named host at all.
 */
describe('OAuth2ClientFilter discovery does not reach the gateway network on a client word', () => {
  let gw: RunningGateway;
  let canary: Server;
  const seen: string[] = [];
  let canaryUrl: string;

  beforeAll(async () => {
    canary = createServer((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
    canaryUrl = `http://127.0.0.1:${(canary.address() as AddressInfo).port}`;
    const base = instanceDirectory({
      'config/config.json': { handler: { type: 'Router', name: '_router' } },
      'config/routes/register.json': discoveringRoute('register', {
        metadata: { redirect_uris: ['http://gw.example/register/openid/callback'], client_name: 'Portico' },
      }),
      'config/routes/plain.json': discoveringRoute('plain', {}),
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    await gw?.stop();
    await new Promise<void>((resolve) => canary.close(() => resolve()));
  });

  const login = (prefix: string, input: string) =>
    send(`${gw.url}/${prefix}/openid/login?discovery=${encodeURIComponent(input)}&goto=%2F${prefix}%2F`);

  it.each([
    ['register', 'an issuer URL at a loopback address', () => `${canaryUrl}/`],
    ['register', 'a loopback host name', () => canaryUrl.replace('127.0.0.1', 'localhost')],
    ['register', 'an e-mail address at a loopback address', () => `alice@${new URL(canaryUrl).host}`],
    ['plain', 'an issuer URL, without metadata', () => `${canaryUrl}/`],
    ['plain', 'an e-mail address, without metadata', () => `alice@${new URL(canaryUrl).host}`],
  ])('%s: %s is refused and nothing is sent', async (prefix, _what, input) => {
    const reply = await login(prefix, input());
    expect(reply.status).toBe(403);
    expect(reply.text).toMatch(/^invalid_request: /);
    expect(seen).toEqual([]);
  });

  it('the routes keep answering: the login choice page', async () => {
    for (const prefix of ['register', 'plain']) {
      const reply = await send(`${gw.url}/${prefix}/page`);
      expect([reply.status, reply.text]).toEqual([200, 'choose']);
    }
    expect(gw.process.exitCode).toBeNull();
  });
});
