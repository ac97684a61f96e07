import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * ScriptableFilter and ScriptableHandler in the real `portico start`: a script file read from the
 * instance's `scripts/` directory, an inline one, and a script that fails or loops answering 500
 * while the gateway goes on serving.
 */
describe('scriptable filters and handlers, through portico start', () => {
  let upstream: Upstream;
  let gw: RunningGateway;

  beforeAll(async () => {
    upstream = await startUpstream();
    const base = instanceDirectory({
      'scripts/com/example/tag.js': [
        "request.headers.set('X-Tagged-By', tagger);",
        'return next.handle(context, request).then((response) => {',
        "  response.headers.set('X-Seen', String(globals.seen = (globals.seen ?? 0) + 1));",
        '  return response;',
        '});',
      ].join('\n'),
      'config/routes/tagged.json': {
        name: 'tagged',
        condition: "${request.uri.path == '/tagged'}",
        baseURI: upstream.url,
        handler: {
          type: 'Chain',
          config: {
            filters: [
              {
                type: 'ScriptableFilter',
                config: {
                  type: 'application/javascript',
                  file: 'com/example/tag.js',
                  args: { tagger: "${request.headers['X-Who'][0]}" },
                },
              },
            ],
            handler: 'ReverseProxyHandler',
          },
        },
      },
      'config/routes/answered.json': {
        name: 'answered',
        condition: "${request.uri.path == '/answered'}",
        handler: {
          type: 'ScriptableHandler',
          config: {
            type: 'application/javascript',
            source: ['return Response.json(200, { method: request.method, query: request.uri.query });'],
          },
        },
      },
      'config/routes/looping.json': {
        name: 'looping',
        condition: "${request.uri.path == '/looping'}",
        handler: {
          type: 'ScriptableHandler',
          config: { type: 'application/javascript', source: 'for (;;) {}' },
        },
      },
    });
    gw = await startGateway({ base, env: { NODE_OPTIONS: '--conditions=portico-source' } });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
  });

  it('runs a script file of scripts/, with args evaluated per request and globals kept', async () => {
    const first = await send(`${gw.url}/tagged`, { headers: { 'X-Who': 'ann' } });
    const second = await send(`${gw.url}/tagged`, { headers: { 'X-Who': 'bob' } });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(upstream.received.map((request) => request.headers['x-tagged-by'])).toEqual(['ann', 'bob']);
    expect([first.headers['x-seen'], second.headers['x-seen']]).toEqual(['1', '2']);
  });

  it('answers with an inline handler script', async () => {
    const reply = await send(`${gw.url}/answered?a=1`, { method: 'POST' });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({ method: 'POST', query: 'a=1' });
  });

  it('stops a looping script with 500 and no detail, logs PORTICO_E_SCRIPT, and keeps serving', async () => {
    const reply = await send(`${gw.url}/looping`);
    expect(reply.status).toBe(500);
    expect(reply.text).toBe('');
    expect(gw.output()).toMatch(/PORTICO_E_SCRIPT/);
    expect((await send(`${gw.url}/answered`)).status).toBe(200);
  });
});
