import os from 'node:os';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { resolveTokens } from '../config/tokens.ts';
import { Context, type RouterInfo } from '../context/context.ts';
import type { PorticoError } from '../errors.ts';
import { problemsOf } from '../errors.ts';
import { Heap } from '../heap/heap.ts';
import { Entity } from '../http/entity.ts';
import { Request, Response } from '../http/message.ts';
import { createMemoryLogger } from '../logging.ts';
import { TypeRegistry } from '../registry/registry.ts';
import { pluginHeap } from '../testing/heap.ts';
import type { Handler } from '../types.ts';
import { loadRoute, Route } from './route.ts';

const logger = createMemoryLogger();
const environment = {
  baseDirectory: os.tmpdir(),
  configDirectory: os.tmpdir(),
  scriptsDirectory: os.tmpdir(),
  temporaryDirectory: os.tmpdir(),
};

function routeTo(handler: Handler, readsRequestBody = false): Route {
  const heap = new Heap({ registry: new TypeRegistry({ logger }), logger, environment });
  return new Route({ id: 'r', name: 'r', handler, heap, readsRequestBody });
}

/** A request whose body, when it has one, streams: nothing has read it yet. */
const request = (body?: string, maxBytes?: number) =>
  new Request({
    method: body === undefined ? 'GET' : 'POST',
    uri: 'http://gw/a/b?c',
    entity: new Entity(body === undefined ? null : Readable.from([Buffer.from(body)]), undefined, {
      ...(maxBytes ? { maxBytes } : {}),
    }),
  });

describe('a route counts the requests it is processing', () => {
  it('until the handler answers, and hands it the router context', async () => {
    let release!: (response: Response) => void;
    let seen: RouterInfo | undefined;
    const route = routeTo({
      handle: (context) => {
        seen = context.router;
        return new Promise((resolve) => (release = resolve));
      },
    });
    const answer = route.handle(new Context(), request());
    expect(route.active).toBe(1);
    release(new Response({ status: 204 }));
    // Counted down before the caller sees the answer.
    expect((await answer).status).toBe(204);
    expect(route.active).toBe(0);
    expect(seen).toMatchObject({ routeId: 'r', routeName: 'r', remainingUri: '/a/b' });
    expect(seen?.originalUri.toString()).toBe('http://gw/a/b?c');
  });

  it('when the handler rejects', async () => {
    const route = routeTo({ handle: () => Promise.reject(new Error('no')) });
    await expect(route.handle(new Context(), request())).rejects.toThrow('no');
    expect(route.active).toBe(0);
  });

  it('when the handler throws instead of returning a promise: a rejection, never a throw', async () => {
    const route = routeTo({
      handle: () => {
        throw new Error('thrown');
      },
    });
    const answer = route.handle(new Context(), request());
    expect(answer).toBeInstanceOf(Promise);
    await expect(answer).rejects.toThrow('thrown');
    expect(route.active).toBe(0);
  });

  it("when a plugin's handler returns a response instead of a promise of one", async () => {
    const route = routeTo({ handle: () => new Response({ status: 201 }) as unknown as Promise<Response> });
    expect((await route.handle(new Context(), request())).status).toBe(201);
    expect(route.active).toBe(0);
  });

  it('while it reads a body its handler needs whole, and after that read fails', async () => {
    let gotBody: string | undefined;
    const route = routeTo(
      {
        handle: async (_context, req) => {
          gotBody = await req.entity.text();
          return new Response({ status: 200 });
        },
      },
      true,
    );
    const answer = route.handle(new Context(), request('hello'));
    expect(route.active).toBe(1);
    await answer;
    expect(gotBody).toBe('hello');
    expect(route.active).toBe(0);

    await expect(route.handle(new Context(), request('x'.repeat(64), 8))).rejects.toMatchObject({
      code: 'PORTICO_E_ENTITY_TOO_LARGE',
    });
    expect(route.active).toBe(0);
  });
});

describe('loadRoute while validating', () => {
  const json = {
    condition: '${(',
    baseURI: 'http://host:99999',
    heap: [
      { name: 'S', type: 'StaticResponseHandler', config: { status: 'x' } },
      {
        name: 'C',
        type: 'Chain',
        config: { filters: ['Nope'], handler: { type: 'StaticResponseHandler', config: { status: 99999 } } },
      },
      { name: 'T', tpye: 'Chain' },
    ],
    handler: 'C',
    condtion: '${true}',
  };
  const load = (validating: boolean) => {
    const { heap } = pluginHeap({ environment: { validating } });
    return loadRoute({ id: 'r', json, file: 'routes/r.json', parentHeap: heap, logger: heap.logger });
  };

  it('reports every problem of a route at once: its fields, its heap, its decorations, its handler', async () => {
    const error = await load(true).then(
      () => undefined,
      (e: unknown) => e,
    );
    const found = problemsOf(error).map((p) => p.details.jsonPath);
    expect([...found].sort()).toEqual(
      [
        '$.condition',
        '$.baseURI',
        '$.heap[2].type',
        '$.condtion',
        '$.heap[1].config.filters[0]',
        '$.heap[1].config.handler.config.status',
        '$.heap[0].config.status',
      ].sort(),
    );
    expect(problemsOf(error).every((p) => p.details.file === 'routes/r.json')).toBe(true);
  });

  it('serving, a route with a wrong field fails at once', async () => {
    const error = await load(false).then(
      () => undefined,
      (e: unknown) => e,
    );
    // The fields' problems (the baseURI is one of them), before its heap is built.
    expect(problemsOf(error).map((p) => p.details.jsonPath)).toEqual(['$.condition', '$.baseURI']);
  });
});

