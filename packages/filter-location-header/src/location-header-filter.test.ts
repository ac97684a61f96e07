import { type Context, Request, Response, Uri } from '@portico/gateway-core';
import type { RouterInfo } from '@portico/gateway-core/http-helpers';
import { loadingMap, pluginHeap, recordingHandler, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { type LocationHeaderFilter } from './index.ts';

function heapWith(config: unknown, type = 'LocationHeaderFilter') {
  return pluginHeap({
    plugins: [plugin],
    file: 'routes/redirect.json',
    heap: config === undefined ? [{ name: 'Rewrite', type }] : [{ name: 'Rewrite', type, config }],
  });
}

function filterFrom(config?: unknown, type?: string): Promise<LocationHeaderFilter> {
  return heapWith(config, type).heap.get<LocationHeaderFilter>('Rewrite', 'filter');
}

/** The application answers with a redirect to `location`. */
const redirectingTo = (location: string, status = 302) =>
  recordingHandler(() => new Response({ status, headers: { Location: location, 'Content-Length': '0' } }));

/** A context as a router leaves it: the URI the client asked for, before any baseURI. */
function routed(originalUri: string, parent: Context = testContext()): Context {
  const router: RouterInfo = {
    routeId: 'r',
    routeName: 'r',
    originalUri: Uri.parse(originalUri),
    matchedUri: '',
    remainingUri: '',
    uriTemplateVariables: {},
  };
  return parent.child('router', router);
}

/** The request as a route with a baseURI passes it on: already pointing at the application. */
const toApp = (path = '/') => new Request({ uri: `http://app.internal:8080${path}` });

describe('LocationHeaderFilter', () => {
  describe('baseURI', () => {
    it('rewrites a Location at the application to the base URI, keeping path, query and fragment', async () => {
      const filter = await filterFrom({ baseURI: 'https://gateway.example.com' });
      const next = redirectingTo('http://app.internal:8080/a%2Fb/c%20d?x=a%20b&y=%C3%A9#frag');
      const response = await filter.filter(testContext(), toApp(), next.handler);
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe(
        'https://gateway.example.com/a%2Fb/c%20d?x=a%20b&y=%C3%A9#frag',
      );
    });

    it('keeps the port of the base URI', async () => {
      const filter = await filterFrom({ baseURI: 'http://gateway.example.com:8443' });
      const response = await filter.filter(
        testContext(),
        toApp(),
        redirectingTo('http://app.internal:8080/x').handler,
      );
      expect(response.headers.get('location')).toBe('http://gateway.example.com:8443/x');
    });

    it('is a template evaluated with the request and the response', async () => {
      const filter = await filterFrom({ baseURI: "https://${request.headers['X-Forwarded-Host'][0]}" });
      const request = toApp();
      request.headers.set('X-Forwarded-Host', 'public.example.org');
      const response = await filter.filter(
        testContext(),
        request,
        redirectingTo('http://app.internal:8080/home').handler,
      );
      expect(response.headers.get('location')).toBe('https://public.example.org/home');
    });

    it('default: the scheme, host and port the client originally asked for', async () => {
      const filter = await filterFrom({});
      const context = routed('http://gateway.example.com:9000/start?q=1');
      const response = await filter.filter(
        context,
        toApp(),
        redirectingTo('http://app.internal:8080/login?goto=%2Fx').handler,
      );
      expect(response.headers.get('location')).toBe('http://gateway.example.com:9000/login?goto=%2Fx');
    });

    it('default: the outermost router holds the original URI', async () => {
      const filter = await filterFrom();
      const context = routed('http://inner.example:8081/', routed('https://public.example.org/'));
      const response = await filter.filter(
        context,
        toApp(),
        redirectingTo('http://app.internal:8080/x').handler,
      );
      expect(response.headers.get('location')).toBe('https://public.example.org/x');
    });

    it('default without a router: the request URI as the filter received it', async () => {
      const filter = await filterFrom();
      const request = new Request({ uri: 'https://gateway.example.com/in' });
      // A baseURI further on rebases the request in place, as a route or DispatchHandler does.
      const next = recordingHandler((r) => {
        r.uri = r.uri.rebase(Uri.parse('http://app.internal:8080'));
        return new Response({ status: 303, headers: { Location: 'http://app.internal:8080/done' } });
      });
      const response = await filter.filter(testContext(), request, next.handler);
      expect(response.headers.get('location')).toBe('https://gateway.example.com/done');
    });

    it('evaluating to null: 500, logged, rather than exposing the application', async () => {
      const { heap, logger } = heapWith({ baseURI: '${attributes.missing}' });
      const filter = await heap.get<LocationHeaderFilter>('Rewrite', 'filter');
      const response = await filter.filter(
        testContext(),
        toApp(),
        redirectingTo('http://app.internal:8080/x').handler,
      );
      expect(response.status).toBe(500);
      expect(response.headers.has('location')).toBe(false);
      expect(
        logger.records.some((r) => r.level === 'error' && r.data?.baseURI === '${attributes.missing}'),
      ).toBe(true);
    });

    it('written as plain text, must be an absolute URI', async () => {
      await expect(filterFrom({ baseURI: '/relative' })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: 'routes/redirect.json', jsonPath: '$.heap[0].config.baseURI' },
      });
    });

    it('refuses a template that does not compile', async () => {
      await expect(filterFrom({ baseURI: 'https://${' })).rejects.toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
        details: { jsonPath: '$.heap[0].config.baseURI' },
      });
    });
  });

  describe('which Locations are rewritten', () => {
    const base = { baseURI: 'https://gateway.example.com' };

    it('those of any redirect status', async () => {
      const filter = await filterFrom(base);
      for (const status of [301, 302, 303, 307, 308]) {
        const response = await filter.filter(
          testContext(),
          toApp(),
          redirectingTo('http://app.internal:8080/r', status).handler,
        );
        expect(response.headers.get('location')).toBe('https://gateway.example.com/r');
      }
    });

    it('one that names the default port of the application explicitly, or leaves it out', async () => {
      const filter = await filterFrom(base);
      const request = new Request({ uri: 'http://app.internal/' });
      const response = await filter.filter(
        testContext(),
        request,
        redirectingTo('http://APP.internal:80/r').handler,
      );
      expect(response.headers.get('location')).toBe('https://gateway.example.com/r');
    });

    it('one at the Host a filter set on the request', async () => {
      const filter = await filterFrom(base);
      const request = new Request({ uri: 'http://10.0.0.5:8080/', headers: { Host: 'app.internal:8080' } });
      const response = await filter.filter(
        testContext(),
        request,
        redirectingTo('http://app.internal:8080/r').handler,
      );
      expect(response.headers.get('location')).toBe('https://gateway.example.com/r');
    });

    it('not one pointing elsewhere, such as an identity provider', async () => {
      const filter = await filterFrom(base);
      const idp = 'https://login.example.net/authorize?redirect_uri=http%3A%2F%2Fapp.internal%3A8080%2Fcb';
      const response = await filter.filter(testContext(), toApp(), redirectingTo(idp).handler);
      expect(response.headers.get('location')).toBe(idp);
    });

    it('not one on another port or scheme of the same host', async () => {
      const filter = await filterFrom(base);
      for (const location of ['http://app.internal:9090/x', 'https://app.internal:8080/x']) {
        const response = await filter.filter(testContext(), toApp(), redirectingTo(location).handler);
        expect(response.headers.get('location')).toBe(location);
      }
    });

    it('not a relative one, which already goes through the gateway', async () => {
      const filter = await filterFrom(base);
      const response = await filter.filter(testContext(), toApp(), redirectingTo('/login?x=1').handler);
      expect(response.headers.get('location')).toBe('/login?x=1');
    });

    it('not one that is no URI even to a browser', async () => {
      const filter = await filterFrom(base);
      for (const location of ['http://[bad/x', 'http://app.internal:99999/x']) {
        const response = await filter.filter(testContext(), toApp(), redirectingTo(location).handler);
        expect(response.headers.get('location')).toBe(location);
      }
    });

    it('departs from the incumbents (which leave a Location that is no strict URI alone): one a browser reads as at the application is rebased', async () => {
      const filter = await filterFrom(base);
      const cases = {
        // A network-path reference: the application's own scheme.
        '//app.internal:8080/x?q=1#f': 'https://gateway.example.com/x?q=1#f',
        '//APP.internal:8080': 'https://gateway.example.com/',
        // Browsers read a backslash as a slash in http(s) URLs.
        'http:\\\\app.internal:8080\\x': 'https://gateway.example.com/x',
        '/\\app.internal:8080/x': 'https://gateway.example.com/x',
        '\\\\app.internal:8080/x': 'https://gateway.example.com/x',
        'http:/app.internal:8080/x': 'https://gateway.example.com/x',
        'http:///app.internal:8080/x': 'https://gateway.example.com/x',
        ' http://app.internal:8080/x': 'https://gateway.example.com/x',
        'http://app.internal:8080/a b': 'https://gateway.example.com/a%20b',
        // A browser goes to the application with it, whatever the `@` suggests.
        'http://app.internal:8080\\@evil.example/': 'https://gateway.example.com/@evil.example/',
      };
      for (const [location, expected] of Object.entries(cases)) {
        const response = await filter.filter(testContext(), toApp(), redirectingTo(location).handler);
        expect([location, response.headers.get('location')]).toEqual([location, expected]);
      }
    });

    it('not one a browser reads as elsewhere, nor one relative to the gateway', async () => {
      const filter = await filterFrom(base);
      for (const location of [
        '//evil.example/x',
        'http:\\\\evil.example\\x',
        'http://app.internal:8080@evil.example/',
        'http://evil.example#@app.internal:8080/',
        '//app.internal:9090/x',
        'http:x',
        '/x\\y',
      ]) {
        const response = await filter.filter(testContext(), toApp(), redirectingTo(location).handler);
        expect([location, response.headers.get('location')]).toEqual([location, location]);
      }
    });

    it('a response without a Location passes unchanged', async () => {
      const filter = await filterFrom(base);
      const original = Response.text(200, 'hello');
      const response = await filter.filter(testContext(), toApp(), recordingHandler(() => original).handler);
      expect(response).toBe(original);
      expect(response.headers.has('location')).toBe(false);
    });
  });

  it('is also known as RedirectFilter', async () => {
    const filter = await filterFrom({ baseURI: 'https://gateway.example.com' }, 'RedirectFilter');
    const response = await filter.filter(
      testContext(),
      toApp(),
      redirectingTo('http://app.internal:8080/x').handler,
    );
    expect(response.headers.get('location')).toBe('https://gateway.example.com/x');
  });

  it('may be declared without config, as incumbent heaps do', async () => {
    const filter = await filterFrom(undefined);
    const context = routed('http://gateway.example.com/');
    const response = await filter.filter(
      context,
      toApp(),
      redirectingTo('http://app.internal:8080/x').handler,
    );
    expect(response.headers.get('location')).toBe('http://gateway.example.com/x');
  });

  it('refuses an unknown setting', async () => {
    await expect(filterFrom({ baseUri: 'https://gateway.example.com' })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath: '$.heap[0].config.baseUri' },
    });
  });
});

describe('LocationHeaderFilter and lazy maps', () => {
  it('waits for a map still loading that baseURI reads', async () => {
    const filter = await filterFrom({ baseURI: '${attributes.site.base}' });
    const context = testContext();
    context.attributes.site = loadingMap({ base: 'https://tenant.example.com' }).map;
    const response = await filter.filter(
      context,
      toApp(),
      redirectingTo('http://app.internal:8080/x').handler,
    );
    expect(response.headers.get('location')).toBe('https://tenant.example.com/x');
  });
});
