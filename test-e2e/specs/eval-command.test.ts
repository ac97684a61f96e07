import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPortico } from '../support/portico.ts';

describe('portico eval (the real command)', () => {
  it('prints the typed result of an expression as JSON', async () => {
    const result = await runPortico(['eval', '${1 + 2 * 3}']);
    expect(result).toMatchObject({ code: 0 });
    expect(JSON.parse(result.stdout)).toBe(7);
  });

  it('evaluates against a bindings file', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-eval-'));
    const file = path.join(dir, 'bindings.json');
    writeFileSync(
      file,
      JSON.stringify({ request: { method: 'GET', uri: { path: '/api/v1' } }, attributes: { user: 'alice' } }),
    );
    const condition = "${matches(request.uri.path, '^/api/') and request.method == 'GET'}";
    const result = await runPortico(['eval', condition, '--bindings', file, '--type', 'boolean']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toBe(true);
    const template = await runPortico(['eval', 'Hello ${attributes.user}', '--bindings', file]);
    expect(JSON.parse(template.stdout)).toBe('Hello alice');
  });

  it('builds a real request and response from the bindings: a parsed URI, headers without regard to case, entities', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-eval-'));
    const file = path.join(dir, 'bindings.json');
    writeFileSync(
      file,
      JSON.stringify({
        request: {
          method: 'GET',
          uri: 'http://x/a?b=1',
          headers: { 'X-Token': 'abc', accept: ['text/html', 'application/json'] },
          entity: { user: 'alice' },
        },
        response: { status: 404, headers: { 'Content-Type': 'text/plain' }, entity: 'gone' },
      }),
    );
    const cases: [string, unknown][] = [
      ['${request.uri.path}', '/a'],
      ['${request.uri.host}', 'x'],
      ["${request.queryParams['b'][0]}", '1'],
      ["${request.headers['x-token'][0]}", 'abc'],
      ["${request.headers['ACCEPT'][1]}", 'application/json'],
      ['${request.entity.json.user}', 'alice'],
      ['${response.status.code}', 404],
      ["${response.headers['content-type'][0]}", 'text/plain'],
      ['${response.entity.string}', 'gone'],
    ];
    for (const [expression, expected] of cases) {
      const result = await runPortico(['eval', expression, '--bindings', file]);
      expect({ expression, code: result.code, value: JSON.parse(result.stdout) }).toEqual({
        expression,
        code: 0,
        value: expected,
      });
    }
  });

  it('says where a request in the bindings is malformed', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-eval-'));
    const file = path.join(dir, 'bindings.json');
    writeFileSync(file, JSON.stringify({ request: { uri: 'http://x/a b' } }));
    const result = await runPortico(['eval', '${request.uri.path}', '--bindings', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(`^PORTICO_E_USAGE: ${file} \\$\\.request\\.uri: expected .*\n$`),
    );
  });

  it('says in one line, without the usage text, where bindings JSON is malformed (a file, or given inline)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-eval-'));
    const file = path.join(dir, 'bindings.json');
    writeFileSync(file, '{\n  "request": { "uri": "/a" }\n  "attributes": {}\n}\n');
    const result = await runPortico(['eval', '${request.uri.path}', '--bindings', file]);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `PORTICO_E_USAGE: --bindings ${file}: malformed JSON at line 3, column 3: unexpected character '"' (expected ',' or '}')\n`,
    });
    const inline = await runPortico([
      'eval',
      '${attributes.user}',
      '--bindings',
      '{"attributes": {"user": "alice"',
    ]);
    expect(inline).toEqual({
      code: 2,
      stdout: '',
      stderr:
        "PORTICO_E_USAGE: --bindings: malformed JSON at line 1, column 32: unexpected end of file (expected ',' or '}')\n",
    });
    const good = await runPortico([
      'eval',
      '${attributes.user}',
      '--bindings',
      '{"attributes": {"user": "alice"}}',
    ]);
    expect(good.code).toBe(0);
    expect(JSON.parse(good.stdout)).toBe('alice');
  });

  it('says which name no expression knows, and reads exchange as OpenIG 3 and 4 did', async () => {
    const typo = await runPortico(['eval', '${requst.method}']);
    expect(typo.code).toBe(0);
    expect(JSON.parse(typo.stdout)).toBeNull();
    expect(typo.stderr).toContain("'requst' (column 3) is no name an expression knows here");
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-eval-'));
    const file = path.join(dir, 'bindings.json');
    writeFileSync(file, JSON.stringify({ request: { uri: 'http://x/a?b=1', headers: { 'X-A': 'v' } } }));
    const exchange = await runPortico([
      'eval',
      "${exchange.request.uri.path}|${exchange.request.headers['x-a'][0]}",
      '--bindings',
      file,
    ]);
    expect({ code: exchange.code, value: JSON.parse(exchange.stdout), stderr: exchange.stderr }).toEqual({
      code: 0,
      value: '/a|v',
      stderr: '',
    });
  });

  it('reads environment variables and -D system properties', async () => {
    const result = await runPortico(['eval', "${env['PORTICO_E2E']}-${system['my.prop']}", '-Dmy.prop=cli'], {
      env: { PORTICO_E2E: 'env' },
    });
    expect(JSON.parse(result.stdout)).toBe('env-cli');
  });

  it('converts to the requested type', async () => {
    const result = await runPortico(['eval', "${'42'}", '--type', 'integer']);
    expect(JSON.parse(result.stdout)).toBe(42);
  });

  it('exits 2 with the coded error on a parse error', async () => {
    const result = await runPortico(['eval', '${request.method ==}']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr)).toMatchObject({ code: 'PORTICO_E_EXPRESSION', column: 20 });
  });

  it('prints null and a warning when evaluation fails', async () => {
    const result = await runPortico(['eval', "${'abc' * 2}"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toBeNull();
    expect(result.stderr).toContain('warn');
  });

  it('exits 2 on a malformed command line', async () => {
    expect((await runPortico(['eval'])).code).toBe(2);
    expect((await runPortico(['eval', 'x', '--type', 'float'])).code).toBe(2);
    expect((await runPortico(['frobnicate'])).code).toBe(2);
  });
});
