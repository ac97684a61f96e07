import dgram from 'node:dgram';
import net from 'node:net';
import type { AuditEvent, AuditEventHandler } from '@portico/gateway-core/audit';
import { pluginHeap } from '@portico/gateway-core/testing';
import plugin from '../index.ts';

/** A handler loaded from its configuration, as a heap declares it. */
export async function loadHandler(config: Record<string, unknown>): Promise<AuditEventHandler> {
  const { heap } = pluginHeap({
    plugins: [plugin],
    file: 'config/config.json',
    heap: [{ name: 'Syslog', type: 'SyslogAuditEventHandler', config }],
  });
  return heap.get<AuditEventHandler>('Syslog', 'audit-handler');
}

/** An access event with every field of the core schema, and characters RFC 5424 makes escape. */
export function accessEvent(n: number, extra: Partial<Record<string, unknown>> = {}): AuditEvent {
  return {
    _id: `id-${n}`,
    timestamp: '2026-03-01T10:20:30.456Z',
    eventName: 'OPENIG-HTTP-ACCESS',
    transactionId: `tx-${n}`,
    userId: 'alice "the admin" [x]\\',
    trackingIds: ['t1', 't2'],
    server: { ip: '10.0.0.1', port: 8080 },
    client: { ip: '10.0.0.9', port: 40000 + (n % 1000) },
    request: { protocol: 'HTTP/1.1', operation: 'GET' },
    http: {
      request: {
        secure: false,
        method: 'GET',
        path: `http://gw.example/p/${n}`,
        queryParameters: { q: [String(n)] },
        headers: { host: ['gw.example'] },
        cookies: {},
      },
      response: { headers: { 'content-type': ['text/plain'] } },
    },
    response: { status: 'SUCCESSFUL', statusCode: '200', elapsedTime: 3, elapsedTimeUnits: 'MILLISECONDS' },
    ...extra,
  };
}

/** A TCP syslog listener reading octet-counted frames, which it can stop and start on its port. */
export async function octetCountingListener(port = 0) {
  const messages: string[] = [];
  const sockets = new Set<net.Socket>();
  let server: net.Server;
  const listen = (p: number) =>
    new Promise<number>((resolve) => {
      server = net.createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        let pending = Buffer.alloc(0);
        socket.on('data', (chunk) => {
          pending = Buffer.concat([pending, chunk]);
          for (;;) {
            const space = pending.indexOf(0x20);
            if (space < 0) return;
            const length = Number(pending.subarray(0, space).toString());
            if (!Number.isInteger(length)) throw new Error(`not a frame: ${pending.subarray(0, 20)}`);
            if (pending.length < space + 1 + length) return;
            messages.push(pending.subarray(space + 1, space + 1 + length).toString());
            pending = pending.subarray(space + 1 + length);
          }
        });
      });
      server.listen(p, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
    });
  const bound = await listen(port);
  return {
    port: bound,
    messages,
    connections: () => sockets.size,
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    start: () => listen(bound),
  };
}

/** A UDP syslog listener, one message per datagram. */
export async function datagramListener() {
  const messages: string[] = [];
  const socket = dgram.createSocket('udp4');
  socket.on('message', (data) => messages.push(data.toString()));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  return {
    port: socket.address().port,
    messages,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

export async function until(test: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
