import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compile, Request, Response } from '@portico/gateway-core';
import { describe, expect, it } from 'vitest';
import { evalCommand } from './eval.ts';
import { modelBindings } from './eval-bindings.ts';
import { UsageError } from './output.ts';

const FILE = 'bindings.json';

/** Evaluates `text` against bindings given as plain JSON, as `portico eval --bindings` reads them. */
const evaluate = (text: string, plain: Record<string, unknown>) =>
  compile(text).evaluate(modelBindings(plain, FILE));

describe('portico eval --bindings: request and response as a route sees them', () => {
  const plain = {
    request: {
      method: 'post',
      uri: 'http://x/a/b?b=1&b=2',
      headers: { 'X-Token': 'abc', Accept: ['text/html', 'application/json'] },
      entity: { user: 'alice' },
    },
    response: { status: 302, reason: 'Found', headers: { Location: '/next' }, entity: 'moved' },
    attributes: { user: 'bob' },
  };

  it.each([
    ['${request.uri.path}', '/a/b'],
    ['${request.uri.host}', 'x'],
    ['${request.method}', 'POST'],
    ["${request.queryParams['b'][1]}", '2'],
    ["${request.headers['x-token'][0]}", 'abc'],
    ["${request.headers['ACCEPT'][1]}", 'application/json'],
    ['${request.entity.json.user}', 'alice'],
    ['${exchange.request.uri.path}', '/a/b'],
    ['${response.status.code}', 302],
    ['${response.status.reasonPhrase}', 'Found'],
    ["${response.headers['location'][0]}", '/next'],
    ['${response.entity.string}', 'moved'],
    ['${attributes.user}', 'bob'],
  ])('%s is %j', (text, expected) => {
    expect(evaluate(text, plain)).toEqual(expected);
  });

  it('builds the model objects, and a URI from its parts', () => {
    const bindings = modelBindings({ request: { uri: { path: '/p', query: 'q=1', host: 'h' } } }, FILE);
    expect(bindings.request).toBeInstanceOf(Request);
    expect((bindings.request as Request).uri.toString()).toBe('http://h/p?q=1');
    expect(modelBindings({ response: {} }, FILE).response).toBeInstanceOf(Response);
  });

  it.each([
    [{ request: 'GET /' }, '$.request', 'a JSON object'],
    [{ request: { uri: 'http://x/a b' } }, '$.request.uri', ''],
    [{ request: { method: 7 } }, '$.request.method', 'an HTTP method'],
    [{ request: { headers: { 'X-A': { nested: true } } } }, '$.request.headers.X-A', 'a string, or an array'],
    [{ response: { status: 1000 } }, '$.response.status', 'a status from 100 to 599'],
  ])('%j is refused at %s', (given, at, expected) => {
    expect(() => modelBindings(given, FILE)).toThrow(UsageError);
    expect(() => modelBindings(given, FILE)).toThrow(`${FILE} ${at}: expected ${expected}`);
  });
});

describe('portico eval: names no expression knows', () => {
  async function run(argv: string[]) {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const code = await evalCommand(argv, { stdout: (t) => stdout.push(t), stderr: (t) => stderr.push(t) });
    return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
  }

  it('warns about a misspelt name, once, with its column', async () => {
    const result = await run(['${requst.method} ${requst.uri}']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('" "');
    expect(result.stderr.match(/'requst' \(column 3\) is no name an expression knows here/g)).toHaveLength(1);
    expect(result.stderr).toContain("'requst' (column 20)");
  });

  // Only the first of an expression's problems was printed (its JSON form leaves out the cause).
  it('prints every problem of an expression that has several, as a list', async () => {
    const result = await run(["${'a'.split('(')}${'b'.replaceAll('[', 'c')}"]);
    expect(result.code).toBe(2);
    const problems = JSON.parse(result.stderr);
    expect(problems).toEqual([
      expect.objectContaining({ code: 'PORTICO_E_EXPRESSION' }),
      expect.objectContaining({ code: 'PORTICO_E_EXPRESSION' }),
    ]);
    expect(problems[0].message).not.toBe(problems[1].message);
    const one = JSON.parse((await run(["${'a'.split('(')}"])).stderr);
    expect(one).toMatchObject({ code: 'PORTICO_E_EXPRESSION' });
  });

  it('knows the run-time names, exchange, the implicit objects and the file’s own bindings', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-eval-'));
    const file = path.join(dir, 'bindings.json');
    writeFileSync(file, JSON.stringify({ request: { uri: '/a' }, token: 't' }));
    const result = await run([
      "${exchange.request.uri.path}${token}${env['HOME'] != null}${system['user.dir'] != null}${now.epochSeconds > 0}${empty session}${contexts}${attributes}",
      '--bindings',
      file,
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
  });
});
