import type http from 'node:http';
import { type Handler, Request, type Response } from '@portico/gateway-core';
import { pluginHeap, recordingHandler, testContext } from '@portico/gateway-core/testing';
import { instanceWithScripts, startHttpServer, type TestServer } from '@portico/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin, { type ScriptableFilter } from './index.ts';

const FILE = 'routes/scripted.json';

/** A real upstream: answers with what it received, after `?delay=` milliseconds. */
let upstream: TestServer;
let url: string;
const received: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  upstream = await startHttpServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const delay = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('delay') ?? 0);
      setTimeout(() => {
        const answer = JSON.stringify({ path: req.url, user: req.headers['x-user'] ?? null });
        res.writeHead(200, {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(answer),
        });
        res.end(answer);
      }, delay);
    });
  });
  url = upstream.url;
});

afterAll(() => upstream.close());

/** A heap whose scripts directory holds `files`, with a chain of the filter to a ReverseProxyHandler. */
function scripted(config: unknown, files: Record<string, string> = {}, more: unknown[] = []) {
  const base = instanceWithScripts(files);
  const made = pluginHeap({
    plugins: [plugin],
    file: FILE,
    environment: { baseDirectory: base },
    properties: { frConfigs: { amRealm: 'alpha' } },
    heap: [
      // The default the gateway's admin heap declares.
      { name: 'ClientHandler', type: 'ClientHandler' },
      ...more,
      { name: 'Scripted', type: 'ScriptableFilter', config },
      { name: 'Proxy', type: 'ReverseProxyHandler' },
      { name: 'Chain', type: 'Chain', config: { filters: ['Scripted'], handler: 'Proxy' } },
    ],
  });
  return {
    ...made,
    filter: () => made.heap.get<ScriptableFilter>('Scripted', 'filter'),
    chain: () => made.heap.get<Handler>('Chain', 'handler'),
  };
}

const js = (source: string | string[]) => ({ type: 'application/javascript', source });

async function body(response: Response): Promise<unknown> {
  return JSON.parse(await response.entity.text());
}

describe('JavaScript ports of the corpus Groovy ScriptableFilters, against a real upstream', () => {
  it('forgeops admin.json, the no-op filter: passes the request on unchanged', async () => {
    // Groovy: return next.handle(context, request)
    const { chain, heap } = scripted(js(['return next.handle(context, request)']));
    const response = await (await chain()).handle(testContext(), new Request({ uri: `${url}/api/info` }));
    expect(response.status).toBe(200);
    expect(await body(response)).toEqual({ path: '/api/info', user: null });
    await heap.destroy();
  });

  it('IG-Examples 04-oauth-rs-jwt-tokeninfo "CurrentTime": sets attributes.now and exp, in seconds', async () => {
    // Groovy: def now = System.currentTimeMillis()/1000; attributes.now = now;
    //         attributes.exp = now + 5; return next.handle(context, request)
    const { chain, heap } = scripted(
      js([
        'const now = Date.now() / 1000',
        'attributes.now = now',
        'attributes.exp = now + 5',
        'return next.handle(context, request)',
      ]),
    );
    const context = testContext();
    const before = Date.now() / 1000;
    const response = await (await chain()).handle(context, new Request({ uri: `${url}/token` }));
    expect(response.status).toBe(200);
    const now = context.attributes.now as number;
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now() / 1000);
    expect(context.attributes.exp).toBe(now + 5);
    await heap.destroy();
  });

  it('openig_examples short.json "CaptureTokenInfo": logs the token info and the URI, keeps the query', async () => {
    // Groovy (OpenIG 3, exchange-style): logger.info(exchange.token.info.toString());
    //   logger.info('requesturlis ' + exchange.request.uri); exchange.queryUrl = exchange.request.uri.query;
    //   next.handle(exchange)
    const { chain, heap, logger } = scripted(
      js(`logger.info(JSON.stringify(contexts.oauth2?.accessToken?.info ?? null));
          logger.info('requesturlis ' + request.uri);
          attributes.queryUrl = request.uri.query;
          return next.handle(context, request);`),
    );
    const context = testContext().child('oauth2', {
      accessToken: { info: { cn: 'ann', mail: 'ann@example.com' } },
    });
    const response = await (await chain()).handle(
      context,
      new Request({ uri: `${url}/short?url=x.example` }),
    );
    expect(response.status).toBe(200);
    expect(context.attributes.queryUrl).toBe('url=x.example');
    const messages = logger.records
      .filter((record) => record.level === 'info')
      .map((record) => record.message);
    expect(messages).toContain('{"cn":"ann","mail":"ann@example.com"}');
    expect(messages).toContain(`requesturlis ${url}/short?url=x.example`);
    await heap.destroy();
  });
});

