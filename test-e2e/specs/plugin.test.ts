import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  instanceDirectory,
  type RunningGateway,
  startGateway,
  writeInstanceFile,
} from '../support/gateway.ts';
import { json, send, waitFor } from '../support/http.ts';
import { GREETING_PLUGIN, installGreetingPlugin } from '../support/plugin.ts';
import { runPortico } from '../support/portico.ts';

interface Failure {
  id: string;
  problems: { jsonPath?: string; message: string }[];
}

/**
 * A third-party plugin, packed with npm and installed into the instance's `plugins` folder (outside
 * the workspace), found by discovery and used by routes through the real gateway.
 */
describe('a third-party plugin installed in <base>/plugins', () => {
  let base: string;
  let gw: RunningGateway;

  beforeAll(async () => {
    base = instanceDirectory({
      'config/routes/10-greeting.json': {
        name: '10-greeting',
        condition: "${request.uri.path == '/greet'}",
        handler: { type: 'GreetingHandler', config: { name: 'e2e' } },
      },
      'config/routes/20-named.json': {
        name: '20-named',
        condition: "${request.uri.path == '/named'}",
        heap: [{ name: 'Greeter', type: 'GreetingHandler', config: { name: 'heap', status: 203 } }],
        handler: {
          type: 'Chain',
          config: { filters: [], handler: 'Greeter' },
        },
      },
      'config/routes/30-bad-config.json': {
        name: '30-bad-config',
        condition: "${request.uri.path == '/bad'}",
        handler: { type: 'GreetingHandler', config: { name: 42, colour: 'red' } },
      },
      'config/routes/40-typo.json': {
        name: '40-typo',
        condition: "${request.uri.path == '/typo'}",
        handler: { type: 'GreetingHandlr' },
      },
    });
    await installGreetingPlugin(base);
    gw = await startGateway({ base });
  }, 60_000);

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
  });

  it('is installed as an npm package under <base>/plugins/node_modules, outside the workspace', () => {
    const installed = path.join(base, 'plugins', 'node_modules', GREETING_PLUGIN, 'package.json');
    expect(existsSync(installed)).toBe(true);
    expect(base.startsWith(path.resolve(import.meta.dirname, '../..'))).toBe(false);
  });

  it('answers through the real gateway, with its config applied', async () => {
    const reply = await send(`${gw.url}/greet`);
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('Hello, e2e! You asked for GET /greet');
    expect(reply.headers['x-plugin']).toBe(`${GREETING_PLUGIN}/1.0.0`);
    expect(reply.headers['content-type']).toBe('text/plain; charset=UTF-8');
  });

  it('is declared in a route heap and used by name inside a core Chain', async () => {
    const reply = await send(`${gw.url}/named`, { method: 'POST', body: 'x' });
    expect(reply.status).toBe(203);
    expect(reply.text).toBe('Hello, heap! You asked for POST /named');
    expect(reply.headers['x-plugin-object']).toBe('Greeter');
  });

  it("resolves @portico/gateway-core to the gateway's own copy from the plugins folder", async () => {
    // The plugin has no copy of the core; the gateway's resolve hook offers its own as a peer, so
    // the plugin shares the running core's classes (PorticoError, Response ...).
    const reply = await send(`${gw.url}/greet`);
    const core = String(reply.headers['x-plugin-core']);
    expect(core).not.toBe('unresolved');
    expect(core).toContain('/packages/gateway-core/');
  });

  it("reports the plugin schema's problems with their JSON paths, like the core's", async () => {
    const { body } = await json(`${gw.url}/openig/api/routes`);
    const failures = body.routers[0].failures as Failure[];
    const bad = failures.find((f) => f.id === '30-bad-config');
    expect(bad?.problems.map((p) => p.jsonPath).sort()).toEqual([
      '$.handler.config.colour',
      '$.handler.config.name',
    ]);
    // A misspelt type is refused, and the plugin's type is among the known ones.
    const typo = failures.find((f) => f.id === '40-typo');
    expect(typo?.problems[0]?.jsonPath).toBe('$.handler.type');
    expect(typo?.problems[0]?.message).toContain('GreetingHandler');
    expect((await send(`${gw.url}/bad`)).status).toBe(404);
  });

  it('serves a route using the plugin added while the gateway runs', async () => {
    writeInstanceFile(base, 'config/routes/50-late.json', {
      name: '50-late',
      condition: "${request.uri.path == '/late'}",
      handler: { type: 'GreetingHandler', config: { name: 'latecomer' } },
    });
    await waitFor('the new route', async () => (await send(`${gw.url}/late`)).status === 200);
    expect((await send(`${gw.url}/late`)).text).toBe('Hello, latecomer! You asked for GET /late');
  });

  it('is found by portico validate too', async () => {
    const result = await runPortico(['validate', '--base', base]);
    expect(result.code).toBe(1);
    // Only the two broken routes are reported: the plugin's type resolved for the others.
    const problems = result.stderr.split('\n').filter((line) => line.startsWith('PORTICO_E_'));
    expect(problems).toHaveLength(3);
    expect(problems.filter((line) => line.includes('30-bad-config.json'))).toHaveLength(2);
    expect(problems.filter((line) => line.includes('40-typo.json'))).toHaveLength(1);
  });
});

describe('a plugin installed while the gateway runs', () => {
  it('a route using its type says the package is there and the gateway needs a restart', async () => {
    const base = instanceDirectory({});
    const gw = await startGateway({ base });
    try {
      // What `npm install --prefix plugins` leaves, written after the gateway discovered its plugins.
      writeInstanceFile(base, 'plugins/node_modules/acme-late/package.json', {
        name: 'acme-late',
        version: '1.0.0',
        type: 'module',
        exports: { '.': './index.js', './package.json': './package.json' },
        portico: { kind: 'handler', types: ['LateHandler'] },
        peerDependencies: { '@portico/gateway-core': '*' },
      });
      writeInstanceFile(base, 'plugins/node_modules/acme-late/index.js', "throw new Error('imported');");
      writeInstanceFile(base, 'config/routes/10-late.json', { handler: { type: 'LateHandler' } });
      writeInstanceFile(base, 'config/routes/20-typo.json', { handler: { type: 'LateHandlr' } });
      const failures = await waitFor('both routes to fail', async () => {
        const { body } = await json(`${gw.url}/openig/api/routes`);
        const found = body.routers[0].failures as Failure[];
        return found.length === 2 ? found : undefined;
      });
      const message = (id: string) => failures.find((f) => f.id === id)?.problems[0]?.message;
      expect(message('10-late')).toMatch(
        new RegExp(
          `^unknown type 'LateHandler'; .*; 'acme-late' \\(${path.join(base, 'plugins', 'node_modules', 'acme-late')}\\) provides it, but was installed after the gateway discovered its plugins: plugins are loaded when the gateway starts, restart it to use acme-late$`,
        ),
      );
      expect(message('20-typo')).toMatch(
        /^unknown type 'LateHandlr'; .*; plugins are loaded when the gateway starts: if the package providing it was installed since, restart the gateway$/,
      );
      // The log line says it too.
      expect(gw.output()).toContain('restart it to use acme-late');
    } finally {
      expect(await gw.stop()).toBe(0);
    }
  });
});
