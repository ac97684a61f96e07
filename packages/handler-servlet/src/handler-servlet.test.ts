import { type Handler, Request } from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import { upstreamForSuite } from '@portico/test-support';
import { describe, expect, it } from 'vitest';
import plugin from './index.ts';

const FILE = 'config/config.json';
const upstream = upstreamForSuite();

/** OpenIG 2's shape: `{"heap": {"objects": [...]}}`, the servlet first. */
function servletWith(config: unknown) {
  const { heap } = pluginHeap({
    plugins: [plugin],
    file: FILE,
    heap: {
      objects: [
        { name: 'HandlerServlet', type: 'HandlerServlet', config },
        { name: 'ClientHandler', type: 'ClientHandler', config: {} },
      ],
    },
  });
  return { heap, servlet: () => heap.get<Handler>('HandlerServlet', 'handler') };
}

describe('HandlerServlet', () => {
  describe('handler', () => {
    it('gets every request, by name', async () => {
      const { heap, servlet } = servletWith({ handler: 'ClientHandler' });
      const response = await (await servlet()).handle(
        testContext(),
        new Request({ uri: `${upstream.url}/wp?x=1` }),
      );
      expect(response.status).toBe(200);
      expect(await response.entity.text()).toBe('upstream');
      expect(upstream.received.at(-1)?.target).toBe('/wp?x=1');
      await heap.destroy();
    });

    it('may be declared inline', async () => {
      const { heap, servlet } = servletWith({
        handler: { type: 'StaticResponseHandler', config: { status: 204 } },
      });
      const response = await (await servlet()).handle(testContext(), new Request({ uri: 'http://gateway/' }));
      expect(response.status).toBe(204);
      await heap.destroy();
    });

    it('is required', async () => {
      await expect(servletWith({}).servlet()).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: FILE, jsonPath: '$.heap.objects[0].config.handler' },
      });
    });

    it('refuses a name that is not in the heap', async () => {
      await expect(servletWith({ handler: 'DispatchHandler' }).servlet()).rejects.toMatchObject({
        code: 'PORTICO_E_REFERENCE',
        details: { jsonPath: '$.heap.objects[0].config.handler' },
      });
    });
  });

  describe('baseURI', () => {
    it("sends the request to the base URI's scheme, host and port, keeping its path and query", async () => {
      const { heap, servlet } = servletWith({ handler: 'ClientHandler', baseURI: upstream.url });
      const response = await (await servlet()).handle(
        testContext(),
        new Request({ uri: 'http://gateway.example:8080/wordpress/wp-login.php?a=b' }),
      );
      expect(response.status).toBe(200);
      expect(upstream.received.at(-1)?.target).toBe('/wordpress/wp-login.php?a=b');
      expect(upstream.received.at(-1)?.headers.host).toBe(`127.0.0.1:${upstream.port}`);
      await heap.destroy();
    });

    it('leaves the request URI alone when absent', async () => {
      const { heap, servlet } = servletWith({
        handler: { type: 'StaticResponseHandler', config: { status: 200, entity: '${request.uri}' } },
      });
      const response = await (await servlet()).handle(
        testContext(),
        new Request({ uri: 'http://gateway/p' }),
      );
      expect(await response.entity.text()).toBe('http://gateway/p');
      await heap.destroy();
    });

    it('refuses a value that is not an http URI with a host', async () => {
      for (const baseURI of ['not a uri', '/relative', 'ftp://files.example']) {
        await expect(
          servletWith({ handler: 'ClientHandler', baseURI }).servlet(),
          baseURI,
        ).rejects.toMatchObject({
          code: 'PORTICO_E_CONFIG',
          details: { jsonPath: '$.heap.objects[0].config.baseURI' },
        });
      }
    });
  });
});