describe('the idioms of the Groovy migration guide, in JavaScript', () => {
  it('header, query and form access, JSON bodies, http.send and Response construction', async () => {
    const { chain, heap } = scripted({
      ...js(`return (async () => {
        const form = await request.entity.form();
        if (request.headers.has('X-Refuse')) return Response.text(403, 'Forbidden');
        request.headers.set('X-User', form.user?.[0]);
        request.headers.add('X-Seen', 'a');
        request.headers.add('X-Seen', 'b');
        request.headers.delete('X-Drop');
        attributes.all = { q: request.queryParams.q?.[0], merged: request.form.user?.[0], seen: request.headers.getAll('X-Seen') };
        const side = await http.send(new Request({ method: 'POST', uri: target + '/side', headers: { 'X-User': 'side' }, entity: 'x' }));
        const { user } = await side.entity.json();
        const response = await next.handle(context, request);
        const upstream = await response.entity.json();
        return Response.json(200, { upstream, side: user });
      })();`),
      args: { target: url },
    });
    const made = await chain();
    const context = testContext();
    const response = await made.handle(
      context,
      new Request({
        method: 'POST',
        uri: `${url}/form?q=1`,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Drop': 'me' },
        entity: 'user=ann&x=2',
      }),
    );
    expect(await body(response)).toEqual({ upstream: { path: '/form?q=1', user: 'ann' }, side: 'side' });
    expect(context.attributes.all).toEqual({ q: '1', merged: 'ann', seen: ['a', 'b'] });
    const last = received.at(-1);
    expect(last).toMatchObject({ method: 'POST', body: 'user=ann&x=2' });
    expect(last?.headers['x-drop']).toBeUndefined();
    const refused = await made.handle(
      testContext(),
      new Request({ method: 'POST', uri: `${url}/form`, headers: { 'X-Refuse': '1' }, entity: '' }),
    );
    expect(refused.status).toBe(403);
    await heap.destroy();
  });
});

