import headerPlugin from '@portico/filter-header';
import { type Context, type Handler, Request, Uri } from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import { upstreamForSuite } from '@portico/test-support';
import { describe, expect, it } from 'vitest';
import plugin from './index.ts';

const FILE = 'routes/forwarded.json';
const upstream = upstreamForSuite();

/** What the filters after it see: the original URI, sent to the upstream in a header. */
const tellOriginal = {
  type: 'HeaderFilter',
  config: { messageType: 'REQUEST', add: { 'X-Original': ['${contexts.router.originalUri}'] } },
};

function chainWith(config: unknown) {
  const { heap, logger } = pluginHeap({
    plugins: [plugin, headerPlugin],
    file: FILE,
    heap: [
      { name: 'Forwarded', type: 'ForwardedRequestFilter', config },
      {
        name: 'Main',
        type: 'Chain',
        config: { filters: ['Forwarded', tellOriginal], handler: { type: 'ClientHandler' } },
      },
    ],
  });
  return { heap, logger, chain: () => heap.get<Handler>('Main', 'handler') };
}

/** A context as a route gives it: the client asked the gateway for `original`. */
function routed(original: string): Context {
  return testContext().child('router', {
    routeId: 'forwarded',
    routeName: 'forwarded',
    originalUri: Uri.parse(original),
    matchedUri: '',
    remainingUri: '/account',
    uriTemplateVariables: {},
  });
}

const CORPUS = {
  scheme: "${request.headers['X-Forwarded-Proto'][0]}",
  host: "${split(request.headers['Host'][0], ':')[0]}",
  port: "${integer(request.headers['X-Forwarded-Port'][0])}",
};

async function send(
  config: unknown,
  headers: Record<string, string>,
  context = routed('http://ig.internal:8080/account?x=1'),
) {
  const { heap, chain } = chainWith(config);
  const request = new Request({ uri: `${upstream.url}/account?x=1`, headers });
  const response = await (await chain()).handle(context, request);
  await response.entity.text();
  await heap.destroy();
  return { response, received: upstream.received.at(-1)! };
}

describe('ForwardedRequestFilter', () => {
  it('rebases the original URI on what the load balancer forwarded, as the corpus writes it', async () => {
    const { response, received } = await send(CORPUS, {
      'X-Forwarded-Proto': 'https',
      Host: 'www.example.com:443',
      'X-Forwarded-Port': '443',
    });
    expect(response.status).toBe(200);
    expect(received.headers['x-original']).toBe('https://www.example.com/account?x=1');
  });

  it('keeps a port other than the scheme default', async () => {
    const { received } = await send(CORPUS, {
      'X-Forwarded-Proto': 'https',
      Host: 'www.example.com',
      'X-Forwarded-Port': '8443',
    });
    expect(received.headers['x-original']).toBe('https://www.example.com:8443/account?x=1');
  });

  it('does not change the request that goes upstream', async () => {
    const { received } = await send(CORPUS, { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Port': '443' });
    expect(received.target).toBe('/account?x=1');
    expect(received.headers.host).toBe(`127.0.0.1:${upstream.port}`);
  });

  describe('scheme', () => {
    it('replaces the scheme alone', async () => {
      const { received } = await send({ scheme: 'https' }, {});
      expect(received.headers['x-original']).toBe('https://ig.internal:8080/account?x=1');
    });

    it('leaves the scheme when the expression gives nothing', async () => {
      const { received } = await send({ scheme: "${request.headers['X-Forwarded-Proto'][0]}" }, {});
      expect(received.headers['x-original']).toBe('http://ig.internal:8080/account?x=1');
    });

    it('departs: leaves the scheme when the value is neither http nor https', async () => {
      const { received } = await send(
        { scheme: "${request.headers['X-Forwarded-Proto'][0]}" },
        { 'X-Forwarded-Proto': 'javascript' },
      );
      expect(received.headers['x-original']).toBe('http://ig.internal:8080/account?x=1');
    });

    it('refuses an expression that does not compile', async () => {
      await expect(chainWith({ scheme: '${request.headers[}' }).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
        details: { file: FILE, jsonPath: '$.heap[0].config.scheme' },
      });
    });
  });

  describe('host', () => {
    it('replaces the host alone', async () => {
      const { received } = await send({ host: 'public.example.com' }, {});
      expect(received.headers['x-original']).toBe('http://public.example.com:8080/account?x=1');
    });

    it('departs: leaves the host when the value cannot be a host name', async () => {
      const { received } = await send(
        { host: "${request.headers['X-Host'][0]}" },
        { 'X-Host': 'evil.example/path?' },
      );
      expect(received.headers['x-original']).toBe('http://ig.internal:8080/account?x=1');
    });

    it('takes an IPv6 literal', async () => {
      const { received } = await send({ host: '[::1]' }, {});
      expect(received.headers['x-original']).toBe('http://[::1]:8080/account?x=1');
    });
  });

  describe('port', () => {
    it('replaces the port alone', async () => {
      const { received } = await send({ port: '${9090}' }, {});
      expect(received.headers['x-original']).toBe('http://ig.internal:9090/account?x=1');
    });

    it('departs: leaves the port when the value is out of range', async () => {
      const { received } = await send({ port: '${70000}' }, {});
      expect(received.headers['x-original']).toBe('http://ig.internal:8080/account?x=1');
    });

    it('leaves the port when the header is not a number', async () => {
      const { received } = await send(
        { port: "${integer(request.headers['X-Forwarded-Port'][0])}" },
        { 'X-Forwarded-Port': 'eighty' },
      );
      expect(received.headers['x-original']).toBe('http://ig.internal:8080/account?x=1');
    });

    it('takes a constant written as text', async () => {
      const { received } = await send({ port: '8443' }, {});
      expect(received.headers['x-original']).toBe('http://ig.internal:8443/account?x=1');
    });
  });

  it('refuses a configuration without scheme, host or port', async () => {
    await expect(chainWith({}).chain()).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: FILE, jsonPath: '$.heap[0].config' },
    });
  });

  it('refuses a setting it does not know', async () => {
    await expect(chainWith({ scheme: 'https', proto: 'https' }).chain()).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath: '$.heap[0].config.proto' },
    });
  });

  it('outside a route, rebases the request URI as the original one', async () => {
    const { received } = await send({ scheme: 'https', host: 'www.example.com' }, {}, testContext());
    expect(received.headers['x-original']).toBe(`https://www.example.com:${upstream.port}/account?x=1`);
  });
});
