import { type Handler, Request } from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import { upstreamForSuite } from '@portico/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import plugin from './index.ts';

const FILE = 'routes/rewrite.json';
const upstream = upstreamForSuite();

/** A Chain of one UriPathRewriteFilter in front of the real upstream, through the core's ClientHandler. */
function chainWith(config: unknown, others: unknown[] = []) {
  const { heap, logger } = pluginHeap({
    plugins: [plugin],
    file: FILE,
    heap: [
      { name: 'Rewrite', type: 'UriPathRewriteFilter', config },
      ...others,
      { name: 'Main', type: 'Chain', config: { filters: ['Rewrite'], handler: { type: 'ClientHandler' } } },
    ],
  });
  return { heap, logger, chain: () => heap.get<Handler>('Main', 'handler') };
}

async function send(config: unknown, target: string, others: unknown[] = []) {
  const { heap, chain } = chainWith(config, others);
  const before = upstream.received.length;
  const response = await (await chain()).handle(
    testContext(),
    new Request({ uri: `${upstream.url}${target}` }),
  );
  const body = await response.entity.text();
  await heap.destroy();
  return { response, body, received: upstream.received.slice(before) };
}

const SAML = {
  mappings: {
    '/13/Consumer/metaAlias/tenant1/sp': '/am/Consumer/metaAlias/bravo/tenant1',
    '/13/Consumer/metaAlias/tenant2/sp': '/am/Consumer/metaAlias/bravo/tenant2',
  },
};

function answering(location: string) {
  upstream.answer((_request, response) => {
    response.writeHead(302, { Location: location, 'Content-Location': location, 'Content-Length': 0 });
    response.end();
  });
}