describe('ScriptableFilter fields', () => {
  it('type: refuses application/x-groovy, naming the script file and the migration guide', async () => {
    const { filter } = scripted({ type: 'application/x-groovy', file: 'language.groovy' });
    await expect(filter()).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      message: expect.stringMatching(/'language\.groovy' is Groovy.*docs\/groovy-migration\.md/),
      details: {
        file: FILE,
        jsonPath: '$.heap[1].config.type',
        expected: expect.stringContaining('application/javascript'),
      },
    });
  });

  it('type: refuses an inline Groovy source, saying it is the inline source', async () => {
    const { filter } = scripted({
      type: 'application/x-groovy',
      source: ['return next.handle(context, request)'],
    });
    await expect(filter()).rejects.toMatchObject({
      message: expect.stringMatching(/the inline source is Groovy/),
      details: { jsonPath: '$.heap[1].config.type' },
    });
  });

  it('type: refuses other types and a missing one', async () => {
    await expect(scripted({ type: 'text/python', source: 'x' }).filter()).rejects.toMatchObject({
      message: expect.stringContaining("'text/python' are not supported"),
    });
    await expect(scripted({ source: 'x' }).filter()).rejects.toMatchObject({
      details: { jsonPath: '$.heap[1].config.type' },
    });
  });

  it('source: a string, or an array of lines joined with line breaks (line numbers as written)', async () => {
    const { filter, logger } = scripted(js(['const a = 1;', 'null.fails;']));
    const response = await (await filter()).filter(
      testContext(),
      new Request({ uri: 'http://app/' }),
      recordingHandler().handler,
    );
    expect(response.status).toBe(500);
    expect(logger.records.find((record) => record.level === 'error')?.data).toMatchObject({
      at: `${FILE}#$.heap[1].config.source:2`,
    });
  });

  it('file: read relative to the scripts directory, package subdirectories included', async () => {
    const { filter } = scripted(
      { type: 'application/javascript', file: 'com/example/tag.js' },
      {
        'com/example/tag.js':
          "request.headers.set('X-Tag', 'tagged');\nreturn next.handle(context, request);\n",
      },
    );
    const next = recordingHandler();
    await (await filter()).filter(testContext(), new Request({ uri: 'http://app/' }), next.handler);
    expect(next.requests[0]?.headers.get('X-Tag')).toBe('tagged');
  });

  it('file: one that cannot be read is a load error at its JSON path', async () => {
    await expect(
      scripted({ type: 'application/javascript', file: 'missing.js' }).filter(),
    ).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: FILE, jsonPath: '$.heap[1].config.file' },
    });
  });

  it('file and source: exactly one of them', async () => {
    await expect(scripted({ type: 'application/javascript' }).filter()).rejects.toMatchObject({
      message: expect.stringContaining('exactly one of file and source'),
    });
    await expect(
      scripted({ type: 'application/javascript', file: 'a.js', source: 'x' }).filter(),
    ).rejects.toMatchObject({ details: { jsonPath: '$.heap[1].config.source' } });
  });

  it('source: a syntax error is a load error naming the file and JSON path', async () => {
    await expect(scripted(js('return (;')).filter()).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: FILE, jsonPath: '$.heap[1].config.source' },
    });
  });

  it('args: strings are expressions evaluated per request; other values as written', async () => {
    const { filter } = scripted({
      ...js('attributes.seen = [user, realm, limit, list]; return next.handle(context, request);'),
      args: { user: "${request.headers['X-User'][0]}", realm: '${frConfigs.amRealm}', limit: 3, list: ['a'] },
    });
    const made = await filter();
    for (const user of ['ann', 'bob']) {
      const context = testContext();
      await made.filter(
        context,
        new Request({ uri: 'http://app/', headers: { 'X-User': user } }),
        recordingHandler().handler,
      );
      expect(context.attributes.seen).toEqual([user, 'alpha', 3, ['a']]);
    }
  });

  it('args: a name that would hide a binding, or is no JavaScript name, is refused at its path', async () => {
    await expect(scripted({ ...js('return null'), args: { next: 1 } }).filter()).rejects.toMatchObject({
      message: expect.stringContaining("'next' would hide the binding"),
      details: { jsonPath: '$.heap[1].config.args.next' },
    });
    await expect(scripted({ ...js('return null'), args: { 'a-b': 1 } }).filter()).rejects.toMatchObject({
      details: { jsonPath: '$.heap[1].config.args["a-b"]' },
    });
    await expect(
      scripted({ ...js('return null'), args: { bad: '${unclosed' } }).filter(),
    ).rejects.toMatchObject({
      code: 'PORTICO_E_EXPRESSION',
    });
  });

  it('clientHandler: http sends through it, and through the heap ClientHandler without it', async () => {
    const tagging = {
      name: 'Tagging',
      type: 'Chain',
      config: {
        filters: [
          {
            type: 'ScriptableFilter',
            config: js("request.headers.set('X-User', 'via-client'); return next.handle(context, request);"),
          },
        ],
        handler: 'ClientHandler',
      },
    };
    const source = `return (async () => {
      const answer = await http.send(new Request({ uri: target + '/side' }));
      const seen = await answer.entity.json();
      return Response.json(200, seen);
    })();`;
    const through = scripted({ ...js(source), args: { target: url }, clientHandler: 'Tagging' }, {}, [
      tagging,
    ]);
    const response = await (await through.filter()).filter(
      testContext(),
      new Request({ uri: 'http://app/' }),
      recordingHandler().handler,
    );
    expect(await body(response)).toMatchObject({ user: 'via-client' });
    const plain = scripted({ ...js(source), args: { target: url } });
    const answered = await (await plain.filter()).filter(
      testContext(),
      new Request({ uri: 'http://app/' }),
      recordingHandler().handler,
    );
    expect(await body(answered)).toEqual({ path: '/side', user: null });
  });

  it('clientHandler: a reference to nothing is refused at its path', async () => {
    await expect(scripted({ ...js('return null'), clientHandler: 'Nowhere' }).filter()).rejects.toMatchObject(
      {
        code: 'PORTICO_E_REFERENCE',
        details: { jsonPath: '$.heap[1].config.clientHandler' },
      },
    );
  });
});

