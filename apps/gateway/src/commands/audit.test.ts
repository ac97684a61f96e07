import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import csvPlugin from '@portico/audit-handler-csv';
import type { AuditEvent, AuditEventHandler } from '@portico/gateway-core/audit';
import { pluginHeap } from '@portico/gateway-core/testing';
import { makeAuditKeystore } from '@portico/test-support';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../cli.ts';

const PASSWORD = 'audit-verify-Zq7';
let dir: string;
let keystore: string;

const event = (n: number) =>
  ({
    _id: `id-${n}`,
    timestamp: `2026-11-29T08:00:0${n}.000Z`,
    transactionId: `tx-${n}`,
    eventName: 'OPENIG-HTTP-ACCESS',
    response: { status: 'SUCCESSFUL', statusCode: '200', elapsedTime: n, elapsedTimeUnits: 'MILLISECONDS' },
  }) as AuditEvent;

/** Writes `count` events with the CSV handler, as the gateway would; gives the file. */
async function written(logDirectory: string, count: number, security: boolean): Promise<string> {
  const { heap } = pluginHeap({
    plugins: [csvPlugin],
    heap: [
      {
        name: 'csv',
        type: 'CsvAuditEventHandler',
        config: {
          name: 'csv',
          topics: ['access'],
          logDirectory,
          ...(security
            ? {
                security: {
                  enabled: true,
                  filename: keystore,
                  password: PASSWORD,
                  signatureInterval: '1 hour',
                },
              }
            : {}),
        },
      },
    ],
  });
  const handler = await heap.get<AuditEventHandler>('csv', 'audit-handler');
  await handler.publish(
    'access',
    Array.from({ length: count }, (_, i) => event(i + 1)),
  );
  await handler.close();
  return path.join(logDirectory, security ? 'tamper-evident-access.csv' : 'access.csv');
}

async function portico(...args: string[]) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await main(['audit', ...args, '--base', dir], {
    stdout: (text) => stdout.push(text),
    stderr: (text) => stderr.push(text),
  });
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
}

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'portico-audit-verify-'));
  keystore = makeAuditKeystore({ dir, password: PASSWORD }).file;
}, 60_000);

describe('portico audit verify', () => {
  it('passes an intact tamper-evident file, exit 0', async () => {
    const file = await written(path.join(dir, 'intact'), 3, true);
    const result = await portico('verify', '--keystore', keystore, '--password', PASSWORD, file);
    expect(result).toEqual({
      code: 0,
      stdout: `ok    ${file}: 3 rows and 1 signature verified`,
      stderr: '',
    });
  }, 60_000);

  it('names the first altered row, exit 1, and checks every file given', async () => {
    const altered = await written(path.join(dir, 'altered'), 4, true);
    const intact = await written(path.join(dir, 'intact-too'), 1, true);
    writeFileSync(altered, readFileSync(altered, 'utf8').replace('"tx-3"', '"tx-9"'));
    const result = await portico('verify', '--keystore', keystore, '--password', PASSWORD, altered, intact);
    expect(result.code).toBe(1);
    expect(result.stdout.split('\n')).toEqual([
      `FAIL  ${altered}: row 4 was altered: its HMAC does not match its values`,
      `ok    ${intact}: 1 row and 1 signature verified`,
    ]);
  }, 60_000);

  it('names a removed row and a cut end', async () => {
    const removed = await written(path.join(dir, 'removed'), 4, true);
    const lines = readFileSync(removed, 'utf8').split(/(?<=\n)/);
    writeFileSync(removed, [...lines.slice(0, 2), ...lines.slice(3)].join(''));
    const cut = await written(path.join(dir, 'cut'), 4, true);
    writeFileSync(
      cut,
      readFileSync(cut, 'utf8')
        .split(/(?<=\n)/)
        .slice(0, -1)
        .join(''),
    );
    const result = await portico('verify', '--keystore', keystore, '--password', PASSWORD, removed, cut);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`FAIL  ${removed}: 1 row was removed before row 3`);
    expect(result.stdout).toContain(`FAIL  ${cut}: the last 4 rows are not signed`);
  }, 60_000);

  it('checks a plain file for its form', async () => {
    const file = await written(path.join(dir, 'plain'), 2, false);
    expect(await portico('verify', file)).toMatchObject({
      code: 0,
      stdout: `ok    ${file}: 2 rows, well formed (not tamper-evident: its content cannot be checked)`,
    });
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, -20));
    expect(await portico('verify', file)).toMatchObject({
      code: 1,
      stdout: `FAIL  ${file}: the file ends in the middle of row 3: it was cut short`,
    });
  });

  it('refuses, exit 2: a tamper-evident file without the keystore, a wrong password, a missing file', async () => {
    const file = await written(path.join(dir, 'refused'), 1, true);
    expect(await portico('verify', file)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/is tamper-evident: give the keystore/),
    });
    expect(await portico('verify', '--keystore', keystore, '--password', 'wrong', file)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/cannot be used/),
    });
    expect(await portico('verify', path.join(dir, 'nothing.csv'))).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/does not exist/),
    });
    expect(await portico('verify')).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/needs the CSV files/),
    });
    expect(await portico('check', file)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/unknown audit action/),
    });
    expect(await portico('verify', '--keystore', keystore, file)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/needs --password/),
    });
  }, 60_000);
});
