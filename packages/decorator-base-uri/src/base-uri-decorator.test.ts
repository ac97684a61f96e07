import { Context, type Filter, type Handler, Request, Response } from '@portico/gateway-core';
import { loadingMap, pluginHeap, recordingHandler } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin from './index.ts';

/** A heap whose `baseURI` is the default decorator, and one recorded handler for objects to call. */
function setup(heap: unknown[], properties: Record<string, unknown> = {}) {
  const recorder = recordingHandler();
  const made = pluginHeap({
    plugins: [plugin],
    file: 'routes/10-api.json',
    heap,
    properties,
    defaults: [{ name: 'baseURI', type: 'BaseUriDecorator' }],
  });
  return { ...made, recorder };
}

const request = (uri: string) => new Request({ uri });

describe('BaseUriDecorator', () => {
  it('replaces scheme, host and port, keeping path, query and fragment', async () => {
    const { heap, recorder } = setup([
      {
        name: 'forward',
        type: 'ChainOfFilters',
        config: { filters: [] },
        baseURI: 'https://backend.example.com:8443',
      },
    ]);
    const filter = await heap.get<Filter>('forward', 'filter');
    await filter.filter(new Context(), request('http://gateway:8080/a/b%20c?x=1&y=2#frag'), recorder.handler);
    expect(recorder.requests[0]!.uri.toString()).toBe(
      'https://backend.example.com:8443/a/b%20c?x=1&y=2#frag',
    );
  });

  it('implies the default port when the base has none', async () => {
    const { heap } = setup([
      {
        name: 'answer',
        type: 'StaticResponseHandler',
        config: { status: 200, entity: '${request.uri}' },
        baseURI: 'https://secure.example.com',
      },
    ]);
    const handler = await heap.get<Handler>('answer', 'handler');
    const response = await handler.handle(new Context(), request('http://gateway:8080/p?q=1'));
    expect(await response.entity.text()).toBe('https://secure.example.com/p?q=1');
  });

  it('ignores a value that is not a string', async () => {
    const { heap } = setup([
      { name: 'a', type: 'StaticResponseHandler', config: { status: 204 }, baseURI: true },
      { name: 'b', type: 'StaticResponseHandler', config: { status: 204 }, baseURI: { host: 'x' } },
    ]);
    const objects = [await heap.get('a'), await heap.get('b')];
    expect(heap.created()).toEqual(expect.arrayContaining(objects));
  });

  it('refuses a base without scheme and host, where the decoration is written', async () => {
    const { heap } = setup([
      { name: 'a', type: 'StaticResponseHandler', config: { status: 204 }, baseURI: '/just/a/path' },
    ]);
    await expect(heap.get('a')).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: 'routes/10-api.json', jsonPath: '$.heap[0].baseURI' },
    });
  });

  // A base from the environment may carry credentials (`https://user:password@host`): the errors
  // quoted the text, and so put it in the log.
  it('never repeats a bad base in its error, at load or per request', async () => {
    const secret = 'user:s3cret@host:99999';
    const { heap } = setup([
      { name: 'a', type: 'StaticResponseHandler', config: { status: 204 }, baseURI: `http://${secret}` },
      { name: 'b', type: 'StaticResponseHandler', config: { status: 204 }, baseURI: secret },
      { name: 'c', type: 'ChainOfFilters', baseURI: '${attributes.backend}' },
    ]);
    for (const name of ['a', 'b']) {
      const error = await heap.get(name).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(error).toMatchObject({ code: 'PORTICO_E_CONFIG' });
      expect(error!.message).toMatch(
        /^baseURI: the value \(\d+ characters, not shown\) (is not a URI|has no scheme or no host)$/,
      );
      expect(JSON.stringify(error)).not.toContain('s3cret');
    }
    const filter = await heap.get<Filter>('c', 'filter');
    const failure = await filter
      .filter(
        new Context({ attributes: { backend: secret } }),
        request('http://gateway/x'),
        recordingHandler().handler,
      )
      .then(
        () => undefined,
        (e: Error) => e,
      );
    expect(failure!.message).toBe(
      `baseURI: \${attributes.backend} gave a value (${secret.length} characters, not shown) that has no scheme or no host`,
    );
  });

  it('evaluates a ${...} value per request, and fails the request when it gives no URI', async () => {
    const { heap, recorder } = setup([
      { name: 'tenant', type: 'ChainOfFilters', baseURI: '${attributes.backend}' },
    ]);
    const filter = await heap.get<Filter>('tenant', 'filter');
    const routed = new Context({ attributes: { backend: 'http://blue.internal:9000' } });
    await filter.filter(routed, request('http://gateway/x?y'), recorder.handler);
    expect(recorder.requests[0]!.uri.toString()).toBe('http://blue.internal:9000/x?y');
    await expect(
      filter.filter(new Context(), request('http://gateway/x'), recorder.handler),
    ).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
    });
    expect(recorder.requests).toHaveLength(1);
  });

  it('can be declared under another name', async () => {
    const { heap, recorder } = setup([
      { name: 'my.base', type: 'BaseUriDecorator' },
      { name: 'f', type: 'ChainOfFilters', 'my.base': 'http://other:81' },
    ]);
    await (await heap.get<Filter>('f')).filter(new Context(), request('http://gateway/z'), recorder.handler);
    expect(recorder.requests[0]!.uri.toString()).toBe('http://other:81/z');
  });

  it('rebases before the decorated handler sees the request', async () => {
    const { heap } = setup([{ name: 'h', type: 'ChainOfFilters', baseURI: 'http://seen:1' }]);
    let seen = '';
    const next: Handler = {
      handle: async (_c, r) => {
        seen = r.uri.toString();
        return Response.empty(200);
      },
    };
    await (await heap.get<Filter>('h')).filter(new Context(), request('https://gw/q?a'), next);
    expect(seen).toBe('http://seen:1/q?a');
  });
});

describe('BaseUriDecorator and lazy maps', () => {
  it('waits for a map still loading that a ${...} base reads', async () => {
    const { heap, recorder } = setup([
      { name: 'tenant', type: 'ChainOfFilters', baseURI: '${attributes.tenant.backend}' },
    ]);
    const filter = await heap.get<Filter>('tenant', 'filter');
    const context = new Context();
    context.attributes.tenant = loadingMap({ backend: 'http://green.internal:9001' }).map;
    await filter.filter(context, request('http://gateway/x'), recorder.handler);
    expect(recorder.requests[0]!.uri.toString()).toBe('http://green.internal:9001/x');
  });
});