describe('ScriptableFilter bindings', () => {
  it('request, context, contexts, attributes, session, logger and next', async () => {
    const { filter, logger } = scripted(
      js(`logger.info('seen ' + request.method + ' ' + request.uri.path);
          attributes.client = contexts.client.remoteAddress;
          session.visits = (session.visits ?? 0) + 1;
          attributes.same = context.attributes === attributes;
          return next.handle(context, request).then((response) => {
            response.headers.set('X-Visits', String(session.visits));
            return response;
          });`),
    );
    const session: Record<string, unknown> = { visits: 2 };
    const context = testContext({ session, client: { remoteAddress: '192.0.2.7' } });
    const response = await (await filter()).filter(
      context,
      new Request({ method: 'POST', uri: 'http://app/x' }),
      recordingHandler().handler,
    );
    expect(response.headers.get('X-Visits')).toBe('3');
    expect(session.visits).toBe(3);
    expect(context.attributes).toMatchObject({ client: '192.0.2.7', same: true });
    expect(logger.records.map((record) => record.message)).toContain('seen POST /x');
  });

  it('globals: one object per filter, kept between requests', async () => {
    const { filter } = scripted(
      js('globals.count = (globals.count ?? 0) + 1; return Response.text(200, String(globals.count));'),
    );
    const made = await filter();
    const answers: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await made.filter(
        testContext(),
        new Request({ uri: 'http://app/' }),
        recordingHandler().handler,
      );
      answers.push(await response.entity.text());
    }
    expect(answers).toEqual(['1', '2', '3']);
    const other = await scripted(
      js('globals.count = (globals.count ?? 0) + 1; return Response.text(200, String(globals.count));'),
    ).filter();
    const response = await other.filter(
      testContext(),
      new Request({ uri: 'http://app/' }),
      recordingHandler().handler,
    );
    expect(await response.entity.text()).toBe('1');
  });

  it('Response and Request: a script answers without calling next', async () => {
    const { filter } = scripted(
      js("return new Response({ status: 403, headers: { 'X-Why': 'refused' }, entity: 'no' });"),
    );
    const next = recordingHandler();
    const response = await (await filter()).filter(
      testContext(),
      new Request({ uri: 'http://app/' }),
      next.handler,
    );
    expect(response.status).toBe(403);
    expect(response.headers.get('X-Why')).toBe('refused');
    expect(await response.entity.text()).toBe('no');
    expect(next.requests).toHaveLength(0);
  });
});

