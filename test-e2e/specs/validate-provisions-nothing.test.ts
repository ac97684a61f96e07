import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory } from '../support/gateway.ts';
import { runPortico } from '../support/portico.ts';

/**
 * `portico validate` checks every setting and reference without provisioning anything: Redis and the
 * databases an instance names are never connected to. The services here are one listener that
 * accepts and never answers (a Redis or a database that hangs), counting the connections made to it:
 * had validate tried one, it would have waited for the 30-second timeouts given.
 */
let frozen: net.Server;
let connections = 0;
let port = 0;

beforeAll(async () => {
  frozen = net.createServer(() => {
    connections++;
  });
  await new Promise<void>((resolve) => frozen.listen(0, '127.0.0.1', resolve));
  port = (frozen.address() as net.AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => frozen.close(() => resolve())));

function instance(withProblem: boolean): string {
  const redis = `redis://127.0.0.1:${port}`;
  return instanceDirectory({
    'config/admin.json': {
      connectors: [{ port: 0 }],
      session: { store: { type: 'redis', uri: redis, timeout: '30 seconds' } },
    },
    'config/config.json': {
      heap: [
        {
          name: 'Orders',
          type: 'JdbcDataSource',
          config: { jdbcUrl: `jdbc:postgresql://127.0.0.1:${port}/orders`, username: 'u', minIdle: 2 },
        },
      ],
      handler: { type: 'Router' },
    },
    'config/routes/10-throttled.json': {
      handler: {
        type: 'Chain',
        config: {
          filters: [
            {
              type: 'ThrottlingFilter',
              config: {
                rate: { numberOfRequests: withProblem ? 'many' : 10, duration: '1 second' },
                redis: { uri: redis, timeout: '30 seconds' },
              },
            },
            {
              type: 'SqlAttributesFilter',
              config: {
                dataSource: 'Orders',
                preparedStatement: 'select * from orders where id = ?',
                parameters: ['${request.uri.path}'],
                target: '${attributes.order}',
              },
            },
          ],
          handler: { type: 'StaticResponseHandler', config: { status: 200 } },
        },
      },
    },
  });
}

describe('portico validate provisions nothing', () => {
  it('an instance whose Redis and database hang: valid, no connection attempted', async () => {
    const started = performance.now();
    const result = await runPortico(['validate', '--base', instance(false)], { timeoutMs: 25_000 });
    const seconds = (performance.now() - started) / 1000;
    expect(result.stderr).not.toContain('PORTICO_E_');
    expect(result.code).toBe(0);
    expect(connections).toBe(0);
    // A process start and a validation; any connection attempt would have waited 30 seconds.
    expect(seconds).toBeLessThan(10);
  });

  it('still reports the settings of the objects it does not create', async () => {
    const base = instance(true);
    const result = await runPortico(['validate', '--base', base], { timeoutMs: 25_000 });
    expect(result.code).toBe(1);
    const file = path.join(base, 'config/routes/10-throttled.json');
    expect(result.stderr).toContain(
      `${file} $.handler.config.filters[0].config.rate.numberOfRequests: "many" is not an integer`,
    );
    expect(connections).toBe(0);
  });
});
