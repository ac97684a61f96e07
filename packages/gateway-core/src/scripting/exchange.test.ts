import { describe, expect, it } from 'vitest';
import { Context } from '../context/context.ts';
import { Request, Response } from '../http/message.ts';
import { createMemoryLogger } from '../logging.ts';
import {
  boundedGlobals,
  EXCHANGE_BINDINGS,
  ExchangeScript,
  groovyDeclarations,
  MAX_GLOBALS,
  scriptLine,
  scriptTypeProblem,
} from './exchange.ts';
import { compileScript } from './script.ts';

const unreachable = async () => {
  throw new Error('no client in this test');
};

async function exchangeScript(source: string, maxGlobals?: number) {
  const script = await compileScript(
    { type: 'application/javascript', source },
    {
      scriptsDirectory: '.',
      parameters: EXCHANGE_BINDINGS,
      configFile: 'routes/r.json',
      jsonPath: '$.handler.config',
    },
  );
  const logger = createMemoryLogger();
  return { exchange: new ExchangeScript(script, {}, unreachable, logger, maxGlobals), logger };
}

describe('exchange scripts', () => {
  it(`keep at most ${MAX_GLOBALS} globals by default (departure 86); one more fails the run, until one is deleted`, async () => {
    expect(MAX_GLOBALS).toBe(100_000);
    const { exchange, logger } = await exchangeScript(
      `if (request.method === 'DELETE') delete globals.k0;
      else globals[request.headers.get('X-Key')] = true;
      return Response.empty(200);`,
      3,
    );
    const run = (method: string, key = '') =>
      exchange.run(new Context(), new Request({ method, uri: 'http://app/', headers: { 'X-Key': key } }));
    for (const key of ['k0', 'k1', 'k2', 'k2']) expect((await run('POST', key)).status).toBe(200);
    expect((await run('POST', 'k3')).status).toBe(500);
    expect(logger.records.at(-1)?.message).toContain('globals holds 3 entries');
    expect((await run('DELETE')).status).toBe(200);
    expect((await run('POST', 'k3')).status).toBe(200);
  });

  it('bounded globals count entries added and deleted', () => {
    const globals = boundedGlobals(2);
    globals.a = 1;
    globals.a = 2;
    globals.b = 1;
    expect(() => {
      globals.c = 1;
    }).toThrow(/holds 2 entries/);
    delete globals.a;
    globals.c = 1;
    expect(Object.keys(globals)).toEqual(['b', 'c']);
  });

  it('name the line of the script an error comes from, not the gateway’s', () => {
    const error = new Error('x');
    error.stack =
      'Error: x\n    at f (/gateway/a.js:10:2)\n    at routes/r.json#$.source:3:7\n    at routes/r.json#$.source:9:1';
    expect(scriptLine(error, 'routes/r.json#$.source')).toBe('routes/r.json#$.source:3');
    expect(scriptLine(error, 'other.js')).toBeUndefined();
    expect(scriptLine(null, 'other.js')).toBeUndefined();
  });

  it('refuse Groovy naming its file or the inline source, and other types', () => {
    expect(scriptTypeProblem({ type: 'application/javascript' })).toBeUndefined();
    expect(scriptTypeProblem({ type: ' Application/X-Groovy ', file: 'a/b.groovy' })).toMatch(
      /^the script 'a\/b\.groovy' is Groovy .*docs\/groovy-migration\.md/,
    );
    expect(scriptTypeProblem({ type: 'application/x-groovy' })).toMatch(/^the inline source is Groovy/);
    expect(scriptTypeProblem({ type: 'text/lua' })).toMatch(/'text\/lua' are not supported/);
  });

  it('answer what the script returns when it is a Response', async () => {
    const { exchange } = await exchangeScript('return Response.text(202, request.uri.path);');
    const response = await exchange.run(new Context(), new Request({ uri: 'http://app/p' }));
    expect(response).toBeInstanceOf(Response);
    expect(await response.entity.text()).toBe('/p');
  });

  it('find every Groovy declaration in a file, at any depth, with its JSON path', () => {
    const json = {
      heap: [
        { type: 'Unknown', config: { 'odd-key': [{ type: 'application/x-groovy', file: 'a.groovy' }] } },
      ],
      handler: { type: 'ScriptableHandler', config: { type: 'APPLICATION/X-GROOVY', source: 'x' } },
      other: { type: 'application/x-groovy' },
    };
    expect(groovyDeclarations(json, 'routes/r.json').map((p) => [p.details.jsonPath, p.message])).toEqual([
      ['$.heap[0].config["odd-key"][0].type', expect.stringMatching(/^the script 'a\.groovy' is Groovy/)],
      ['$.handler.config.type', expect.stringMatching(/^the inline source is Groovy/)],
    ]);
  });
});