describe('a route field a token took from the environment', () => {
  it('is described in its error, not quoted', async () => {
    const json = resolveTokens(
      { properties: '&{db.password}', handler: { type: 'StaticResponseHandler', config: { status: 200 } } },
      { env: { DB_PASSWORD: 'hunter2-s3cr3t' } },
    );
    const { heap } = pluginHeap({});
    const error = await loadRoute({ id: 'r', json, file: 'routes/r.json', parentHeap: heap, logger }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(problemsOf(error).map((p) => p.toString())).toEqual([
      'PORTICO_E_CONFIG routes/r.json $.properties: the value of &{db.password} (14 characters, not shown) is not an object (expected an object)',
    ]);
  });
});

describe("a route's handler a token took from the environment", () => {
  it('is described as a name naming nothing, or inside a value that is no reference', async () => {
    const env = { env: { DB_PASSWORD: 'hunter2-s3cr3t' } };
    const { heap } = pluginHeap({});
    const errors = [];
    for (const handler of ['&{db.password}', ['&{db.password}']]) {
      const json = resolveTokens({ handler }, env);
      errors.push(
        await loadRoute({ id: 'r', json, file: 'routes/r.json', parentHeap: heap, logger }).catch((e) => e),
      );
    }
    expect(errors.flatMap(problemsOf).map((p) => p.message)).toEqual([
      expect.stringMatching(
        /^no heap object named the value of &\{db.password\} \(14 characters, not shown\); names in scope: /,
      ),
      'a list holding the value of &{db.password} (not shown) is not a reference',
    ]);
  });
});

describe('a heap object named by a setting a token took from the environment', () => {
  it('is described when no object has that name: tls, trust manager and proxy settings too', async () => {
    const env = { env: { DB_PASSWORD: 'hunter2-s3cr3t' } };
    const { heap } = pluginHeap({});
    const messages: string[] = [];
    for (const setting of ['tls', 'trustManager', 'proxyOptions']) {
      const config = { [setting]: '&{db.password}' };
      const json = resolveTokens(
        { heap: [{ name: 'up', type: 'ClientHandler', config }], handler: 'up' },
        env,
      );
      const error = await loadRoute({ id: 'r', json, file: 'routes/r.json', parentHeap: heap, logger }).catch(
        (e) => e,
      );
      messages.push(...problemsOf(error).map((p) => p.message));
    }
    expect(messages).toEqual(
      Array(3).fill(
        expect.stringMatching(
          /^no heap object named the value of &\{db.password\} \(14 characters, not shown\);/,
        ),
      ),
    );
  });
});

describe('a baseURI from the environment', () => {
  // Credentials in a base URI are the likeliest secret in it.
  const base = 'http://gw-user:hunter2-s3cr3t@upstream.example:99999';
  process.env.PORTICO_ROUTE_BASE = base;
  const failure = (json: unknown) => {
    const { heap } = pluginHeap({});
    return loadRoute({ id: 'r', json, file: 'routes/r.json', parentHeap: heap, logger }).then(
      () => undefined,
      (e: unknown) => e,
    );
  };
  const handler = { type: 'StaticResponseHandler', config: { status: 200 } };

  it('that is malformed is described, with file, JSON path and expectation', async () => {
    const error = await failure({ baseURI: "${env['PORTICO_ROUTE_BASE']}", handler });
    expect(problemsOf(error).map((p) => p.toString())).toEqual([
      `PORTICO_E_CONFIG routes/r.json $.baseURI: port out of range in the value of \${env['PORTICO_ROUTE_BASE']} (${base.length} characters, not shown) (expected a port from 0 to 65535)`,
    ]);
    expect(JSON.stringify((error as PorticoError).toJSON())).not.toContain('hunter2');
  });

  it('from a token too, in a route as in a Dispatch binding', async () => {
    const env = { env: { ROUTE_BASE: base, ROUTE_BASE_USER: 'gw-user:hunter2-s3cr3t' } };
    const route = resolveTokens({ baseURI: 'http://&{route.base.user}@upstream example', handler }, env);
    const dispatch = resolveTokens(
      { handler: { type: 'DispatchHandler', config: { bindings: [{ handler, baseURI: '&{route.base}' }] } } },
      env,
    );
    const errors = [await failure(route), await failure(dispatch)];
    expect(errors.flatMap(problemsOf).map((p) => p.toString())).toEqual([
      'PORTICO_E_CONFIG routes/r.json $.baseURI: malformed URI the value of http://&{route.base.user}@upstream example (46 characters, not shown) (expected a URI)',
      `PORTICO_E_CONFIG routes/r.json $.handler.config.bindings[0].baseURI: port out of range in the value of &{route.base} (${base.length} characters, not shown) (expected a port from 0 to 65535)`,
    ]);
    expect(JSON.stringify(errors.map((e) => (e as PorticoError).toJSON()))).not.toContain('hunter2');
  });

  it('that evaluates to null is absent, as an optional setting is', async () => {
    const { heap } = pluginHeap({});
    const json = { baseURI: '${frConfigs.amUrl}', handler };
    const route = await loadRoute({ id: 'r', json, file: 'routes/r.json', parentHeap: heap, logger });
    const response = await route.handle(new Context(), new Request({ method: 'GET', uri: 'http://gw/a' }));
    expect(response.status).toBe(200);
    await route.destroy();
  });

  it('while one written in the file is quoted', async () => {
    const error = await failure({ baseURI: 'http://host:99999', handler });
    expect(problemsOf(error).map((p) => p.message)).toEqual(['port out of range in "http://host:99999"']);
  });
});
