import os from 'node:os';
import type { AuditEventHandler } from '@portico/gateway-core/audit';
import { pluginHeap } from '@portico/gateway-core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { FACILITIES, SEVERITIES } from './format.ts';
import plugin from './index.ts';
import { parseSyslogMessage } from './parse.ts';
import { syslogHandlerOf } from './syslog-audit-event-handler.ts';
import { accessEvent, datagramListener, octetCountingListener, until } from './testing/listeners.ts';

const open: AuditEventHandler[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

async function load(config: Record<string, unknown>) {
  const { heap, logger } = pluginHeap({
    plugins: [plugin],
    file: 'config/config.json',
    heap: [{ name: 'Syslog', type: 'SyslogAuditEventHandler', config }],
  });
  const handler = await heap.get<AuditEventHandler>('Syslog', 'audit-handler');
  open.push(handler);
  return { handler, writer: syslogHandlerOf(handler)!, logger };
}

const base = {
  name: 'syslog',
  topics: ['access'],
  protocol: 'TCP',
  host: '127.0.0.1',
  port: 514,
  connectTimeout: 5000,
  facility: 'local0',
};

function rejects(config: Record<string, unknown>, jsonPath: string) {
  const { heap } = pluginHeap({
    plugins: [plugin],
    file: 'config/config.json',
    heap: [{ name: 'Syslog', type: 'SyslogAuditEventHandler', config }],
  });
  return expect(heap.get('Syslog', 'audit-handler')).rejects.toMatchObject({
    code: 'PORTICO_E_CONFIG',
    details: { file: 'config/config.json', jsonPath: `$.heap[0].config${jsonPath}` },
  });
}

describe('SyslogAuditEventHandler settings', () => {
  it('has the defaults of the spec: enabled, unbuffered, buffer of 5000, no severity mappings', async () => {
    const { handler, writer } = await load(base);
    expect(handler).toMatchObject({ name: 'syslog', topics: ['access'], enabled: true });
    expect(writer.settings).toMatchObject({
      protocol: 'TCP',
      address: '127.0.0.1',
      port: 514,
      connectTimeout: 5000,
      facility: 'local0',
      buffering: { enabled: false, maxSize: 5000 },
      severityMappings: [],
    });
  });

  it('takes every setting as an expression, and may be disabled', async () => {
    const { handler, writer } = await load({
      ...base,
      enabled: '${false}',
      protocol: '${"udp"}',
      port: '${600 + 1}',
      facility: '${"KERN"}',
      buffering: { enabled: '${true}', maxSize: '${5 * 2}' },
    });
    expect(handler.enabled).toBe(false);
    expect(writer.settings).toMatchObject({
      protocol: 'UDP',
      port: 601,
      connectTimeout: undefined,
      facility: 'kern',
      buffering: { enabled: true, maxSize: 10 },
    });
  });

  it('requires protocol TCP or UDP, host, port, facility, and names the setting', async () => {
    for (const key of ['protocol', 'host', 'port', 'facility'] as const) {
      const { [key]: _, ...config } = base;
      await rejects(config, `.${key}`);
    }
    await rejects({ ...base, protocol: 'TLS' }, '.protocol');
    await rejects({ ...base, facility: 'local8' }, '.facility');
  });

  it('takes a port from 0 to 65535 only', async () => {
    await rejects({ ...base, port: -1 }, '.port');
    await rejects({ ...base, port: 65536 }, '.port');
    await rejects({ ...base, port: 1.5 }, '.port');
    expect((await load({ ...base, port: 0 })).writer.settings.port).toBe(0);
    expect((await load({ ...base, port: 65535 })).writer.settings.port).toBe(65535);
  });

  it('requires connectTimeout with TCP, not with UDP', async () => {
    const { connectTimeout: _, ...config } = base;
    await rejects(config, '.connectTimeout');
    await rejects({ ...base, connectTimeout: 0 }, '.connectTimeout');
    expect((await load({ ...config, protocol: 'UDP' })).writer.settings.protocol).toBe('UDP');
  });

  it('fails the load when the host does not resolve to an IP address', async () => {
    await rejects({ ...base, host: 'no-such-host.invalid' }, '.host');
    expect((await load({ ...base, host: 'localhost' })).writer.settings.address).toMatch(/^(127\.|::1)/);
  });

  it('knows every facility, case aside', async () => {
    for (const facility of FACILITIES) {
      const { writer } = await load({ ...base, facility: facility.toUpperCase() });
      expect(writer.settings.facility).toBe(facility);
    }
  });

  it('takes buffering.maxSize of at least 1', async () => {
    await rejects({ ...base, buffering: { enabled: true, maxSize: 0 } }, '.buffering.maxSize');
    const { writer } = await load({ ...base, buffering: { enabled: true } });
    expect(writer.settings.buffering).toEqual({ enabled: true, maxSize: 5000 });
  });

  it('maps values onto the eight severities only, each mapping needing topic, field and valueMappings', async () => {
    const mapping = { topic: 'access', field: '/response/status', valueMappings: { FAILED: 'error' } };
    await rejects(
      { ...base, severityFieldMappings: [{ ...mapping, valueMappings: { FAILED: 'fatal' } }] },
      '.severityFieldMappings[0].valueMappings.FAILED',
    );
    for (const key of ['topic', 'field', 'valueMappings'] as const) {
      const { [key]: _, ...partial } = mapping;
      await rejects({ ...base, severityFieldMappings: [partial] }, `.severityFieldMappings[0].${key}`);
    }
    const { writer } = await load({
      ...base,
      severityFieldMappings: [
        { ...mapping, valueMappings: Object.fromEntries(SEVERITIES.map((s) => [s, s.toUpperCase()])) },
      ],
    });
    expect([...writer.settings.severityMappings[0]!.values.values()]).toEqual([...SEVERITIES]);
    expect(writer.settings.severityMappings[0]!.path).toEqual(['response', 'status']);
  });
});

describe('SyslogAuditEventHandler messages', () => {
  it('writes RFC 5424 as the incumbents do: PRI, version, header, one SD element, empty MSG', async () => {
    const { writer } = await load(base);
    const event = accessEvent(7);
    const message = writer.format('access', event);
    const start = `<134>1 2026-03-01T10:20:30.456Z ${os.hostname()} Portico ${process.pid} OPENIG-HTTP-ACCESS [access.Portico@36733 transactionId="tx-7" userId="alice \\"the admin\\" [x\\]\\\\" trackingIds="[\\"t1\\",\\"t2\\"\\]" server.ip="10.0.0.1" server.port="8080" client.ip="10.0.0.9" client.port="40007" request.protocol="HTTP/1.1" `;
    expect(message.slice(0, start.length)).toBe(start);
    expect(message.endsWith('] ')).toBe(true);
    const parsed = parseSyslogMessage(message);
    expect(parsed).toMatchObject({
      facility: 16,
      severity: 6,
      version: 1,
      msgId: 'OPENIG-HTTP-ACCESS',
      msg: '',
    });
    expect(parsed.params).toEqual({
      transactionId: 'tx-7',
      userId: 'alice "the admin" [x]\\',
      trackingIds: '["t1","t2"]',
      'server.ip': '10.0.0.1',
      'server.port': '8080',
      'client.ip': '10.0.0.9',
      'client.port': '40007',
      'request.protocol': 'HTTP/1.1',
      'request.operation': 'GET',
      'http.request.secure': 'false',
      'http.request.method': 'GET',
      'http.request.path': 'http://gw.example/p/7',
      'http.request.queryParameters': '{"q":["7"]}',
      'http.request.headers': '{"host":["gw.example"]}',
      'http.request.cookies': '{}',
      'http.response.headers': '{"content-type":["text/plain"]}',
      'response.status': 'SUCCESSFUL',
      'response.statusCode': '200',
      'response.elapsedTime': '3',
      'response.elapsedTimeUnits': 'MILLISECONDS',
    });
    expect(Object.keys(parsed.params)).not.toContain('_id');
  });

  it('puts each facility in the PRI', async () => {
    for (const [code, facility] of FACILITIES.entries()) {
      const { writer } = await load({ ...base, facility });
      expect(parseSyslogMessage(writer.format('access', accessEvent(1))).pri).toBe(code * 8 + 6);
    }
  });

  it('applies severityFieldMappings, which the incumbent ignores (it parses the value as a severity name)', async () => {
    const { writer } = await load({
      ...base,
      severityFieldMappings: [
        {
          topic: 'access',
          field: 'response/status',
          valueMappings: { FAILED: 'error', SUCCESSFUL: 'notice' },
        },
        { topic: 'access', field: '/response/statusCode', valueMappings: { '500': 'critical' } },
      ],
    });
    const severity = (extra: Record<string, unknown>) =>
      parseSyslogMessage(writer.format('access', { ...accessEvent(1), ...extra })).severity;
    expect(severity({})).toBe(5);
    expect(severity({ response: { status: 'FAILED', statusCode: '500' } })).toBe(3);
    expect(severity({ response: { statusCode: '500' } })).toBe(2);
    // A value no mapping knows, even a severity's name, is informational.
    expect(severity({ response: { status: 'debug' } })).toBe(6);
  });

  it('leaves out absent fields, writes "-" for an absent eventName, and lays out extension fields', async () => {
    const { writer } = await load(base);
    const bare = parseSyslogMessage(
      writer.format('access', { _id: 'a', timestamp: '2026-03-01T10:20:30.456Z', transactionId: 't' }),
    );
    expect(bare.msgId).toBe('-');
    expect(bare.params).toEqual({ transactionId: 't' });
    writer.start(
      new Map([
        [
          'access',
          {
            type: 'object',
            properties: {
              transactionId: { type: 'string' },
              extra: { type: 'object', properties: { note: { type: 'string' } } },
            },
          },
        ],
      ]),
    );
    const extended = parseSyslogMessage(
      writer.format('access', { _id: 'a', timestamp: 'x', transactionId: 't', extra: { note: 'n]' } }),
    );
    expect(extended.params).toEqual({ transactionId: 't', 'extra.note': 'n]' });
  });
});

describe('SyslogAuditEventHandler transports', () => {
  it('frames each message over TCP by octet counting, multi-byte characters counted in bytes', async () => {
    const listener = await octetCountingListener();
    const { handler } = await load({ ...base, port: listener.port });
    const events = [accessEvent(1), accessEvent(2, { userId: 'zoë ☃' })];
    await handler.publish('access', events);
    await until(() => listener.messages.length === 2);
    expect(listener.messages.map((m) => parseSyslogMessage(m).params.transactionId)).toEqual([
      'tx-1',
      'tx-2',
    ]);
    expect(parseSyslogMessage(listener.messages[1]!).params.userId).toBe('zoë ☃');
    await listener.stop();
  });

  it('sends one datagram per message over UDP', async () => {
    const listener = await datagramListener();
    const { handler } = await load({ ...base, protocol: 'UDP', port: listener.port });
    await handler.publish('access', [accessEvent(1), accessEvent(2), accessEvent(3)]);
    await until(() => listener.messages.length === 3);
    expect(listener.messages.map((m) => parseSyslogMessage(m).params.transactionId).sort()).toEqual([
      'tx-1',
      'tx-2',
      'tx-3',
    ]);
    await listener.close();
  });

  it('fails a batch when the daemon refuses the connection, and reconnects once it listens again', async () => {
    const listener = await octetCountingListener();
    const { handler, writer } = await load({ ...base, port: listener.port });
    await handler.publish('access', [accessEvent(1)]);
    await until(() => listener.messages.length === 1);
    await listener.stop();
    await until(() => writer.counters.disconnects === 1);
    await expect(handler.publish('access', [accessEvent(2)])).rejects.toThrow();
    await listener.start();
    await handler.publish('access', [accessEvent(3)]);
    await until(() => listener.messages.length === 2);
    expect(parseSyslogMessage(listener.messages[1]!).params.transactionId).toBe('tx-3');
    expect(writer.counters).toMatchObject({ connects: 2, connectFailures: 1, disconnects: 1 });
    await listener.stop();
  });

  it('gives up connecting after connectTimeout (a loopback listener whose backlog is full)', async () => {
    // A listener that never accepts (python3: Node's servers always do), its accept queue filled.
    const { spawn } = await import('node:child_process');
    const net = await import('node:net');
    const child = spawn('python3', [
      '-c',
      'import socket,sys\ns=socket.socket()\ns.bind(("127.0.0.1",0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\nsys.stdin.read()',
    ]);
    const port = await new Promise<number>((resolve) =>
      child.stdout.once('data', (d) => resolve(Number(String(d)))),
    );
    const hold: import('node:net').Socket[] = [];
    for (let i = 0; i < 4; i++) hold.push(net.connect(port, '127.0.0.1').on('error', () => {}));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const { handler, writer } = await load({ ...base, port, connectTimeout: 200 });
    const started = Date.now();
    await expect(handler.publish('access', [accessEvent(1)])).rejects.toThrow(
      /within the connectTimeout of 200 ms/,
    );
    expect(writer.counters.connectFailures).toBe(1);
    expect(Date.now() - started).toBeLessThan(2000);
    for (const s of hold) s.destroy();
    child.kill();
  });

  it('buffered, takes batches into its buffer, refuses what does not fit, and writes the rest once the daemon is back', async () => {
    const listener = await octetCountingListener();
    await listener.stop();
    const { handler, writer } = await load({
      ...base,
      port: listener.port,
      buffering: { enabled: true, maxSize: 3 },
    });
    await handler.publish('access', [accessEvent(1), accessEvent(2)]);
    await expect(handler.publish('access', [accessEvent(3), accessEvent(4)])).rejects.toThrow(/buffer/);
    expect(writer.counters).toMatchObject({ buffered: 2, bufferFull: 1 });
    await listener.start();
    await handler.flush!();
    await until(() => listener.messages.length === 2);
    expect(writer.counters.buffered).toBe(0);
    expect(writer.counters.connectFailures).toBeGreaterThan(0);
    await listener.stop();
  });
});
