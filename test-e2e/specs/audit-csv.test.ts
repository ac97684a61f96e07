import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { makeAuditKeystore } from '@portico/test-support/audit-keystore';
import { describe, expect, it } from 'vitest';
import { instanceDirectory, startGateway, writeInstanceFile } from '../support/gateway.ts';
import { keepAliveAgent, send, waitFor } from '../support/http.ts';
import { runPortico } from '../support/portico.ts';

/**
 * Sends `/audited/<prefix>-<n>` for n below `count`, from `concurrency` workers taking the next id
 * in turn over kept-alive connections; gives the ids answered 200.
 */
async function load(url: string, count: number, concurrency = 16, prefix = 'r'): Promise<string[]> {
  const pending = Array.from({ length: count }, (_, n) => `${prefix}-${n}`);
  const agent = keepAliveAgent(concurrency);
  const worker = async (answered: string[]) => {
    for (let id = pending.shift(); id !== undefined; id = pending.shift()) {
      if ((await send(`${url}/audited/${id}`, { agent })).status === 200) answered.push(id);
    }
    return answered;
  };
  const answered = (await Promise.all(Array.from({ length: concurrency }, () => worker([])))).flat();
  agent.destroy();
  return answered;
}

/** The request paths of a CSV audit file's event rows (its `http.request.path` column). */
function auditedIds(file: string): string[] {
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  return lines
    .map((line) => /"http:\/\/[^"]+\/audited\/([^"?]+)"/.exec(line)?.[1])
    .filter((id): id is string => id !== undefined);
}

const route = (extra: Record<string, unknown> = {}) => ({
  name: 'audited',
  condition: "${find(request.uri.path, '^/audited/')}",
  auditService: 'AuditService',
  handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'ok' } },
  ...extra,
});

function service(csv: Record<string, unknown>) {
  return {
    heap: [
      {
        name: 'AuditService',
        type: 'AuditService',
        config: {
          config: {},
          'event-handlers': [
            {
              class: 'org.forgerock.audit.handlers.csv.CsvAuditEventHandler',
              config: { name: 'csv', topics: ['access'], logDirectory: 'audit', ...csv },
            },
          ],
        },
      },
    ],
    handler: { type: 'Router' },
  };
}

describe('CsvAuditEventHandler in the real gateway', () => {
  it('writes one row per request answered, all of them by the time SIGTERM has stopped it', {
    timeout: 90_000,
  }, async () => {
    const base = instanceDirectory({});
    writeInstanceFile(
      base,
      'config/config.json',
      service({ buffering: { enabled: true, autoFlush: false } }),
    );
    writeInstanceFile(base, 'config/routes/audited.json', route());
    const gw = await startGateway({ base });
    const answered = await load(gw.url, 500);
    expect(answered).toHaveLength(500);
    expect(await gw.stop()).toBe(0);
    const ids = auditedIds(path.join(base, 'audit', 'access.csv'));
    expect(ids).toHaveLength(500);
    expect(new Set(ids)).toEqual(new Set(answered));
    const verified = await runPortico([
      'audit',
      'verify',
      path.join(base, 'audit', 'access.csv'),
      '--base',
      base,
    ]);
    expect(verified).toMatchObject({ code: 0, stdout: expect.stringContaining('500 rows, well formed') });
  });

  it('shares access.csv between two worker processes: one header, every request once', {
    timeout: 90_000,
  }, async () => {
    const base = instanceDirectory({});
    writeInstanceFile(base, 'config/config.json', service({ buffering: { enabled: true } }));
    writeInstanceFile(base, 'config/routes/audited.json', route());
    const gw = await startGateway({ base, workers: 2 });
    const answered = await load(gw.url, 400);
    expect(await gw.stop()).toBe(0);
    const file = path.join(base, 'audit', 'access.csv');
    expect(readFileSync(file, 'utf8').match(/^"_id",/gm)).toHaveLength(1);
    expect(auditedIds(file).sort()).toEqual([...answered].sort());
    const verified = await runPortico(['audit', 'verify', file, '--base', base]);
    expect(verified).toMatchObject({ code: 0, stdout: expect.stringContaining('400 rows, well formed') });
  });

  it('writes a tamper-evident file that portico audit verify passes, through a route reload and SIGTERM', {
    timeout: 120_000,
  }, async () => {
    const base = instanceDirectory({});
    const keystore = makeAuditKeystore({ dir: base });
    const security = {
      enabled: true,
      filename: 'audit.jceks',
      password: keystore.password,
      signatureInterval: '200 ms',
    };
    // The service in the route: a reload makes a new service and handler on the same file while the
    // old one still delivers what it holds.
    const versioned = (version: string) =>
      route({
        auditService: { type: 'AuditService', config: service({ security }).heap[0]!.config },
        handler: { type: 'StaticResponseHandler', config: { status: 200, entity: version } },
      });
    writeInstanceFile(base, 'config/routes/audited.json', versioned('version 1'));
    const gw = await startGateway({ base });
    const answered = await load(gw.url, 200, 8, 'a');
    const traffic = load(gw.url, 200, 8, 'b');
    await sleep(100);
    writeInstanceFile(base, 'config/routes/audited.json', versioned('version 2'));
    await waitFor(
      'the reloaded route',
      async () => (await send(`${gw.url}/audited/probe`)).text === 'version 2',
    );
    answered.push(...(await traffic));
    expect(await gw.stop()).toBe(0);
    const file = path.join(base, 'audit', 'tamper-evident-access.csv');
    // Every request answered has its row, once (waitFor's probes are audited too).
    const ids = auditedIds(file).filter((id) => id !== 'probe');
    expect(ids.sort()).toEqual([...answered].sort());
    const verified = await runPortico([
      'audit',
      'verify',
      '--keystore',
      keystore.file,
      '--password',
      keystore.password,
      file,
      '--base',
      base,
    ]);
    expect(verified.stderr).toBe('');
    expect(verified.stdout.trim()).toMatch(/^ok {4}.*: \d+ rows and \d+ signatures? verified$/);
    expect(verified.code).toBe(0);
  });
});
