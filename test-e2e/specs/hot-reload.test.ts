import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  instanceDirectory,
  type RunningGateway,
  startGateway,
  writeInstanceFile,
} from '../support/gateway.ts';
import { errorCode, json, keepAliveAgent, send, waitFor } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/** A static route answering `text` at `/dynamic`. */
function dynamicRoute(text: string): object {
  return {
    name: '20-dynamic',
    condition: "${request.uri.path == '/dynamic'}",
    handler: { type: 'StaticResponseHandler', config: { status: 200, entity: text } },
  };
}

interface Traffic {
  /** Status (or transport error) of every request, by what it got. */
  outcomes: Map<string, number>;
  stop(): Promise<void>;
}

/**
 * Keeps `clients` loops sending requests (each on its own keep-alive connection) until stopped;
 * `classify` names the outcome of each answer.
 */
function traffic(url: string, clients: number, classify: (status: number, text: string) => string): Traffic {
  const outcomes = new Map<string, number>();
  const count = (outcome: string) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  let running = true;
  const loops = Array.from({ length: clients }, async () => {
    const agent = keepAliveAgent(1);
    try {
      while (running) {
        try {
          const reply = await send(url, { agent, timeoutMs: 10_000 });
          count(classify(reply.status, reply.text));
        } catch (error) {
          count(`error ${errorCode(error)}`);
        }
      }
    } finally {
      agent.destroy();
    }
  });
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** The failures the admin API reports for the first router. */
async function failures(url: string): Promise<
  {
    id: string;
    file: string;
    previousVersionServing: boolean;
    problems: { jsonPath?: string; file?: string; message: string }[];
  }[]
> {
  const { body } = await json(`${url}/openig/api/routes`);
  return body.routers[0].failures;
}

async function routeNames(url: string): Promise<string[]> {
  const { body } = await json(`${url}/openig/api/routes`);
  return body.routers[0].routes.map((r: { name: string }) => r.name);
}

/**
 * Route files added, edited, broken and removed while requests flow: a stable route never misses a
 * request, the changing route always answers with one of its versions (or, once removed, the
 * default 404), and a broken edit leaves the previous version serving and is reported.
 */
describe('hot reload of route files under traffic', () => {
  /** Three upstream applications; each answers with its own name, after 1.5 s for `/stable/slow`. */
  const upstreams: Record<string, Upstream> = {};
  let gw: RunningGateway;
  let base: string;
  const routes = () => path.join(base, 'config', 'routes');
  const stableRoute = (upstream: string) => ({
    name: '10-stable',
    condition: "${find(request.uri.path, '^/stable/')}",
    baseURI: upstreams[upstream]!.url,
    handler: 'ReverseProxyHandler',
  });

  beforeAll(async () => {
    for (const name of ['a', 'b', 'c']) {
      upstreams[name] = await startUpstream((req, res) => {
        req.resume();
        const delay = req.url?.startsWith('/stable/slow') ? 1500 : 0;
        setTimeout(() => {
          const body = `upstream ${name} ${req.url}`;
          res.writeHead(200, { 'Content-Length': Buffer.byteLength(body) });
          res.end(body);
        }, delay);
      });
    }
    base = instanceDirectory({ 'config/routes/10-stable.json': stableRoute('a') });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    for (const upstream of Object.values(upstreams)) await upstream.close();
  });

  it('adds, edits, breaks and removes a route without dropping a request', async () => {
    const stable = traffic(`${gw.url}/stable/x`, 3, (status, text) =>
      status === 200 && text === 'upstream a /stable/x' ? 'ok' : `bad ${status} ${text}`,
    );
    const dynamic = traffic(`${gw.url}/dynamic`, 2, (status, text) => `${status} ${text}`);
    try {
      await sleep(200);

      // Added: answers as soon as the router has seen the file.
      writeInstanceFile(base, 'config/routes/20-dynamic.json', dynamicRoute('version 1'));
      await waitFor('the added route', async () => (await send(`${gw.url}/dynamic`)).text === 'version 1');
      expect(await routeNames(gw.url)).toEqual(['10-stable', '20-dynamic']);

      // Edited: the new version replaces the old one.
      writeInstanceFile(base, 'config/routes/20-dynamic.json', dynamicRoute('version 2'));
      await waitFor('the edited route', async () => (await send(`${gw.url}/dynamic`)).text === 'version 2');

      // Broken (not JSON): reported with its file, and version 2 keeps serving.
      writeFileSync(path.join(routes(), '20-dynamic.json'), '{ "name": "20-dynamic", "handler": ');
      const [syntax] = await waitFor('the broken file to be reported', async () => {
        const found = await failures(gw.url);
        return found.length > 0 ? found : undefined;
      });
      expect(syntax).toMatchObject({
        id: '20-dynamic',
        file: path.join(routes(), '20-dynamic.json'),
        previousVersionServing: true,
      });
      expect(syntax!.problems.length).toBeGreaterThan(0);
      expect((await send(`${gw.url}/dynamic`)).text).toBe('version 2');

      // Broken (valid JSON, unknown type): the JSON path of the fault is reported.
      writeInstanceFile(base, 'config/routes/20-dynamic.json', {
        name: '20-dynamic',
        condition: "${request.uri.path == '/dynamic'}",
        handler: { type: 'NoSuchHandler' },
      });
      const [unknown] = await waitFor('the unknown type to be reported', async () => {
        const found = await failures(gw.url);
        return found[0]?.problems.some((p) => p.jsonPath === '$.handler.type') ? found : undefined;
      });
      expect(unknown!.previousVersionServing).toBe(true);
      expect(unknown!.problems[0]!.message).toContain('NoSuchHandler');
      expect((await send(`${gw.url}/dynamic`)).text).toBe('version 2');

      // Repaired: serves the repaired version, and nothing is reported any more.
      writeInstanceFile(base, 'config/routes/20-dynamic.json', dynamicRoute('version 3'));
      await waitFor('the repaired route', async () => (await send(`${gw.url}/dynamic`)).text === 'version 3');
      expect(await failures(gw.url)).toEqual([]);

      // Removed: the default 404.
      rmSync(path.join(routes(), '20-dynamic.json'));
      await waitFor('the removed route', async () => (await send(`${gw.url}/dynamic`)).status === 404);
      expect(await routeNames(gw.url)).toEqual(['10-stable']);
      await sleep(200);
    } finally {
      await stable.stop();
      await dynamic.stop();
    }

    // The stable route answered every request.
    expect(Object.fromEntries(stable.outcomes)).toEqual({ ok: expect.any(Number) });
    expect(stable.outcomes.get('ok')).toBeGreaterThan(50);
    // The changing route only ever gave a version of itself or, before it was added and once it was
    // removed, the default 404: never an error, never a connection failure.
    const seen = [...dynamic.outcomes.keys()].sort();
    const allowed = ['200 version 1', '200 version 2', '200 version 3', '404 '];
    expect(seen.filter((outcome) => !allowed.includes(outcome))).toEqual([]);
    expect(seen).toEqual(expect.arrayContaining(['200 version 1', '200 version 2', '200 version 3', '404 ']));
  }, 60_000);

  it('lets a request in flight finish on the version of the route it started on', async () => {
    const file = path.join(routes(), '10-stable.json');
    const answeredBy = async (name: string) =>
      (await send(`${gw.url}/stable/now`)).text.startsWith(`upstream ${name}`);
    writeFileSync(file, JSON.stringify(stableRoute('a')));
    await waitFor('version a', () => answeredBy('a'));

    // Takes 1.5 s upstream; the route is replaced twice meanwhile, then removed.
    const slow = send(`${gw.url}/stable/slow`, { timeoutMs: 10_000 });
    await sleep(200);
    writeFileSync(file, JSON.stringify(stableRoute('b')));
    await waitFor('version b', () => answeredBy('b'));
    writeFileSync(file, JSON.stringify(stableRoute('c')));
    await waitFor('version c', () => answeredBy('c'));
    rmSync(file);
    await waitFor('removal', async () => (await send(`${gw.url}/stable/now`)).status === 404);

    const reply = await slow;
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('upstream a /stable/slow');
    expect(gw.output()).not.toMatch(/route destroy failed/);
  }, 30_000);
});
