import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createMemoryLogger } from '@portico/gateway-core/runtime';
import inject from 'light-my-request';
import { afterEach, describe, expect, it } from 'vitest';
import { createRequestListener } from './app.ts';
import { Gateway } from './gateway.ts';
import { locateInstance } from './instance.ts';

/** The router API through the Koa application's callback, as a tool on the gateway's machine calls it. */
const logger = createMemoryLogger();
const gateways: Gateway[] = [];
afterEach(async () => {
  for (const g of gateways.splice(0)) await g.destroy();
});

const hello = (text: string) => ({
  condition: `\${matches(request.uri.path, '^/${text}')}`,
  handler: { type: 'StaticResponseHandler', config: { status: 200, entity: text } },
});

async function gatewayWith(routes: Record<string, unknown>) {
  const base = mkdtempSync(path.join(os.tmpdir(), 'portico-router-api-'));
  const directory = path.join(base, 'config', 'routes');
  mkdirSync(directory, { recursive: true });
  for (const [id, json] of Object.entries(routes))
    writeFileSync(path.join(directory, `${id}.json`), JSON.stringify(json));
  const gateway = await Gateway.load(locateInstance({ base }), logger);
  gateways.push(gateway);
  const listener = createRequestListener(gateway, logger);
  const call = (options: Parameters<typeof inject>[1]) =>
    inject(listener, { remoteAddress: '127.0.0.1', ...(options as object) });
  return { call, directory };
}

const ROUTES = '/openig/api/system/objects/_router/routes';

