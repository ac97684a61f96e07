import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { instanceDirectory, startGateway } from '../support/gateway.ts';
import { json, send } from '../support/http.ts';
import { runPortico } from '../support/portico.ts';

const good = {
  name: '10-good',
  condition: "${request.uri.path == '/good'}",
  handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'good' } },
};

/** One good route and five broken in different ways; each problem with the JSON path it is at. */
const broken: Record<string, unknown> = {
  'config/routes/10-good.json': good,
  'config/routes/20-unknown-type.json': { name: '20-unknown-type', handler: { type: 'NoSuchHandler' } },
  'config/routes/30-bad-config.json': {
    name: '30-bad-config',
    handler: { type: 'StaticResponseHandler', config: { status: 'abc', bogus: true } },
  },
  'config/routes/40-syntax.json': '{\n  "name": "40-syntax",\n  "handler": ,\n}\n',
  'config/routes/50-bad-condition.json': {
    name: '50-bad-condition',
    condition: '${request.method ==}',
    handler: 'ReverseProxyHandler',
  },
  'config/routes/60-bad-heap.json': {
    name: '60-bad-heap',
    heap: [{ name: 'upstream', type: 'ClientHandler', config: { connections: 'many' } }],
    handler: 'upstream',
  },
};

/** Where each problem is: file, then JSON path (or line and column for a file that is not JSON). */
const expectedProblems: [string, string][] = [
  ['20-unknown-type.json', '$.handler.type'],
  ['30-bad-config.json', '$.handler.config.bogus'],
  ['30-bad-config.json', '$.handler.config.status'],
  ['40-syntax.json', 'line 3, column 14'],
  ['50-bad-condition.json', '$.condition'],
  ['60-bad-heap.json', '$.heap[0].config.connections'],
];

