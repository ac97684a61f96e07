import { Readable } from 'node:stream';
import { Request, Response } from '@portico/gateway-core';
import { loadingMap, pluginHeap, recordingHandler, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { type AssignmentFilter } from './index.ts';

function filterFrom(config: unknown): Promise<AssignmentFilter> {
  const { heap } = pluginHeap({
    plugins: [plugin],
    file: 'routes/assign.json',
    heap: [{ name: 'Assign', type: 'AssignmentFilter', config }],
  });
  return heap.get<AssignmentFilter>('Assign', 'filter');
}

const request = (init: Partial<ConstructorParameters<typeof Request>[0]> = {}) =>
  new Request({ uri: 'http://app/path?q=1', ...init });

describe('AssignmentFilter', () => {
  describe('onRequest', () => {
    it('assigns before the request goes on, so the next handler sees the values', async () => {
      const filter = await filterFrom({
        onRequest: [{ target: '${attributes.user}', value: '${request.headers["X-User"][0]}' }],
      });
      const context = testContext();
      let seen: unknown;
      const next = recordingHandler(() => {
        seen = context.attributes.user;
        return Response.empty(200);
      });
      await filter.filter(context, request({ headers: { 'X-User': 'alice' } }), next.handler);
      expect(seen).toBe('alice');
    });

    it('runs the assignments in order: a later one sees what an earlier one wrote', async () => {
      const filter = await filterFrom({
        onRequest: [
          { target: '${attributes.a}', value: '${1 + 1}' },
          { target: '${attributes.b}', value: '${attributes.a * 10}' },
        ],
      });
      const context = testContext();
      await filter.filter(context, request(), recordingHandler().handler);
      expect(context.attributes).toMatchObject({ a: 2, b: 20 });
    });

    it('keeps the type of a single expression and makes text of a template', async () => {
      const filter = await filterFrom({
        onRequest: [
          { target: '${attributes.n}', value: '${1 + 2}' },
          { target: '${attributes.t}', value: 'n=${1 + 2}' },
          { target: '${attributes.list}', value: '${request.queryParams["q"]}' },
        ],
      });
      const context = testContext();
      await filter.filter(context, request(), recordingHandler().handler);
      expect(context.attributes).toMatchObject({ n: 3, t: 'n=3', list: ['1'] });
    });

    it('defaults to no assignments', async () => {
      const filter = await filterFrom({ onResponse: [{ target: '${attributes.x}', value: 'y' }] });
      const context = testContext({ attributes: { kept: 1 } });
      let seen: Record<string, unknown> = {};
      const next = recordingHandler(() => {
        seen = { ...context.attributes };
        return Response.empty(200);
      });
      await filter.filter(context, request(), next.handler);
      expect(seen).toEqual({ kept: 1 });
    });

    it('refuses something that is not an array', async () => {
      await expect(filterFrom({ onRequest: { target: '${attributes.x}' } })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: 'routes/assign.json', jsonPath: '$.heap[0].config.onRequest' },
      });
    });
  });

  describe('onResponse', () => {
    it('assigns once the response is back, with the response in the bindings', async () => {
      const filter = await filterFrom({
        onResponse: [{ target: '${attributes.status}', value: '${response.status.code}' }],
      });
      const context = testContext();
      let during: unknown = 'unset';
      const next = recordingHandler(() => {
        during = context.attributes.status;
        return Response.empty(418);
      });
      await filter.filter(context, request(), next.handler);
      expect(during).toBeUndefined();
      expect(context.attributes.status).toBe(418);
    });

    it('can change the response', async () => {
      const filter = await filterFrom({
        onResponse: [{ target: '${response.headers["X-Served-By"]}', value: 'portico' }],
      });
      const response = await filter.filter(testContext(), request(), recordingHandler().handler);
      expect(response.headers.getAll('x-served-by')).toEqual(['portico']);
    });

    it('defaults to no assignments', async () => {
      const filter = await filterFrom({ onRequest: [{ target: '${attributes.x}', value: 'y' }] });
      const response = await filter.filter(
        testContext(),
        request(),
        recordingHandler(() => Response.empty(204)).handler,
      );
      expect(response.status).toBe(204);
      expect(response.headers.names()).toEqual(['Content-Length']);
    });

    it('reads a response body an expression refers to, and the body still reaches the client', async () => {
      const filter = await filterFrom({
        onResponse: [{ target: '${attributes.valid}', value: "${response.entity.json['valid']}" }],
      });
      const context = testContext();
      const next = recordingHandler(
        () => new Response({ status: 200, entity: Readable.from([Buffer.from('{"valid":true}')]) }),
      );
      const response = await filter.filter(context, request(), next.handler);
      expect(context.attributes.valid).toBe(true);
      expect(await response.entity.text()).toBe('{"valid":true}');
    });
  });

  describe('binding.condition', () => {
    it('assigns only when the condition is true', async () => {
      const filter = await filterFrom({
        onRequest: [
          { condition: "${request.method == 'POST'}", target: '${attributes.post}', value: 'yes' },
          { condition: "${request.method == 'GET'}", target: '${attributes.get}', value: 'yes' },
        ],
      });
      const context = testContext();
      await filter.filter(context, request({ method: 'GET' }), recordingHandler().handler);
      expect(context.attributes).toEqual({ get: 'yes' });
    });

    it('treats a condition that evaluates to null as false', async () => {
      const filter = await filterFrom({
        onRequest: [{ condition: '${attributes.missing}', target: '${attributes.x}', value: 'set' }],
      });
      const context = testContext();
      await filter.filter(context, request(), recordingHandler().handler);
      expect(context.attributes).toEqual({});
    });

    it('omitted: the assignment is unconditional', async () => {
      const filter = await filterFrom({ onRequest: [{ target: '${attributes.x}', value: 'set' }] });
      const context = testContext();
      await filter.filter(context, request(), recordingHandler().handler);
      expect(context.attributes.x).toBe('set');
    });

    it('accepts the labelled form and plain booleans', async () => {
      const filter = await filterFrom({
        onRequest: [
          { condition: { expression: '${true}', label: 'always' }, target: '${attributes.a}', value: '1' },
          { condition: false, target: '${attributes.b}', value: '1' },
        ],
      });
      const context = testContext();
      await filter.filter(context, request(), recordingHandler().handler);
      expect(context.attributes).toEqual({ a: '1' });
    });

    it('refuses a condition that does not compile', async () => {
      await expect(
        filterFrom({ onRequest: [{ condition: '${a ==}', target: '${attributes.x}' }] }),
      ).rejects.toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
        details: { jsonPath: '$.heap[0].config.onRequest[0].condition' },
      });
    });
  });

  describe('binding.target', () => {
    it('is required: a binding without one fails the load', async () => {
      await expect(filterFrom({ onResponse: [{ value: 'x' }] })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.onResponse[0].target' },
      });
    });

    it('must be assignable', async () => {
      await expect(
        filterFrom({ onRequest: [{ target: 'user-${attributes.x}', value: 'x' }] }),
      ).rejects.toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
        details: { jsonPath: '$.heap[0].config.onRequest[0].target' },
      });
    });

    it('writes into the session', async () => {
      const filter = await filterFrom({ onRequest: [{ target: '${session.cart.items}', value: '${3}' }] });
      const context = testContext({ session: { other: true } });
      await filter.filter(context, request(), recordingHandler().handler);
      expect(context.session).toEqual({ other: true, cart: { items: 3 } });
    });

    it('replaces the values of a request header', async () => {
      const filter = await filterFrom({
        onRequest: [{ target: "${request.headers['X-Role']}", value: 'admin' }],
      });
      const next = recordingHandler();
      await filter.filter(testContext(), request({ headers: { 'X-Role': ['a', 'b'] } }), next.handler);
      expect(next.requests[0]?.headers.getAll('x-role')).toEqual(['admin']);
    });

    it('replaces the request URI', async () => {
      const filter = await filterFrom({
        onRequest: [
          { target: '${request.uri}', value: 'https://backend.example:8443/v2${request.uri.path}' },
        ],
      });
      const next = recordingHandler();
      await filter.filter(testContext(), request(), next.handler);
      expect(next.requests[0]?.uri.toString()).toBe('https://backend.example:8443/v2/path');
    });

    it('replaces a part of the request URI', async () => {
      const filter = await filterFrom({
        onRequest: [{ target: '${request.uri.path}', value: '/other dir' }],
      });
      const next = recordingHandler();
      await filter.filter(testContext(), request(), next.handler);
      expect(next.requests[0]?.uri.toString()).toBe('http://app/other%20dir?q=1');
    });
  });

  describe('binding.value', () => {
    it('omitted: the target is set to null, which removes it', async () => {
      const filter = await filterFrom({
        onRequest: [
          { target: '${attributes.token}' },
          { target: '${session.user}' },
          { target: "${request.headers['Authorization']}" },
        ],
      });
      const context = testContext({ attributes: { token: 't', keep: 1 }, session: { user: 'u', keep: 2 } });
      const next = recordingHandler();
      await filter.filter(context, request({ headers: { Authorization: 'Basic x' } }), next.handler);
      expect(context.attributes).toEqual({ keep: 1 });
      expect(context.session).toEqual({ keep: 2 });
      expect(next.requests[0]?.headers.has('authorization')).toBe(false);
    });

    it('refuses a value that does not compile', async () => {
      await expect(
        filterFrom({ onRequest: [{ target: '${attributes.x}', value: '${unclosed' }] }),
      ).rejects.toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
        details: { jsonPath: '$.heap[0].config.onRequest[0].value' },
      });
    });
  });

  it('loads an incumbent route unchanged even where its names resolve to nothing at run time', async () => {
    // 06-rs.json of the OpenIG guide uses the pre-4 `exchange` object: it loads, assigns nothing.
    const filter = await filterFrom({
      onRequest: [{ target: '${exchange.session.username}', value: '${exchange.token.info.mail}' }],
    });
    const context = testContext();
    const response = await filter.filter(context, request(), recordingHandler().handler);
    expect(response.status).toBe(200);
    expect(context.attributes).toEqual({});
  });
});

describe('AssignmentFilter and lazy maps', () => {
  it('waits for a map still loading (a SQL lookup) that a condition or value reads, keeping the order', async () => {
    const filter = await filterFrom({
      onRequest: [
        {
          condition: "${attributes.user.role == 'admin'}",
          target: '${attributes.email}',
          value: '${attributes.user.email}',
        },
        { target: '${attributes.copy}', value: '${attributes.email}' },
      ],
    });
    const context = testContext();
    context.attributes.user = loadingMap({ role: 'admin', email: 'a@example.com' }).map;
    await filter.filter(context, request(), recordingHandler().handler);
    expect(context.attributes).toMatchObject({ email: 'a@example.com', copy: 'a@example.com' });
  });
});
