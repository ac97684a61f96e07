import { Request } from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import { instanceWithScripts, startHttpServer, type TestServer } from '@portico/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin, { type ScriptableHandler } from './index.ts';

const FILE = 'routes/scripted.json';

/** A real upstream: answers with the path and the Authorization it received, as JSON. */
let upstream: TestServer;
let url: string;

beforeAll(async () => {
  upstream = await startHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const answer = JSON.stringify({ path: req.url, authorization: req.headers.authorization ?? null });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(answer) });
      res.end(answer);
    });
  });
  url = upstream.url;
});

afterAll(() => upstream.close());

/** A heap with the handler (index 1, after the default ClientHandler) and `more` declared first. */
function scripted(config: unknown, files: Record<string, string> = {}, more: unknown[] = []) {
  const base = instanceWithScripts(files);
  const made = pluginHeap({
    plugins: [plugin],
    file: FILE,
    environment: { baseDirectory: base },
    heap: [
      { name: 'ClientHandler', type: 'ClientHandler' },
      { name: 'Scripted', type: 'ScriptableHandler', config },
      ...more,
    ],
  });
  return { ...made, handler: () => made.heap.get<ScriptableHandler>('Scripted', 'handler') };
}

const js = (source: string | string[]) => ({ type: 'application/javascript', source });

describe('JavaScript port of the corpus Groovy ScriptableHandler, against a real upstream', () => {
  it('IG-Examples 05-oauth2-client-creds: rewrites the path and sends through its clientHandler', async () => {
    // Groovy: request.uri.path = '/oauth2-protected-resource'; return http.send(context, request);
    // with "clientHandler": "oauth2EnabledClientHandler" (there, a Chain whose filter adds the access
    // token; here a handler that adds one and sends through the heap's ClientHandler).
    const oauth2EnabledClientHandler = {
      name: 'oauth2EnabledClientHandler',
      type: 'ScriptableHandler',
      config: js([
        "request.headers.set('Authorization', 'Bearer t0k3n')",
        'return http.send(context, request)',
      ]),
    };
    const { handler, heap } = scripted(
      {
        type: 'application/javascript',
        clientHandler: 'oauth2EnabledClientHandler',
        source: ["request.uri.path = '/oauth2-protected-resource'", 'return http.send(context, request);'],
      },
      {},
      [oauth2EnabledClientHandler],
    );
    const response = await (await handler()).handle(
      testContext(),
      new Request({ uri: `${url}/anything?x=1` }),
    );
    expect(response.status).toBe(200);
    expect(JSON.parse(await response.entity.text())).toEqual({
      path: '/oauth2-protected-resource?x=1',
      authorization: 'Bearer t0k3n',
    });
    await heap.destroy();
  });
});

describe('ScriptableHandler', () => {
  it('answers with the Response the script makes, from a file in the scripts directory', async () => {
    const { handler } = scripted(
      { type: 'application/javascript', file: 'hello.js', args: { greeting: 'Hello, ${request.uri.path}' } },
      { 'hello.js': 'return Response.text(201, greeting);\n' },
    );
    const response = await (await handler()).handle(testContext(), new Request({ uri: 'http://app/ann' }));
    expect(response.status).toBe(201);
    expect(await response.entity.text()).toBe('Hello, /ann');
  });

  it('has no next: an argument may take that name', async () => {
    const { handler } = scripted({ ...js('return Response.text(200, typeof next);'), args: { next: 'arg' } });
    const response = await (await handler()).handle(testContext(), new Request({ uri: 'http://app/' }));
    expect(await response.entity.text()).toBe('string');
  });

  it('sends through the heap ClientHandler when it names no clientHandler', async () => {
    const { handler } = scripted({
      ...js(`return (async () => {
        const answer = await http.send(target + '/side');
        return Response.json(200, { upstream: (await answer.entity.json()).path });
      })();`),
      args: { target: url },
    });
    const response = await (await handler()).handle(testContext(), new Request({ uri: 'http://app/' }));
    expect(JSON.parse(await response.entity.text())).toEqual({ upstream: '/side' });
  });

  it('keeps globals between requests', async () => {
    const { handler } = scripted(
      js('globals.n = (globals.n ?? 0) + 1; return Response.text(200, String(globals.n));'),
    );
    const made = await handler();
    await made.handle(testContext(), new Request({ uri: 'http://app/' }));
    const second = await made.handle(testContext(), new Request({ uri: 'http://app/' }));
    expect(await second.entity.text()).toBe('2');
  });

  it('answers 500 for a script that fails, logged PORTICO_E_SCRIPT with its file and line', async () => {
    const { handler, logger } = scripted(
      { type: 'application/javascript', file: 'broken.js' },
      { 'broken.js': '// a comment\nreturn missing.value;\n' },
    );
    const made = await handler();
    const response = await made.handle(testContext(), new Request({ uri: 'http://app/' }));
    expect(response.status).toBe(500);
    expect(logger.records.find((record) => record.level === 'error')).toMatchObject({
      data: { code: 'PORTICO_E_SCRIPT', at: `${made.scriptFile}:2` },
    });
  });

  it('stops a script that outruns its bound after an await, answering 500', async () => {
    const { handler, logger } = scripted({
      ...js('return http.send(target).then(() => { for (;;) {} });'),
      args: { target: url },
    });
    const response = await (await handler()).handle(testContext(), new Request({ uri: 'http://app/' }));
    expect(response.status).toBe(500);
    expect(logger.records.find((record) => record.level === 'error')?.message).toMatch(/timed out/);
  });

  it('refuses a Groovy script, naming its file and the migration guide', async () => {
    await expect(
      scripted({ type: 'application/x-groovy', file: 'start.groovy' }).handler(),
    ).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      message: expect.stringMatching(/'start\.groovy' is Groovy.*groovy-migration\.md/),
      details: { file: FILE, jsonPath: '$.heap[1].config.type' },
    });
  });
});
