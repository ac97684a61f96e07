import { Readable } from 'node:stream';
import { Request } from '@portico/gateway-core';
import { loadingMap, pluginHeap, recordingHandler, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { type StaticRequestFilter } from './index.ts';

function heapWith(config: unknown) {
  return pluginHeap({
    plugins: [plugin],
    file: 'routes/login.json',
    heap: [{ name: 'Login', type: 'StaticRequestFilter', config }],
  });
}

function filterFrom(config: unknown): Promise<StaticRequestFilter> {
  return heapWith(config).heap.get<StaticRequestFilter>('Login', 'filter');
}

/** Runs the filter on an incoming request and returns the request the next handler got. */
async function replaced(
  config: unknown,
  incoming = new Request({ uri: 'http://gateway/in' }),
  context = testContext(),
) {
  const filter = await filterFrom(config);
  const next = recordingHandler();
  const response = await filter.filter(context, incoming, next.handler);
  expect(response.status).toBe(200);
  expect(next.requests).toHaveLength(1);
  return next.requests[0]!;
}

describe('StaticRequestFilter', () => {
  it('replaces the request: nothing of the incoming one goes on', async () => {
    const incoming = new Request({
      method: 'PUT',
      uri: 'http://gateway/in?x=1',
      headers: { Cookie: 'session=1', 'X-In': 'in' },
      entity: 'incoming body',
    });
    const sent = await replaced({ method: 'GET', uri: 'http://app.example.com/login' }, incoming);
    expect(sent).not.toBe(incoming);
    expect(sent.method).toBe('GET');
    expect(sent.uri.toString()).toBe('http://app.example.com/login');
    expect(sent.headers.size).toBe(0);
    expect(await sent.entity.text()).toBe('');
  });

  describe('method', () => {
    it('is the method of the new request, whatever its case', async () => {
      expect((await replaced({ method: 'delete', uri: 'http://app/' })).method).toBe('DELETE');
    });

    it('is required', async () => {
      await expect(filterFrom({ uri: 'http://app/' })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: 'routes/login.json', jsonPath: '$.heap[0].config.method' },
      });
    });

    it('refuses something that is not a method', async () => {
      await expect(filterFrom({ method: 'GET /', uri: 'http://app/' })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.method' },
      });
    });
  });

  describe('uri', () => {
    it('is a template evaluated against the incoming request', async () => {
      const incoming = new Request({ uri: 'http://gateway/short?url=x' });
      const context = testContext({ attributes: { host: 'app.example.com' } });
      const sent = await replaced(
        { method: 'GET', uri: 'https://${attributes.host}:8443/api?${request.uri.query}' },
        incoming,
        context,
      );
      expect(sent.uri.toString()).toBe('https://app.example.com:8443/api?url=x');
    });

    it('is required', async () => {
      await expect(filterFrom({ method: 'GET' })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.uri' },
      });
    });

    it('written as plain text, must be a fully qualified URI', async () => {
      await expect(filterFrom({ method: 'GET', uri: '/login' })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.uri' },
      });
      await expect(filterFrom({ method: 'GET', uri: 'http://app/a b' })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.uri' },
      });
    });

    it('refuses a template that does not compile', async () => {
      await expect(filterFrom({ method: 'GET', uri: 'http://${' })).rejects.toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
        details: { jsonPath: '$.heap[0].config.uri' },
      });
    });

    it('evaluating to something that is not a URI: 500, logged, and nothing goes on', async () => {
      const { heap, logger } = heapWith({ method: 'GET', uri: '${attributes.target}' });
      const filter = await heap.get<StaticRequestFilter>('Login', 'filter');
      const next = recordingHandler();
      const context = testContext({ attributes: { target: 'http://app/has space' } });
      const response = await filter.filter(context, new Request({ uri: 'http://gateway/' }), next.handler);
      expect(response.status).toBe(500);
      expect(next.requests).toHaveLength(0);
      expect(
        logger.records.some((r) => r.level === 'error' && r.data?.value === 'http://app/has space'),
      ).toBe(true);
    });

    it('evaluating to null: 500, logged, and nothing goes on', async () => {
      const { heap, logger } = heapWith({ method: 'GET', uri: '${attributes.missing}' });
      const filter = await heap.get<StaticRequestFilter>('Login', 'filter');
      const next = recordingHandler();
      const response = await filter.filter(
        testContext(),
        new Request({ uri: 'http://gateway/' }),
        next.handler,
      );
      expect(response.status).toBe(500);
      expect(next.requests).toHaveLength(0);
      expect(logger.records.some((r) => r.level === 'error')).toBe(true);
    });
  });

  describe('version', () => {
    it('defaults to HTTP/1.1', async () => {
      const incoming = new Request({ uri: 'http://gateway/', version: 'HTTP/2' });
      expect((await replaced({ method: 'GET', uri: 'http://app/' }, incoming)).version).toBe('HTTP/1.1');
    });

    it('is the version of the new request', async () => {
      expect((await replaced({ method: 'GET', uri: 'http://app/', version: 'HTTP/1.0' })).version).toBe(
        'HTTP/1.0',
      );
    });

    it('refuses something that is not an HTTP version', async () => {
      await expect(filterFrom({ method: 'GET', uri: 'http://app/', version: '1.1' })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.version' },
      });
    });
  });

  describe('headers', () => {
    it('gives the new request its headers, values as templates, null values left out', async () => {
      const incoming = new Request({ uri: 'http://gateway/', headers: { 'X-User': 'alice' } });
      const sent = await replaced(
        {
          method: 'GET',
          uri: 'http://app/',
          headers: {
            'X-Forwarded-User': ["${request.headers['X-User'][0]}"],
            Accept: ['text/html', 'application/json'],
            'X-None': ['${attributes.missing}'],
          },
        },
        incoming,
      );
      expect(sent.headers.getAll('x-forwarded-user')).toEqual(['alice']);
      expect(sent.headers.getAll('accept')).toEqual(['text/html', 'application/json']);
      expect(sent.headers.has('x-none')).toBe(false);
    });

    it('defaults to none', async () => {
      expect((await replaced({ method: 'GET', uri: 'http://app/' })).headers.size).toBe(0);
    });

    it('refuses a name that is not a header name, at its path', async () => {
      await expect(
        filterFrom({ method: 'GET', uri: 'http://app/', headers: { 'Bad Name': ['x'] } }),
      ).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.headers["Bad Name"]' },
      });
    });

    it('refuses a header mapped to something other than an array', async () => {
      await expect(
        filterFrom({ method: 'GET', uri: 'http://app/', headers: { Accept: 'text/html' } }),
      ).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.headers.Accept' },
      });
    });
  });

  describe('form', () => {
    const form = {
      username: ['${attributes.user}'],
      password: ['p@ss word&more'],
      remember: ['${attributes.missing}'],
      tag: ['a', 'b'],
    };
    const context = () => testContext({ attributes: { user: 'demo' } });

    it('a POST carries it as an application/x-www-form-urlencoded body, null values left out', async () => {
      const sent = await replaced({ method: 'POST', uri: 'http://app/login', form }, undefined, context());
      expect(sent.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
      const body = await sent.entity.text();
      expect(body).toBe('username=demo&password=p%40ss+word%26more&tag=a&tag=b');
      expect(sent.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
      expect(sent.uri.toString()).toBe('http://app/login');
    });

    it('replaces a Content-Type the headers give, as the body is a form', async () => {
      const sent = await replaced(
        { method: 'POST', uri: 'http://app/login', headers: { 'Content-Type': ['text/plain'] }, form },
        undefined,
        context(),
      );
      expect(sent.headers.getAll('content-type')).toEqual(['application/x-www-form-urlencoded']);
    });

    it('other methods carry it as extra query parameters, after those of the URI', async () => {
      const sent = await replaced(
        { method: 'GET', uri: 'http://app/login?lang=en', form },
        undefined,
        context(),
      );
      expect(sent.uri.toString()).toBe(
        'http://app/login?lang=en&username=demo&password=p@ss%20word%26more&tag=a&tag=b',
      );
      expect(sent.headers.has('content-type')).toBe(false);
      expect(await sent.entity.text()).toBe('');
    });

    it('is read back by the upstream as the values given', async () => {
      const sent = await replaced({ method: 'GET', uri: 'http://app/login', form }, undefined, context());
      expect(sent.queryParams).toMatchObject({
        username: ['demo'],
        password: ['p@ss word&more'],
        tag: ['a', 'b'],
      });
    });

    it('is mutually exclusive with entity for a POST', async () => {
      await expect(
        filterFrom({ method: 'post', uri: 'http://app/', form: { a: ['1'] }, entity: 'a=1' }),
      ).rejects.toMatchObject({ code: 'PORTICO_E_CONFIG', details: { jsonPath: '$.heap[0].config.entity' } });
    });

    it('may go with an entity for other methods: the form goes in the query, the entity in the body', async () => {
      const sent = await replaced({ method: 'PUT', uri: 'http://app/', form: { a: ['1'] }, entity: 'body' });
      expect(sent.uri.rawQuery).toBe('a=1');
      expect(await sent.entity.text()).toBe('body');
    });

    it('refuses a parameter mapped to something other than an array', async () => {
      await expect(
        filterFrom({ method: 'POST', uri: 'http://app/', form: { a: '1' } }),
      ).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.form.a' },
      });
    });
  });

  describe('entity', () => {
    it('is a template giving the body, with its Content-Length', async () => {
      const incoming = new Request({ uri: 'http://gateway/?tokenid=abc' });
      const sent = await replaced(
        {
          method: 'POST',
          uri: 'http://am/json/sessions?_action=validate',
          headers: { 'Content-Type': ['application/json'] },
          entity: '{ "tokenId": "${request.queryParams.tokenid[0]}" }',
        },
        incoming,
      );
      expect(await sent.entity.text()).toBe('{ "tokenId": "abc" }');
      expect(sent.headers.get('content-length')).toBe('20');
      expect(sent.headers.get('content-type')).toBe('application/json');
    });

    it('reads an incoming form body it refers to (an incumbent idiom)', async () => {
      const incoming = new Request({
        method: 'POST',
        uri: 'http://gateway/validate',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        entity: Readable.from([Buffer.from('tokenid=t%2B1')]),
      });
      const sent = await replaced(
        { method: 'POST', uri: 'http://am/validate', entity: '{"tokenId":"${request.form.tokenid[0]}"}' },
        incoming,
      );
      expect(await sent.entity.text()).toBe('{"tokenId":"t+1"}');
    });

    it('evaluating to null: no body', async () => {
      const sent = await replaced({ method: 'POST', uri: 'http://app/', entity: '${attributes.missing}' });
      expect(sent.entity.isEmpty).toBe(true);
      expect(sent.headers.has('content-length')).toBe(false);
    });

    it('defaults to no body', async () => {
      expect((await replaced({ method: 'POST', uri: 'http://app/' })).entity.isEmpty).toBe(true);
    });

    it('refuses a template that does not compile', async () => {
      await expect(
        filterFrom({ method: 'POST', uri: 'http://app/', entity: '${1 +}' }),
      ).rejects.toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
        details: { jsonPath: '$.heap[0].config.entity' },
      });
    });
  });
});

describe('StaticRequestFilter and lazy maps', () => {
  it('waits for a map still loading that its templates read', async () => {
    const filter = await filterFrom({
      method: 'POST',
      uri: 'http://backend/users/${attributes.user.id}',
      headers: { 'X-Email': ['${attributes.user.email}'] },
      form: { name: ['${attributes.user.name}'] },
    });
    const context = testContext();
    context.attributes.user = loadingMap({ id: 7, email: 'a@example.com', name: 'Alice' }).map;
    const next = recordingHandler();
    await filter.filter(context, new Request({ uri: 'http://app/' }), next.handler);
    const sent = next.requests[0]!;
    expect(sent.uri.toString()).toBe('http://backend/users/7');
    expect(sent.headers.get('X-Email')).toBe('a@example.com');
    expect(await sent.entity.text()).toBe('name=Alice');
  });
});
