import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// In a process of its own: the CommonJS cache of the test worker may already hold Koa's helpers.
const script = `
import { createRequire } from 'node:module';
import http from 'node:http';
import { deferKoaHelpers } from ${JSON.stringify(path.join(import.meta.dirname, 'koa-helpers.ts'))};
const require = createRequire(import.meta.url);
const koaEntry = require.resolve('koa');
deferKoaHelpers(koaEntry);
const Koa = require('koa');
const fromKoa = createRequire(koaEntry);
const loaded = () => ['mime-db', 'negotiator', 'keygrip', 'media-typer', 'deep-equal'].filter((name) =>
  Object.keys(require.cache).some((file) => file.includes('/node_modules/' + name + '/')));
const before = loaded();
const app = new Koa();
app.use((ctx) => {
  ctx.assert(ctx.method === 'POST', 405);
  ctx.assert.deepEqual({ a: 1 }, { a: 1 }, 500);
  ctx.cookies.set('flavour', 'plain', { signed: false });
  ctx.body = { accepts: ctx.accepts('json', 'html'), is: ctx.is('json'), type: null };
  ctx.type = 'json';
});
const server = app.listen(0, async () => {
  const response = await fetch('http://127.0.0.1:' + server.address().port + '/', {
    method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' }, body: '{}' });
  const body = await response.json();
  const lookup = fromKoa('mime-types').lookup('a.html');
  console.log(JSON.stringify({ before, after: loaded(), body, type: response.headers.get('content-type'),
    cookie: response.headers.get('set-cookie'), lookup }));
  server.close();
});
`;

describe("Koa's helpers loaded on first use", () => {
  it('loads none of them with Koa, and each when a middleware first uses it (assertions included)', async () => {
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--conditions=portico-source', '--input-type=module', '-e', script],
        { cwd: import.meta.dirname },
        (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out)),
      ),
    );
    const result = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(result.before).toEqual([]);
    expect(result.after.sort()).toEqual(['deep-equal', 'keygrip', 'media-typer', 'mime-db', 'negotiator']);
    expect(result.body).toEqual({ accepts: 'json', is: 'json', type: null });
    expect(result.type).toBe('application/json; charset=utf-8');
    expect(result.cookie).toMatch(/^flavour=plain; path=\//);
    expect(result.lookup).toBe('text/html');
  });
});