describe('portico validate (the real command)', () => {
  it('exits 0 and counts the routes of a good configuration', async () => {
    const base = instanceDirectory({
      'config/admin.json': { prefix: 'admin', limits: { maxHeaderSize: 8192, headersTimeout: '5 seconds' } },
      'config/config.json': { handler: { type: 'Router', config: { scanInterval: 'disabled' } } },
      'config/routes/10-good.json': good,
      'config/routes/20-proxy.json': {
        name: '20-proxy',
        baseURI: 'http://127.0.0.1:9',
        handler: 'ReverseProxyHandler',
      },
    });
    const result = await runPortico(['validate', '--base', base]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([
      'config/admin.json: ok',
      'config/config.json: ok',
      'config/routes/10-good.json: ok',
      'config/routes/20-proxy.json: ok',
      `${base}: configuration valid (2 routes)`,
    ]);
  });

  it('prints every problem of every route file with its file and JSON path, and exits 1', async () => {
    const base = instanceDirectory(broken);
    const result = await runPortico(['validate', '--base', base]);
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    for (const [file, where] of expectedProblems) {
      const full = path.join(base, 'config', 'routes', file);
      expect(
        lines.some((line) => line.includes(full) && line.includes(where)),
        `a line naming ${file} at ${where} in:\n${result.stderr}`,
      ).toBe(true);
    }
    expect(lines.some((line) => line.includes('NoSuchHandler'))).toBe(true);
    expect(lines.at(-1)).toBe(`${expectedProblems.length} problems found`);
    expect(result.stderr).not.toContain('10-good.json');
    // One line per file, the good one included.
    expect(result.stdout.trim().split('\n')).toEqual([
      'config/routes/10-good.json: ok',
      'config/routes/20-unknown-type.json: 1 problem',
      'config/routes/30-bad-config.json: 2 problems',
      'config/routes/40-syntax.json: 1 problem',
      'config/routes/50-bad-condition.json: 1 problem',
      'config/routes/60-bad-heap.json: 1 problem',
    ]);
  });

  it('reports a routes directory that does not exist and a heap object nothing uses of an unknown type', async () => {
    const base = instanceDirectory({
      'config/config.json': {
        heap: [
          { name: 'Other', type: 'Router', config: { directory: 'more-routes', scanInterval: 'disabled' } },
        ],
        handler: { type: 'Router', config: { scanInterval: 'disabled' } },
      },
      'config/routes/10-good.json': { ...good, heap: [{ name: 'spare', type: 'NoSuchFilter' }] },
    });
    const result = await runPortico(['validate', '--base', base]);
    expect(result.code).toBe(1);
    const config = path.join(base, 'config', 'config.json');
    const route = path.join(base, 'config', 'routes', '10-good.json');
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(`^PORTICO_E_UNKNOWN_TYPE ${route} \\$\\.heap\\[0\\]\\.type: unknown type 'NoSuchFilter'`),
      ),
      `PORTICO_E_CONFIG ${config} $.heap[0].config.directory: the routes directory ${path.join(base, 'config', 'more-routes')} does not exist: no route is served until it can be read (expected an existing directory of route files (the Router config directory, default routes))`,
      '2 problems found',
    ]);
    expect(result.stdout.trim().split('\n')).toEqual([
      'config/config.json: 1 problem',
      'config/routes/10-good.json: 1 problem',
    ]);
  });

  it('prints warnings with their file and JSON path without failing: a key ignored as the incumbents ignore it', async () => {
    const base = instanceDirectory({
      'config/config.json': { handler: { type: 'Router', config: { scanInterval: 'disabled' } } },
      'config/routes/10-good.json': { ...good, bindings: { $location: 'file:/var/openig/bindings.json' } },
    });
    const result = await runPortico(['validate', '--base', base]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('configuration valid (1 route)');
    const warning = `warning ${path.join(base, 'config', 'routes', '10-good.json')} $.bindings: 'bindings' names no field and no decorator in scope: ignored, as the incumbents ignore it`;
    expect(result.stderr.trim()).toBe(warning);
    const strict = await runPortico(['validate', '--base', base, '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.stderr.trim().split('\n')).toEqual([warning, '1 warning found (--strict)']);
  });

  it('reports every problem of admin.json, and goes on to check the other files', async () => {
    const base = instanceDirectory({
      'config/admin.json': { limits: { maxHeaderSize: 10, bogus: 1 }, mode: 'TURBO' },
      'config/routes/10-good.json': good,
      'config/routes/20-unknown-type.json': broken['config/routes/20-unknown-type.json'],
    });
    const result = await runPortico(['validate', '--base', base]);
    expect(result.code).toBe(1);
    const admin = path.join(base, 'config', 'admin.json');
    for (const where of ['$.limits.maxHeaderSize', '$.limits.bogus', '$.mode']) {
      expect(
        result.stderr.split('\n').some((line) => line.includes(admin) && line.includes(where)),
        `${where} in:\n${result.stderr}`,
      ).toBe(true);
    }
    expect(result.stderr).toContain(
      `${path.join(base, 'config', 'routes', '20-unknown-type.json')} $.handler.type`,
    );
    expect(result.stderr).toContain('4 problems found');
    expect(result.stdout.trim().split('\n')).toEqual([
      'config/admin.json: 3 problems',
      'config/routes/10-good.json: ok',
      'config/routes/20-unknown-type.json: 1 problem',
    ]);
  });
});

describe('portico start with route files that fail to load', () => {
  it('reports each broken file and serves the other routes', async () => {
    const base = instanceDirectory(broken);
    const gw = await startGateway({ base });
    try {
      const reply = await send(`${gw.url}/good`);
      expect(reply.status).toBe(200);
      expect(reply.text).toBe('good');
      expect((await send(`${gw.url}/other`)).status).toBe(404);

      const { body } = await json(`${gw.url}/openig/api/routes`);
      const [router] = body.routers;
      expect(router.routes.map((r: { name: string }) => r.name)).toEqual(['10-good']);
      const failed = router.failures as {
        id: string;
        file: string;
        previousVersionServing: boolean;
        problems: { jsonPath?: string; file?: string; message: string }[];
      }[];
      expect(failed.map((f) => f.id).sort()).toEqual([
        '20-unknown-type',
        '30-bad-config',
        '40-syntax',
        '50-bad-condition',
        '60-bad-heap',
      ]);
      for (const failure of failed) {
        expect(failure.file).toBe(path.join(base, 'config', 'routes', `${failure.id}.json`));
        expect(failure.previousVersionServing).toBe(false);
        expect(failure.problems.length).toBeGreaterThan(0);
      }
      const paths = failed.flatMap((f) => f.problems.map((p) => p.jsonPath)).filter(Boolean);
      expect(paths).toEqual(
        expect.arrayContaining(['$.handler.type', '$.handler.config.status', '$.condition']),
      );

      // The log names each file.
      const logged = gw
        .output()
        .split('\n')
        .filter((line) => line.includes('route not loaded'));
      for (const failure of failed) expect(logged.some((line) => line.includes(failure.file))).toBe(true);
    } finally {
      expect(await gw.stop()).toBe(0);
    }
  });

  it('refuses to start on a broken admin.json, naming the problem, and exits 1', async () => {
    const base = instanceDirectory({
      'config/admin.json': { limits: { maxHeaderSize: 10 } },
      'config/routes/10-good.json': good,
    });
    const result = await runPortico([
      'start',
      '--base',
      base,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--workers',
      '1',
    ]);
    expect(result.code).toBe(1);
    expect(`${result.stdout}\n${result.stderr}`).toContain('$.limits.maxHeaderSize');
    expect(result.stdout).not.toContain('listening');
  });
});

describe('one route file never takes the others down', () => {
  it('serves the good routes beside a route nested thousands of levels deep and one larger than limits.maxRouteFileSize', async () => {
    // 3,200 levels of objects (1,600 Chains), within the size limit.
    const depth = 1600;
    const base = instanceDirectory({
      'config/admin.json': { limits: { maxRouteFileSize: 64 * 1024 } },
      'config/config.json': { handler: { type: 'Router', config: { scanInterval: 'disabled' } } },
      // Sorted before the good route: a failure must not stop the scan.
      'config/routes/05-deep.json': `{"handler": ${'{"type":"Chain","config":{"handler":'.repeat(depth)}"ReverseProxyHandler"${'}}'.repeat(depth)}}`,
      'config/routes/06-large.json': {
        handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'x'.repeat(100 * 1024) } },
      },
      'config/routes/10-good.json': good,
    });
    const gw = await startGateway({ base });
    try {
      const reply = await send(`${gw.url}/good`);
      expect(reply.status).toBe(200);
      expect(reply.text).toBe('good');
      const { body } = await json(`${gw.url}/openig/api/routes`);
      const [router] = body.routers;
      expect(router.routes.map((r: { name: string }) => r.name)).toEqual(['10-good']);
      const problems = Object.fromEntries(
        (
          router.failures as { id: string; problems: { code: string; message: string; expected: string }[] }[]
        ).map((f) => [f.id, f.problems]),
      );
      expect(problems['05-deep']).toMatchObject([
        { code: 'PORTICO_E_CONFIG', expected: 'at most 512 levels of nesting' },
      ]);
      expect(problems['06-large']).toMatchObject([
        {
          code: 'PORTICO_E_ROUTE',
          expected: 'a route file of at most 65536 bytes (admin.json limits.maxRouteFileSize)',
        },
      ]);
      expect(gw.output()).not.toContain('RangeError');
    } finally {
      expect(await gw.stop()).toBe(0);
    }
  });
});