describe('UriPathRewriteFilter', () => {
  describe('mappings, on the request', () => {
    it('replaces the from path with its to path, keeping the rest and the query', async () => {
      const { received } = await send(SAML, '/13/Consumer/metaAlias/tenant2/sp/extra?a=1&b=%20');
      expect(received.map((r) => r.target)).toEqual(['/am/Consumer/metaAlias/bravo/tenant2/extra?a=1&b=%20']);
    });

    it('maps a path equal to the from path', async () => {
      const { received } = await send(SAML, '/13/Consumer/metaAlias/tenant1/sp');
      expect(received[0]?.target).toBe('/am/Consumer/metaAlias/bravo/tenant1');
    });

    it('takes the request path as arrival normalised it, not again (/%61pi is /api by then)', async () => {
      // Arrival makes /%61p%69/x%2fy /api/x%2Fy: test-e2e/specs/uri-path-rewrite.test.ts sends it so.
      const { received } = await send({ mappings: { '/api': '/v1' } }, '/api/x%2Fy?q=%61');
      expect(received.map((r) => r.target)).toEqual(['/v1/x%2Fy?q=%61']);
    });

    it('matches mapping paths written with escapes in their normal form', async () => {
      const { received } = await send(
        { mappings: { '/%7euser/%c3%a9': '/home/%7Euser' } },
        '/~user/%C3%A9/doc',
      );
      expect(received[0]?.target).toBe('/home/~user/doc');
    });

    it('matches whole segments only: /a does not hold /ab', async () => {
      const { received } = await send({ mappings: { '/a': '/z' } }, '/ab/c');
      expect(received[0]?.target).toBe('/ab/c');
    });

    it('leaves a path no mapping holds as it came', async () => {
      const { response, received } = await send(SAML, '/other/path');
      expect(response.status).toBe(200);
      expect(received[0]?.target).toBe('/other/path');
    });

    it('uses the most specific mapping, whatever the order', async () => {
      const mappings = { '/app': '/one', '/app/admin': '/two' };
      expect((await send({ mappings }, '/app/admin/users')).received[0]?.target).toBe('/two/users');
      expect((await send({ mappings }, '/app/users')).received[0]?.target).toBe('/one/users');
    });

    it('ignores trailing slashes in mapping paths', async () => {
      const { received } = await send({ mappings: { '/mylogin/': '/login/' } }, '/mylogin/step');
      expect(received[0]?.target).toBe('/login/step');
    });

    it('maps the root to a path', async () => {
      expect((await send({ mappings: { '/': '/home' } }, '/')).received[0]?.target).toBe('/home');
      expect((await send({ mappings: { '/': '/home' } }, '/x')).received[0]?.target).toBe('/home/x');
    });

    it('evaluates configuration-time expressions in the to paths', async () => {
      const { heap } = pluginHeap({
        plugins: [plugin],
        properties: { tenant: 'bravo' },
        heap: [
          { name: 'Rewrite', type: 'UriPathRewriteFilter', config: { mappings: { '/t': '/am/${tenant}' } } },
          {
            name: 'Main',
            type: 'Chain',
            config: { filters: ['Rewrite'], handler: { type: 'ClientHandler' } },
          },
        ],
      });
      const chain = await heap.get<Handler>('Main', 'handler');
      await chain.handle(testContext(), new Request({ uri: `${upstream.url}/t/x` }));
      expect(upstream.received.at(-1)?.target).toBe('/am/bravo/x');
      await heap.destroy();
    });

    it('is required', async () => {
      await expect(chainWith({}).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: FILE, jsonPath: '$.heap[0].config.mappings' },
      });
    });

    it('refuses an empty object', async () => {
      await expect(chainWith({ mappings: {} }).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.mappings' },
      });
    });

    it('refuses a path that does not start with "/", naming the mapping', async () => {
      await expect(chainWith({ mappings: { '/a': 'b' } }).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.mappings["/a"]' },
      });
      await expect(chainWith({ mappings: { a: '/b' } }).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
      });
    });

    it('refuses a to path that is not a string', async () => {
      await expect(chainWith({ mappings: { '/a': 7 } }).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
      });
    });

    it('refuses two from paths that differ by a trailing slash only', async () => {
      await expect(chainWith({ mappings: { '/a': '/b', '/a/': '/c' } }).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
      });
    });

    it('departs: refuses an expression in a from path (the incumbents evaluate it)', async () => {
      await expect(chainWith({ mappings: { "${env['X']}": '/b' } }).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
      });
    });
  });

  describe('mappings, on the response', () => {
    afterAll(() => upstream.answer((_request, response) => response.end('upstream')));

    it('maps a relative Location and Content-Location back to the from path', async () => {
      answering('/am/Consumer/metaAlias/bravo/tenant1/done?x=1');
      const { response } = await send(SAML, '/13/Consumer/metaAlias/tenant1/sp');
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe('/13/Consumer/metaAlias/tenant1/sp/done?x=1');
      expect(response.headers.get('content-location')).toBe('/13/Consumer/metaAlias/tenant1/sp/done?x=1');
    });

    it('maps an absolute Location that names the upstream the request went to', async () => {
      answering(`${upstream.url}/login?goto=%2F`);
      const { response } = await send({ mappings: { '/mylogin': '/login' } }, '/mylogin');
      expect(response.headers.get('location')).toBe(`${upstream.url}/mylogin?goto=%2F`);
    });

    it('maps back a Location whose to path escapes unreserved characters', async () => {
      answering('/%61m/Consumer/metaAlias/bravo/tenant1/done');
      const { response } = await send(SAML, '/13/Consumer/metaAlias/tenant1/sp');
      expect(response.headers.get('location')).toBe('/13/Consumer/metaAlias/tenant1/sp/done');
    });

    it('leaves a Location on another server as it is', async () => {
      answering('https://elsewhere.example/login');
      const { response } = await send({ mappings: { '/mylogin': '/login' } }, '/mylogin');
      expect(response.headers.get('location')).toBe('https://elsewhere.example/login');
    });

    it('leaves a Location no to path holds as it is', async () => {
      answering('/logout');
      const { response } = await send({ mappings: { '/mylogin': '/login' } }, '/mylogin');
      expect(response.headers.get('location')).toBe('/logout');
    });
  });

  describe('failureHandler', () => {
    it('answers 500 by default when the rewritten path is not a valid URI path', async () => {
      const { response, received } = await send({ mappings: { '/badurl': '/[' } }, '/badurl');
      expect(response.status).toBe(500);
      expect(received).toEqual([]);
    });

    it('is the handler that answers instead, by name or inline', async () => {
      const failureHandler = {
        type: 'StaticResponseHandler',
        config: { status: 500, headers: { 'Content-Type': ['text/plain'] }, entity: 'Invalid URL produced' },
      };
      const inline = await send({ mappings: { '/badurl': '/[' }, failureHandler }, '/badurl');
      expect(inline.body).toBe('Invalid URL produced');
      const named = await send({ mappings: { '/badurl': '/[' }, failureHandler: 'Failed' }, '/badurl', [
        { name: 'Failed', ...failureHandler },
      ]);
      expect(named.body).toBe('Invalid URL produced');
      expect(named.received).toEqual([]);
    });

    it('is not used when the rewrite succeeds', async () => {
      const failureHandler = { type: 'StaticResponseHandler', config: { status: 418 } };
      const { response } = await send({ mappings: { '/a': '/b' }, failureHandler }, '/a');
      expect(response.status).toBe(200);
    });

    it('warns when the route loads about a mapping that can only fail', async () => {
      const { chain, logger, heap } = chainWith({ mappings: { '/badurl': '/[' } });
      await chain();
      expect(logger.records.some((r) => r.level === 'warn' && /not a valid URI path/.test(r.message))).toBe(
        true,
      );
      await heap.destroy();
    });

    it('refuses a name that is not in the heap', async () => {
      await expect(
        chainWith({ mappings: { '/a': '/b' }, failureHandler: 'Nowhere' }).chain(),
      ).rejects.toMatchObject({
        code: 'PORTICO_E_REFERENCE',
        details: { jsonPath: '$.heap[0].config.failureHandler' },
      });
    });
  });
});
