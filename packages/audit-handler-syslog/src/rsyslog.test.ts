import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { parseSyslogMessage } from './parse.ts';
import { accessEvent, loadHandler, until } from './testing/listeners.ts';
import { realRsyslog, tail } from './testing/rsyslog.ts';

const rsyslog = await realRsyslog();

/**
 * The real rsyslog of test-e2e/services writes each message it receives as one RFC 5424 line
 * (RSYSLOG_SyslogProtocol23Format) to $PORTICO_SYSLOG_FILE: the lines parse back to the events.
 */
describe.skipIf(rsyslog === undefined)('SyslogAuditEventHandler with the real rsyslog', () => {
  for (const protocol of ['TCP', 'UDP'] as const) {
    it(`writes events over ${protocol} that rsyslog records with every field`, async () => {
      const { host, port, file } = rsyslog!;
      const run = randomUUID();
      const log = tail(file);
      const handler = await loadHandler({
        name: 'syslog',
        topics: ['access'],
        protocol,
        host,
        port,
        connectTimeout: 2000,
        facility: 'local3',
        severityFieldMappings: [
          { topic: 'access', field: '/response/status', valueMappings: { FAILED: 'warning' } },
        ],
      });
      const events = Array.from({ length: 20 }, (_, i) =>
        accessEvent(i, {
          transactionId: `${run}-${i}`,
          ...(i % 2 === 1 ? { response: { status: 'FAILED', statusCode: '502' } } : {}),
        }),
      );
      await handler.publish('access', events);
      const mine: string[] = [];
      await until(() => {
        mine.push(...log.lines().filter((line) => line.includes(run)));
        return mine.length >= events.length;
      }, 10_000);
      await handler.close();
      const parsed = mine.map(parseSyslogMessage);
      expect(parsed.map((m) => m.params.transactionId).sort()).toEqual(
        events.map((e) => e.transactionId).sort(),
      );
      for (const message of parsed) {
        const i = Number(message.params.transactionId!.slice(run.length + 1));
        expect(message).toMatchObject({
          facility: 19,
          severity: i % 2 === 1 ? 4 : 6,
          version: 1,
          hostname: os.hostname(),
          appName: 'Portico',
          procId: String(process.pid),
          msgId: 'OPENIG-HTTP-ACCESS',
          sdId: 'access.Portico@36733',
        });
        // rsyslog rewrites the timestamp in its own precision and zone: the same instant.
        expect(Date.parse(message.timestamp)).toBe(Date.parse('2026-03-01T10:20:30.456Z'));
        expect(message.params).toMatchObject({
          userId: 'alice "the admin" [x]\\',
          'http.request.path': `http://gw.example/p/${i}`,
          'http.request.headers': '{"host":["gw.example"]}',
          'response.statusCode': i % 2 === 1 ? '502' : '200',
        });
      }
    });
  }
});
