import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { chainRoute } from '../support/routes.ts';
import { startBufferingUpstream, type Upstream } from '../support/upstream.ts';

interface Echo {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A route for `path` whose requests a StaticRequestFilter with `config` replaces before they go on. */
const replacedBy = (path: string, config: Record<string, unknown>) =>
  chainRoute(`\${request.uri.path == '${path}'}`, [{ type: 'StaticRequestFilter', config }]);

/**
 * HeaderFilter, StaticRequestFilter and LocationHeaderFilter in the real `portico start`, in front
 * of a real upstream that echoes what it receives and redirects to itself.
 */
describe('message-editing filters through portico start', () => {
  let upstream: Upstream;
  let gw: RunningGateway;

  beforeAll(async () => {
    upstream = await startBufferingUpstream((req, res, body) => {
      const path = req.url!.split('?')[0]!;
      // Redirects as applications write them: absolute, to the application's own address.
      if (path.endsWith('/redirect-self')) {
        res.writeHead(302, {
          Location: `${upstream.url}/app/landing?x=a%20b&y=%2F#top`,
          'Content-Length': 0,
        });
        res.end();
        return;
      }
      if (path.endsWith('/redirect-away')) {
        res.writeHead(303, {
          Location: 'https://idp.example.net/authorize?client=app',
          'Content-Length': 0,
        });
        res.end();
        return;
      }
      if (path.endsWith('/redirect-relative')) {
        res.writeHead(307, { Location: '/app/landing', 'Content-Length': 0 });
        res.end();
        return;
      }
      const echo: Echo = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: body.toString(),
      };
      const text = JSON.stringify(echo);
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(text),
        'X-Upstream': 'yes',
        'X-Internal-Build': '1234',
      });
      res.end(text);
    });
    const base = instanceDirectory({
      'config/routes/10-headers.json': chainRoute(
        "${find(request.uri.path, '^/headers/')}",
        [
          {
            type: 'HeaderFilter',
            config: {
              messageType: 'REQUEST',
              remove: ['X-Secret', 'authorization'],
              add: {
                'X-Via-Gateway': ['portico', '${request.method} ${request.uri.path}'],
                'X-Trace': ['added'],
                'X-Absent': ['${attributes.nothing}'],
              },
            },
          },
          {
            type: 'HeaderFilter',
            config: {
              messageType: 'RESPONSE',
              remove: ['X-Internal-Build'],
              add: { 'X-Served-By': ['portico for ${request.headers["X-Client"][0]}'] },
            },
          },
        ],
        { baseURI: upstream.url },
      ),
      'config/routes/20-login.json': replacedBy('/login', {
        method: 'POST',
        uri: `${upstream.url}/session`,
        headers: { 'X-Replayed': ['yes'] },
        form: {
          username: ["${request.headers['X-User'][0]}"],
          password: ['s3cret &+= wörd'],
        },
      }),
      'config/routes/21-search.json': replacedBy('/search', {
        method: 'GET',
        uri: `${upstream.url}/find?lang=en`,
        form: { q: ['${request.queryParams.term[0]}'] },
      }),
      'config/routes/22-validate.json': replacedBy('/validate', {
        method: 'POST',
        uri: `${upstream.url}/json/sessions?_action=validate`,
        headers: { 'Content-Type': ['application/json'] },
        entity: '{"tokenId":"${request.form.tokenid[0]}"}',
      }),
      'config/routes/30-app.json': chainRoute(
        "${find(request.uri.path, '^/app/')}",
        [{ type: 'LocationHeaderFilter' }],
        { baseURI: upstream.url },
      ),
      'config/routes/31-public.json': chainRoute(
        "${find(request.uri.path, '^/public/')}",
        [{ type: 'RedirectFilter', config: { baseURI: 'https://public.example.org:8443' } }],
        { baseURI: upstream.url },
      ),
    });
    // The workspace plugins have no build output: the gateway must import their TypeScript sources,
    // which the registry does when `portico-source` is among the process's export conditions.
    gw = await startGateway({ base, env: { NODE_OPTIONS: '--conditions=portico-source' } });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
  });

  describe('HeaderFilter', () => {
    it('removes, then appends, request headers before they reach the upstream', async () => {
      const reply = await send(`${gw.url}/headers/items?id=7`, {
        method: 'PUT',
        headers: {
          'X-Secret': 'do not forward',
          Authorization: 'Basic dXNlcjpwYXNz',
          'X-Trace': 'from-client',
          'X-Client': 'tests',
        },
        body: 'payload',
      });
      expect(reply.status).toBe(200);
      const echo = JSON.parse(reply.text) as Echo;
      expect(echo.url).toBe('/headers/items?id=7');
      expect(echo.body).toBe('payload');
      expect(echo.headers['x-secret']).toBeUndefined();
      expect(echo.headers.authorization).toBeUndefined();
      expect(echo.headers['x-via-gateway']).toBe('portico, PUT /headers/items');
      expect(echo.headers['x-trace']).toBe('from-client, added');
      expect(echo.headers['x-absent']).toBeUndefined();
    });

    it('removes and adds response headers on the way back to the client', async () => {
      const reply = await send(`${gw.url}/headers/x`, { headers: { 'X-Client': 'curl' } });
      expect(reply.status).toBe(200);
      expect(reply.headers['x-upstream']).toBe('yes');
      expect(reply.headers['x-internal-build']).toBeUndefined();
      expect(reply.headers['x-served-by']).toBe('portico for curl');
    });
  });

  describe('StaticRequestFilter', () => {
    it('replaces the request with a POST carrying the form as its body', async () => {
      const reply = await send(`${gw.url}/login?ignored=1`, {
        headers: { 'X-User': 'demo user', Cookie: 'not=forwarded' },
      });
      expect(reply.status).toBe(200);
      const echo = JSON.parse(reply.text) as Echo;
      expect(echo.method).toBe('POST');
      expect(echo.url).toBe('/session');
      expect(echo.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(echo.headers['x-replayed']).toBe('yes');
      expect(echo.headers.cookie).toBeUndefined();
      expect(echo.body).toBe('username=demo+user&password=s3cret+%26%2B%3D+w%C3%B6rd');
      expect(Object.fromEntries(new URLSearchParams(echo.body))).toEqual({
        username: 'demo user',
        password: 's3cret &+= wörd',
      });
    });

    it('carries the form as extra query parameters for other methods', async () => {
      const reply = await send(`${gw.url}/search?term=caf%C3%A9%20au%20lait`);
      const echo = JSON.parse(reply.text) as Echo;
      expect(echo.method).toBe('GET');
      expect(echo.url).toBe('/find?lang=en&q=caf%C3%A9%20au%20lait');
      expect(echo.body).toBe('');
    });

    it('builds the entity from the incoming form body', async () => {
      const reply = await send(`${gw.url}/validate`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'tokenid=AQIC5w%2B1',
      });
      const echo = JSON.parse(reply.text) as Echo;
      expect(echo.url).toBe('/json/sessions?_action=validate');
      expect(echo.headers['content-type']).toBe('application/json');
      expect(echo.body).toBe('{"tokenId":"AQIC5w+1"}');
    });
  });

  describe('LocationHeaderFilter', () => {
    it('rewrites a redirect to the application so that it comes back through the gateway', async () => {
      const reply = await send(`${gw.url}/app/redirect-self`);
      expect(reply.status).toBe(302);
      expect(reply.headers.location).toBe(`${gw.url}/app/landing?x=a%20b&y=%2F#top`);
      // Following it reaches the application through the gateway, path and query intact.
      const followed = await send(reply.headers.location!.split('#')[0]!);
      expect(followed.status).toBe(200);
      expect((JSON.parse(followed.text) as Echo).url).toBe('/app/landing?x=a%20b&y=%2F');
    });

    it('leaves a redirect elsewhere, and a relative one, alone', async () => {
      const away = await send(`${gw.url}/app/redirect-away`);
      expect(away.status).toBe(303);
      expect(away.headers.location).toBe('https://idp.example.net/authorize?client=app');
      const relative = await send(`${gw.url}/app/redirect-relative`);
      expect(relative.status).toBe(307);
      expect(relative.headers.location).toBe('/app/landing');
    });

    it('as RedirectFilter, rewrites to its baseURI', async () => {
      const reply = await send(`${gw.url}/public/redirect-self`);
      expect(reply.status).toBe(302);
      expect(reply.headers.location).toBe('https://public.example.org:8443/app/landing?x=a%20b&y=%2F#top');
    });
  });
});