describe('ScriptableFilter errors', () => {
  const failing = async (source: string) => {
    const { filter, logger } = scripted(js(source));
    const response = await (await filter()).filter(
      testContext(),
      new Request({ uri: 'http://app/' }),
      recordingHandler().handler,
    );
    const error = logger.records.find((record) => record.level === 'error');
    return { response, error };
  };

  it('a throw answers 500 without internals, logged as PORTICO_E_SCRIPT with the file and line', async () => {
    const { response, error } = await failing("const a = 1;\nthrow new Error('secret detail');");
    expect(response.status).toBe(500);
    expect(await response.entity.text()).toBe('');
    expect(error).toMatchObject({
      message: expect.stringContaining('secret detail'),
      data: { code: 'PORTICO_E_SCRIPT', at: `${FILE}#$.heap[1].config.source:2` },
    });
  });

  it('a rejection after an await is logged with its line too', async () => {
    const { response, error } = await failing(
      "return (async () => {\n  await next.handle(context, request);\n  throw new TypeError('late');\n})();",
    );
    expect(response.status).toBe(500);
    expect(error).toMatchObject({
      data: { code: 'PORTICO_E_SCRIPT', at: `${FILE}#$.heap[1].config.source:3` },
    });
  });

  it('a result that is not a Response answers 500', async () => {
    for (const source of ['return null;', 'return { status: 200 };', 'return 200;']) {
      const { response, error } = await failing(source);
      expect(response.status).toBe(500);
      expect(error?.message).toMatch(/a script returns a Response/);
    }
  });
});

describe('ScriptableFilter time bound', () => {
  it.each([
    ['a loop', 'for (;;) {}'],
    [
      'a script that awaits http and then loops forever',
      'return (async () => { await http.send(target + "/first"); for (;;) {} })();',
    ],
  ])('stops %s and answers 500, coded', async (_, source) => {
    const { filter, logger } = scripted({ ...js(source), args: { target: url } });
    const response = await (await filter()).filter(
      testContext(),
      new Request({ uri: 'http://app/' }),
      recordingHandler().handler,
    );
    expect(response.status).toBe(500);
    expect(logger.records.find((record) => record.level === 'error')).toMatchObject({
      message: expect.stringContaining('timed out'),
      data: { code: 'PORTICO_E_SCRIPT' },
    });
  });

  it('does not count the upstream time: a slow upstream is no timeout', async () => {
    const { chain } = scripted(js('return next.handle(context, request);'));
    const response = await (await chain()).handle(
      testContext(),
      new Request({ uri: `${url}/slow?delay=1300` }),
    );
    expect(response.status).toBe(200);
  });

  it('a slow continuation does not eat the next request’s budget', async () => {
    // Each request spends 700 ms of its 1 s bound after the upstream answered. Both answers come
    // back at about the same time; run by one evaluation, the two continuations would take 1.4 s.
    const { chain } = scripted(
      js(`return next.handle(context, request).then((response) => {
        const until = Date.now() + 700;
        while (Date.now() < until) {}
        return response;
      });`),
    );
    const made = await chain();
    const responses = await Promise.all([
      made.handle(testContext(), new Request({ uri: `${url}/a?delay=50` })),
      made.handle(testContext(), new Request({ uri: `${url}/b?delay=50` })),
    ]);
    expect(responses.map((response) => response.status)).toEqual([200, 200]);
  });

  it('a continuation of a request that was answered never runs in a later request', async () => {
    const { chain } = scripted({
      ...js(`if (attributes.first) {
          http.send(target + '/late?delay=50').then(() => { globals.late = true; for (;;) {} });
          return Response.text(200, 'first');
        }
        return Response.text(200, globals.late ? 'late ran' : 'clean');`),
      args: { target: url },
    });
    const made = await chain();
    const first = await made.handle(
      testContext({ attributes: { first: true } }),
      new Request({ uri: 'http://app/' }),
    );
    expect(await first.entity.text()).toBe('first');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = await made.handle(testContext(), new Request({ uri: 'http://app/' }));
    expect(await second.entity.text()).toBe('clean');
  });
});
