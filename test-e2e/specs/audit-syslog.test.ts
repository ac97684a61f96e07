import { randomUUID } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { serviceSetting, serviceUrl } from '@portico/test-support';
import { describe, expect, it } from 'vitest';
import { instanceDirectory, startGateway, writeInstanceFile } from '../support/gateway.ts';
import { keepAliveAgent, send } from '../support/http.ts';

const host = serviceSetting('PORTICO_SYSLOG_HOST');
const port = serviceSetting('PORTICO_SYSLOG_PORT');
const file = serviceSetting('PORTICO_SYSLOG_FILE');
process.env.PORTICO_SYSLOG_TCP_URL ??= host && port && file ? `tcp://${host}:${port}` : '';
const rsyslog = await serviceUrl('PORTICO_SYSLOG_TCP_URL', 'rsyslog');

/** Lines the daemon's file gained since `offset` (the file is shared with other tests). */
function linesSince(offset: number): string[] {
  const size = statSync(file!).size;
  const buffer = Buffer.alloc(Math.max(0, size - offset));
  const fd = openSync(file!, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, offset);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8').split('\n');
}

/**
 * The syslog handler in the real gateway, writing to the real rsyslog of test-e2e/services: every
 * request a route answers is one line in the daemon's file, all of them by the time SIGTERM has
 * stopped the gateway (the service flushes, the handler writes its buffer).
 */
describe.skipIf(rsyslog === undefined)('SyslogAuditEventHandler in the real gateway', () => {
  for (const protocol of ['TCP', 'UDP'] as const) {
    it(`sends one message per request over ${protocol}, all of them by the time SIGTERM has stopped it`, {
      timeout: 90_000,
    }, async () => {
      const run = randomUUID();
      const offset = statSync(file!).size;
      const base = instanceDirectory({});
      writeInstanceFile(base, 'config/config.json', {
        heap: [
          {
            name: 'AuditService',
            type: 'AuditService',
            config: {
              config: {},
              'event-handlers': [
                {
                  class: 'org.forgerock.audit.handlers.syslog.SyslogAuditEventHandler',
                  config: {
                    name: 'syslog',
                    topics: ['access'],
                    protocol,
                    host,
                    port: Number(port),
                    connectTimeout: 5000,
                    facility: 'local4',
                    buffering: { enabled: true },
                  },
                },
              ],
            },
          },
        ],
        handler: { type: 'Router' },
      });
      writeInstanceFile(base, 'config/routes/audited.json', {
        name: 'audited',
        condition: "${find(request.uri.path, '^/audited/')}",
        auditService: 'AuditService',
        handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'ok' } },
      });
      const gw = await startGateway({ base });
      const agent = keepAliveAgent(8);
      const answered: string[] = [];
      // 300 requests, paced (UDP has no flow control: a burst can overflow the daemon's buffer).
      for (let n = 0; n < 300; n += 10) {
        const batch = Array.from({ length: 10 }, (_, i) => `${run}-${n + i}`);
        const statuses = await Promise.all(batch.map((id) => send(`${gw.url}/audited/${id}`, { agent })));
        for (const [i, r] of statuses.entries()) if (r.status === 200) answered.push(batch[i]!);
        await sleep(5);
      }
      agent.destroy();
      expect(answered).toHaveLength(300);
      expect(await gw.stop()).toBe(0);
      const ids: string[] = [];
      for (let i = 0; i < 40 && ids.length < answered.length; i++) {
        await sleep(250);
        ids.length = 0;
        for (const line of linesSince(offset)) {
          const id = new RegExp(`http\\.request\\.path="http://[^"]+/audited/(${run}-\\d+)"`).exec(line)?.[1];
          if (id !== undefined) ids.push(id);
        }
      }
      expect(ids.sort()).toEqual([...answered].sort());
      expect(linesSince(offset).find((line) => line.includes(run))).toMatch(
        /^<166>1 \S+ \S+ Portico \d+ OPENIG-HTTP-ACCESS \[access\.Portico@36733 /,
      );
    });
  }
});
