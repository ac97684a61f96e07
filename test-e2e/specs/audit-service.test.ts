import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, startGateway, writeInstanceFile } from '../support/gateway.ts';
import { json, keepAliveAgent, send, waitFor } from '../support/http.ts';
import { runPortico } from '../support/portico.ts';

const run = promisify(execFile);
const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/audit-lines-plugin');

/** The fixture's audit handler, packed and added to `base` as an operator adds a plugin. */
let tarball: string;
async function addPlugin(base: string): Promise<void> {
  const result = await runPortico(['plugin', 'add', tarball, '--base', base]);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
}

/** The events a handler wrote, one JSON line each. */
function lines(file: string): Record<string, any>[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** `count` requests, `concurrency` at a time, each with its own X-Request-Id; the ids answered 200. */
async function load(url: string, count: number, concurrency = 16, prefix = 'r'): Promise<string[]> {
  const answered: string[] = [];
  let next = 0;
  const agent = keepAliveAgent(concurrency);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const id = `${prefix}-${next++}`;
        const reply = await send(`${url}/audited/${id}?n=${id}`, { agent, headers: { 'X-Request-Id': id } });
        if (reply.status === 200) answered.push(id);
      }
    }),
  );
  agent.destroy();
  return answered;
}

const handler = (file: string, more: Record<string, unknown> = {}) => ({
  class: 'com.example.audit.JsonLinesAuditEventHandler',
  config: { name: 'lines', topics: ['access'], file, ...more },
});

const audited = (text: string) => ({
  name: 'audited',
  condition: "${find(request.uri.path, '^/audited/')}",
  handler: { type: 'StaticResponseHandler', config: { status: 200, entity: text } },
});

beforeAll(async () => {
  const source = mkdtempSync(path.join(os.tmpdir(), 'portico-audit-plugin-'));
  cpSync(FIXTURE, source, { recursive: true });
  const env = { ...process.env, npm_config_update_notifier: 'false', npm_config_loglevel: 'error' };
  await run('npm', ['pack', '--pack-destination', source], { cwd: source, env });
  tarball = path.join(source, readdirSync(source).find((name) => name.endsWith('.tgz'))!);
}, 60_000);

describe('an AuditService with a third-party handler, in the real gateway', () => {
  it('writes one event per request answered, and SIGTERM flushes what is still queued', {
    timeout: 90_000,
  }, async () => {
    const base = instanceDirectory({});
    const file = path.join(base, 'audit.jsonl');
    const down = path.join(base, 'store-is-down');
    writeFileSync(down, '');
    writeInstanceFile(base, 'config/config.json', {
      heap: [
        {
          name: 'AuditService',
          type: 'AuditService',
          // A store that is down until the gateway is told to stop: every event is still queued then.
          config: {
            config: {},
            'event-handlers': [handler(file, { downWhile: down, delayMs: 20 })],
            delivery: { retryInitial: '50 ms', retryMax: '30 seconds' },
          },
        },
      ],
      handler: { type: 'Router' },
    });
    writeInstanceFile(base, 'config/routes/audited.json', audited('ok'));
    await addPlugin(base);
    const gw = await startGateway({ base });
    const answered = await load(gw.url, 400);
    expect(answered).toHaveLength(400);
    await sleep(300);
    const { body } = await json(`${gw.url}/openig/api/audit`);
    expect(body.services[0]).toMatchObject({
      id: 'AuditService',
      received: 400,
      invalid: 0,
      handlers: [{ name: 'lines', queued: 400, written: 0, pending: 400, dropped: 0 }],
    });
    expect(body.services[0].handlers[0].retried).toBeGreaterThan(0);
    expect(lines(file)).toEqual([]);
    rmSync(down);
    expect(await gw.stop()).toBe(0);

    const events = lines(file);
    expect(events).toHaveLength(400);
    const ids = events.map((event) => event.http.request.headers['X-Request-Id'][0]);
    expect(new Set(ids)).toEqual(new Set(answered));
    const first = events.find((event) => event.http.request.headers['X-Request-Id'][0] === 'r-7')!;
    expect(first).toMatchObject({
      topic: 'access',
      eventName: 'OPENIG-HTTP-ACCESS',
      transactionId: expect.any(String),
      client: { ip: '127.0.0.1', port: expect.any(Number) },
      server: { ip: '127.0.0.1', port: Number(new URL(gw.url).port) },
      http: {
        request: {
          secure: false,
          method: 'GET',
          path: `${gw.url}/audited/r-7`,
          queryParameters: { n: ['r-7'] },
        },
      },
      response: { status: 'SUCCESSFUL', statusCode: '200', elapsedTimeUnits: 'MILLISECONDS' },
    });
    expect(first.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(new Set(events.map((event) => event._id)).size).toBe(400);
  });

  it('loses nothing when the route that holds the service is reloaded under traffic', {
    timeout: 90_000,
  }, async () => {
    const base = instanceDirectory({});
    const file = path.join(base, 'route-audit.jsonl');
    const route = (version: string) => ({
      ...audited(version),
      auditService: {
        type: 'AuditService',
        config: { 'event-handlers': [handler(file, { delayMs: 100 })] },
      },
    });
    writeInstanceFile(base, 'config/routes/audited.json', route('version 1'));
    await addPlugin(base);
    const gw = await startGateway({ base });
    let running = true;
    const answered: string[] = [];
    const traffic = (async () => {
      let n = 0;
      while (running) {
        const batch = await load(gw.url, 20, 4, `b${n++}`);
        answered.push(...batch);
      }
    })();
    await sleep(300);
    writeInstanceFile(base, 'config/routes/audited.json', route('version 2'));
    await waitFor(
      'the reloaded route',
      async () => (await send(`${gw.url}/audited/probe`)).text === 'version 2',
    );
    answered.push('probe');
    await sleep(300);
    running = false;
    await traffic;
    expect(await gw.stop()).toBe(0);
    const ids = lines(file).map((event) => event.http.request.headers['X-Request-Id']?.[0] ?? 'probe');
    // Every request answered has its event, once: those the first version's service had queued
    // were written when its route was replaced, the rest when the gateway stopped. (waitFor's own
    // probes answered 'version 1' are audited too, under no X-Request-Id.)
    const counted = new Map<string, number>();
    for (const id of ids) counted.set(id, (counted.get(id) ?? 0) + 1);
    for (const id of answered.filter((id) => id !== 'probe')) expect(counted.get(id), id).toBe(1);
    expect(answered.length).toBeGreaterThan(40);
  });
});