describe('the router API (api/system/objects/<router>/routes)', () => {
  it('lists the routes of _router with _queryFilter, each with its id, name, condition, file, load time and state', async () => {
    const { call, directory } = await gatewayWith({ a: hello('a'), b: hello('b') });
    const listed = await call({ url: `${ROUTES}?_queryFilter=true` });
    expect(listed.statusCode).toBe(200);
    const body = listed.json();
    expect(body).toMatchObject({ resultCount: 2, pagedResultsCookie: null, remainingPagedResults: -1 });
    expect(body.result[0]).toEqual({
      _id: 'a',
      name: 'a',
      condition: "${matches(request.uri.path, '^/a')}",
      file: path.join(directory, 'a.json'),
      loadedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      chain: ['StaticResponseHandler'],
      state: 'DEPLOYED',
    });
    const filtered = (
      await call({ url: `${ROUTES}?_queryFilter=${encodeURIComponent('_id eq "b"')}` })
    ).json();
    expect(filtered.result.map((r: { _id: string }) => r._id)).toEqual(['b']);
    expect((await call({ url: ROUTES })).statusCode).toBe(400);
    expect((await call({ url: `${ROUTES}?_queryFilter=${encodeURIComponent('_id eq')}` })).statusCode).toBe(
      400,
    );
  });

  it('reads one route, and answers 404 for an unknown route or router', async () => {
    const { call } = await gatewayWith({ a: hello('a') });
    expect((await call({ url: `${ROUTES}/a` })).json()).toMatchObject({ _id: 'a', state: 'DEPLOYED' });
    expect((await call({ url: `${ROUTES}/zz` })).statusCode).toBe(404);
    expect(
      (await call({ url: '/openig/api/system/objects/other/routes?_queryFilter=true' })).statusCode,
    ).toBe(404);
  });

  it('deploys with PUT (201 new, 200 replaced), served at once and written to the routes directory', async () => {
    const { call, directory } = await gatewayWith({});
    expect((await call({ url: '/c' })).statusCode).toBe(404);
    const created = await call({ method: 'PUT', url: `${ROUTES}/c`, payload: { _id: 'c', ...hello('c') } });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ _id: 'c', state: 'DEPLOYED' });
    expect((await call({ url: '/c' })).payload).toBe('c');
    expect(JSON.parse(readFileSync(path.join(directory, 'c.json'), 'utf8'))).toEqual(hello('c'));
    const replaced = await call({
      method: 'PUT',
      url: `${ROUTES}/c`,
      payload: {
        ...hello('c'),
        handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'c2' } },
      },
    });
    expect(replaced.statusCode).toBe(200);
    expect((await call({ url: '/c' })).payload).toBe('c2');
  });

  it('refuses a route that does not load with its problems, keeping the version serving', async () => {
    const { call } = await gatewayWith({ a: hello('a') });
    const refused = await call({ method: 'PUT', url: `${ROUTES}/a`, payload: { handler: { type: 'Nope' } } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().detail.problems[0]).toMatchObject({ code: 'PORTICO_E_UNKNOWN_TYPE' });
    expect((await call({ url: '/a' })).payload).toBe('a');
    expect((await call({ method: 'PUT', url: `${ROUTES}/a`, payload: 'not json' })).statusCode).toBe(400);
    expect((await call({ method: 'PUT', url: `${ROUTES}/..%2e`, payload: hello('x') })).statusCode).toBe(400);
  });

  it('refuses a body nested deeper than a route file may be with 400 and a coded problem, deploying nothing', async () => {
    const { call, directory } = await gatewayWith({ a: hello('a') });
    // Deep enough that JSON.stringify of it would overflow the stack.
    const deep = `{"handler":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const refused = await call({
      method: 'PUT',
      url: `${ROUTES}/deep`,
      headers: { 'content-type': 'application/json' },
      payload: deep,
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().detail.problems[0]).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      // Where in the body, as for a route file: the body was refused as it was read.
      jsonPath: 'line 1, column 523',
      expected: 'at most 512 levels of nesting',
    });
    expect(existsSync(path.join(directory, 'deep.json'))).toBe(false);
    expect((await call({ url: `${ROUTES}/deep` })).statusCode).toBe(404);
    expect((await call({ url: '/a' })).payload).toBe('a');
    // Just within the bound, the body is read and the route judged as a file would be.
    const within = `{"handler":${'['.repeat(511)}${']'.repeat(511)}}`;
    const judged = await call({ method: 'PUT', url: `${ROUTES}/deep`, payload: within });
    expect(judged.statusCode).toBe(400);
    expect(judged.json().message).toMatch(/did not load/);
  });

  it('honours If-None-Match: * (create only) and If-Match: * (replace only)', async () => {
    const { call } = await gatewayWith({ a: hello('a') });
    const put = (id: string, headers: Record<string, string>) =>
      call({ method: 'PUT', url: `${ROUTES}/${id}`, headers, payload: hello(id) });
    expect((await put('a', { 'if-none-match': '*' })).statusCode).toBe(412);
    expect((await put('b', { 'if-match': '*' })).statusCode).toBe(412);
    expect((await put('b', { 'if-none-match': '*' })).statusCode).toBe(201);
    expect((await put('a', { 'if-match': '*' })).statusCode).toBe(200);
  });

  it('undeploys with DELETE, removing the file; a second DELETE is 404', async () => {
    const { call, directory } = await gatewayWith({ a: hello('a') });
    const removed = await call({ method: 'DELETE', url: `${ROUTES}/a` });
    expect(removed.statusCode).toBe(200);
    expect(removed.json()).toMatchObject({ _id: 'a' });
    expect((await call({ url: '/a' })).statusCode).toBe(404);
    expect(existsSync(path.join(directory, 'a.json'))).toBe(false);
    expect((await call({ method: 'DELETE', url: `${ROUTES}/a` })).statusCode).toBe(404);
    expect((await call({ method: 'POST', url: ROUTES, payload: {} })).statusCode).toBe(405);
  });

  it('answers only loopback callers, as every admin endpoint, and so does the routes page', async () => {
    const { call, directory } = await gatewayWith({});
    const page = await call({ url: '/openig/routes' });
    expect([page.statusCode, page.headers['content-type']]).toEqual([200, 'text/html; charset=UTF-8']);
    expect(page.payload).toContain('api/system/objects/_router/routes?_queryFilter=true');
    expect((await call({ url: '/openig/routes', remoteAddress: '10.0.0.7' })).statusCode).toBe(403);
    const refused = await call({
      method: 'PUT',
      url: `${ROUTES}/x`,
      payload: hello('x'),
      remoteAddress: '10.0.0.7',
    });
    expect(refused.statusCode).toBe(403);
    expect(existsSync(path.join(directory, 'x.json'))).toBe(false);
  });
});
