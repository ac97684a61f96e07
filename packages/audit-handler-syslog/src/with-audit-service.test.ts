import servicePlugin, { type AuditService } from '@portico/audit-service';
import { Context, Request } from '@portico/gateway-core';
import { loadRoute, pluginHeap } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import syslogPlugin from './index.ts';
import { parseSyslogMessage } from './parse.ts';
import { octetCountingListener, until } from './testing/listeners.ts';

/**
 * The handler as the incumbents' files declare it, in an AuditService's `event-handlers` by its fully
 * qualified class name, given events by the service: the messages a route's requests send.
 */
describe('SyslogAuditEventHandler in an AuditService', () => {
  it('loads the incumbents’ declaration and sends one message per request a route answers', async () => {
    const listener = await octetCountingListener();
    const { heap, logger } = pluginHeap({
      plugins: [servicePlugin, syslogPlugin],
      file: 'config/config.json',
      heap: [
        {
          name: 'SyslogAuditService',
          type: 'AuditService',
          config: {
            config: {},
            'event-handlers': [
              {
                class: 'org.forgerock.audit.handlers.syslog.SyslogAuditEventHandler',
                config: {
                  name: 'syslog',
                  topics: ['access'],
                  protocol: 'TCP',
                  host: 'localhost',
                  port: listener.port,
                  connectTimeout: 30000,
                  facility: 'local0',
                  buffering: { enabled: true, maxSize: 5000 },
                  severityFieldMappings: [
                    { topic: 'access', field: '/response/status', valueMappings: { FAILED: 'warning' } },
                  ],
                },
              },
            ],
          },
        },
      ],
    });
    const route = await loadRoute({
      id: 'r',
      file: 'config/routes/r.json',
      json: {
        auditService: 'SyslogAuditService',
        handler: { type: 'StaticResponseHandler', config: { status: 404 } },
      },
      parentHeap: heap,
      logger,
    });
    for (let i = 0; i < 3; i++) {
      await route.handle(
        new Context({
          client: {
            remoteAddress: '10.0.0.9',
            remotePort: 40000 + i,
            localAddress: '10.0.0.1',
            localPort: 8080,
          },
        }),
        new Request({ uri: `http://gw.example/p/${i}?q=${i}`, headers: { host: 'gw.example' } }),
      );
    }
    const service = await heap.get<AuditService>('SyslogAuditService');
    await service.close();
    await until(() => listener.messages.length === 3);
    await listener.stop();
    const messages = listener.messages.map(parseSyslogMessage);
    expect(messages[0]).toMatchObject({
      facility: 16,
      severity: 4,
      appName: 'Portico',
      msgId: 'OPENIG-HTTP-ACCESS',
      sdId: 'access.Portico@36733',
    });
    expect(messages.map((m) => m.params['http.request.path'])).toEqual([
      'http://gw.example/p/0',
      'http://gw.example/p/1',
      'http://gw.example/p/2',
    ]);
    expect(messages[0]!.params).toMatchObject({
      'http.request.method': 'GET',
      'http.request.queryParameters': '{"q":["0"]}',
      'response.status': 'FAILED',
      'response.statusCode': '404',
      'client.ip': '10.0.0.9',
    });
    expect(Object.keys(messages[0]!.params)).not.toContain('_id');
  });
});
