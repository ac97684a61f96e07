import { Readable } from 'node:stream';
import { Request } from '@portico/gateway-core';
import { loadingMap, pluginHeap, recordingHandler, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { type ConditionEnforcementFilter } from './index.ts';

function filterFrom(config: unknown, others: unknown[] = []): Promise<ConditionEnforcementFilter> {
  const { heap } = pluginHeap({
    plugins: [plugin],
    file: 'routes/enforce.json',
    heap: [{ name: 'Enforce', type: 'ConditionEnforcementFilter', config }, ...others],
  });
  return heap.get<ConditionEnforcementFilter>('Enforce', 'filter');
}

const withHeader = (value?: string) =>
  new Request({ uri: 'http://app/', headers: value === undefined ? {} : { 'X-Allowed': value } });

describe('ConditionEnforcementFilter', () => {
  describe('condition', () => {
    it('when true, the request continues', async () => {
      const filter = await filterFrom({ condition: "${request.headers['X-Allowed'][0] == 'yes'}" });
      const next = recordingHandler();
      const response = await filter.filter(testContext(), withHeader('yes'), next.handler);
      expect(response.status).toBe(200);
      expect(next.requests).toHaveLength(1);
    });

    it('when false, answers 403 Forbidden and the request goes no further', async () => {
      const filter = await filterFrom({ condition: "${request.headers['X-Allowed'][0] == 'yes'}" });
      const next = recordingHandler();
      const response = await filter.filter(testContext(), withHeader('no'), next.handler);
      expect(response.status).toBe(403);
      expect(await response.entity.text()).toBe('');
      expect(next.requests).toHaveLength(0);
    });

    it('when it evaluates to null, counts as false', async () => {
      const filter = await filterFrom({ condition: '${attributes.missing}' });
      const next = recordingHandler();
      const response = await filter.filter(testContext(), withHeader(), next.handler);
      expect(response.status).toBe(403);
      expect(next.requests).toHaveLength(0);
    });

    it('accepts the labelled form', async () => {
      const filter = await filterFrom({
        condition: { expression: '${attributes.ok}', label: 'ok attribute' },
      });
      const next = recordingHandler();
      const context = testContext({ attributes: { ok: true } });
      expect((await filter.filter(context, withHeader(), next.handler)).status).toBe(200);
    });

    it('reads a request body it refers to, and the body still goes on', async () => {
      const filter = await filterFrom({ condition: "${request.entity.json['role'] == 'admin'}" });
      const next = recordingHandler();
      const request = new Request({
        method: 'POST',
        uri: 'http://app/',
        entity: Readable.from([Buffer.from('{"role":"admin"}')]),
      });
      expect((await filter.filter(testContext(), request, next.handler)).status).toBe(200);
      expect(await next.requests[0]?.entity.text()).toBe('{"role":"admin"}');
    });

    it('is required', async () => {
      await expect(filterFrom({})).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: 'routes/enforce.json', jsonPath: '$.heap[0].config.condition' },
      });
    });

    it('refuses an expression that does not compile', async () => {
      await expect(filterFrom({ condition: '${request.method ==}' })).rejects.toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
        details: { jsonPath: '$.heap[0].config.condition' },
      });
    });

    it('refuses a value that is not a condition', async () => {
      await expect(filterFrom({ condition: 42 })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.condition' },
      });
    });
  });

  describe('failureHandler', () => {
    const denied = {
      name: 'Denied',
      type: 'StaticResponseHandler',
      config: { status: 401, headers: { 'WWW-Authenticate': ['Basic realm="app"'] }, entity: 'who are you?' },
    };

    it('handles the request when the condition is false, by name', async () => {
      const filter = await filterFrom({ condition: '${false}', failureHandler: 'Denied' }, [denied]);
      const next = recordingHandler();
      const response = await filter.filter(testContext(), withHeader(), next.handler);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="app"');
      expect(await response.entity.text()).toBe('who are you?');
      expect(next.requests).toHaveLength(0);
    });

    it('may be declared inline, and sees the request', async () => {
      const filter = await filterFrom({
        condition: '${false}',
        failureHandler: {
          type: 'StaticResponseHandler',
          config: { status: 302, headers: { Location: ['/login?goto=${request.uri.path}'] } },
        },
      });
      const response = await filter.filter(
        testContext(),
        new Request({ uri: 'http://app/private' }),
        recordingHandler().handler,
      );
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe('/login?goto=/private');
    });

    it('is not used when the condition is true', async () => {
      const filter = await filterFrom({ condition: '${true}', failureHandler: 'Denied' }, [denied]);
      const response = await filter.filter(testContext(), withHeader(), recordingHandler().handler);
      expect(response.status).toBe(200);
    });

    it('refuses a name that is not in the heap', async () => {
      await expect(filterFrom({ condition: '${true}', failureHandler: 'Nowhere' })).rejects.toMatchObject({
        code: 'PORTICO_E_REFERENCE',
      });
    });

    it('refuses a value that is not a reference', async () => {
      await expect(filterFrom({ condition: '${true}', failureHandler: 7 })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.failureHandler' },
      });
    });
  });
});

describe('ConditionEnforcementFilter and lazy maps', () => {
  it('waits for a map still loading that the condition reads', async () => {
    const filter = await filterFrom({ condition: '${attributes.user.active}' });
    const allowed = testContext();
    allowed.attributes.user = loadingMap({ active: true }).map;
    const refused = testContext();
    refused.attributes.user = loadingMap({ active: false }).map;
    const next = recordingHandler();
    expect((await filter.filter(allowed, new Request({ uri: 'http://app/' }), next.handler)).status).toBe(
      200,
    );
    expect((await filter.filter(refused, new Request({ uri: 'http://app/' }), next.handler)).status).toBe(
      403,
    );
    expect(next.requests).toHaveLength(1);
  });
});
