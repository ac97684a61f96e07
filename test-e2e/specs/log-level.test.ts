import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childrenOf, instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { json, send, waitFor } from '../support/http.ts';

/**
 * `portico start --workers 2`: a log level set on `<prefix>/api/logging` through one worker reaches
 * the other (through the primary), a worker started later takes it too, and both workers append to
 * one access log file.
 */
describe('the log level and the access log with two workers', () => {
  let gw: RunningGateway;
  let base: string;
  let workers: number[];

  beforeAll(async () => {
    base = instanceDirectory({
      'config/admin.json': { accessLog: { file: 'logs/access.log' } },
      'config/routes/static.json': {
        name: 'static',
        handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'ok' } },
      },
    });
    gw = await startGateway({ base, workers: 2 });
    workers = await waitFor('two workers', () => {
      const pids = childrenOf(gw.process.pid!);
      return pids.length === 2 ? pids : undefined;
    });
  });

  afterAll(async () => {
    await gw?.stop();
  });

  /** Asks until every worker has answered with `level` (each request on a new connection). */
  async function everyWorkerAt(level: string): Promise<void> {
    const seen = new Set<number>();
    await waitFor(`both workers at ${level}`, async () => {
      const { status, body } = await json<{ level: string; pid: number }>(`${gw.url}/openig/api/logging`);
      expect(status).toBe(200);
      if (body.level === level) seen.add(body.pid);
      else seen.delete(body.pid);
      return workers.every((pid) => seen.has(pid)) ? true : undefined;
    });
  }

  it('changes the level of every worker from one PUT (departure 121)', async () => {
    await everyWorkerAt('INFO');
    const put = (level: string) =>
      send(`${gw.url}/openig/api/logging`, {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ level }),
      });
    const changed = await put('debug');
    expect(changed.status).toBe(200);
    expect(JSON.parse(changed.text).level).toBe('DEBUG');
    await everyWorkerAt('DEBUG');
    expect((await put('warn')).status).toBe(200);
    await everyWorkerAt('WARN');
    expect(gw.output()).toContain('log level changed');
  });

  it('gives a worker that replaces one that died the level in force', async () => {
    const [victim] = workers;
    process.kill(victim!, 'SIGKILL');
    workers = await waitFor('a new worker', () => {
      const pids = childrenOf(gw.process.pid!);
      return pids.length === 2 && !pids.includes(victim!) ? pids : undefined;
    });
    await everyWorkerAt('WARN');
  });

  it('has both workers write their requests to one access log', async () => {
    for (let i = 0; i < 40; i++) expect((await send(`${gw.url}/static/${i}`)).status).toBe(200);
    const file = path.join(base, 'logs', 'access.log');
    const lines = await waitFor('the 40 lines', () => {
      const found = readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
        .filter((line) => String(line.path).startsWith('/static/'));
      return found.length === 40 ? found : undefined;
    });
    expect(new Set(lines.map((line) => line.pid))).toEqual(new Set(workers));
    expect(lines.every((line) => line.route === 'static' && line.status === 200)).toBe(true);
  });
});
