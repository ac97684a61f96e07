import { JdbcDataSource, jdbcDataSourceConfig } from '@portico/datasource-jdbc';
import { checkConfig, createMemoryLogger } from '@portico/gateway-core/runtime';
import { serviceUrl } from '@portico/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { json } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

const pgUrl = await serviceUrl('PORTICO_PG_URL', 'PostgreSQL');
const mysqlUrl = await serviceUrl('PORTICO_MYSQL_URL', 'MariaDB');

/** The JdbcDataSource settings of a service URL (`postgres://u:p@h:port/db`). */
function jdbcSettings(url: string, scheme: string) {
  const parsed = new URL(url);
  return {
    jdbcUrl: `jdbc:${scheme}://${parsed.host}${parsed.pathname}`,
    username: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
  };
}

/** Opens a pool outside the gateway, to prepare and remove the test tables. */
async function adminSource(settings: Record<string, unknown>): Promise<JdbcDataSource> {
  const { value } = checkConfig(jdbcDataSourceConfig, { ...settings, minIdle: 0, maxPoolSize: 1 });
  return JdbcDataSource.open('e2e-admin', value!, createMemoryLogger(), { prefill: false });
}

const table = `portico_e2e_users_${process.pid}`;

/**
 * SqlAttributesFilter in the real gateway, with real databases: each request's row, looked up with a
 * parameter taken from the request, reaches the real upstream as headers. The data sources are
 * declared once in config.json and named by routes with their JNDI-style names.
 */
describe.skipIf(!pgUrl || !mysqlUrl)('SqlAttributesFilter against PostgreSQL and MariaDB', () => {
  let upstream: Upstream;
  let gw: RunningGateway;
  const admins: JdbcDataSource[] = [];

  /** Filters passing the row's email and name on as headers, then removing the id header. */
  const passRowOn = [
    {
      type: 'HeaderFilter',
      config: {
        messageType: 'REQUEST',
        add: {
          'X-User-Email': ['${attributes.user.email}'],
          'X-User-Name': ['${attributes.user.fullname}'],
          'X-User-Found': ['${not empty attributes.user}'],
        },
      },
    },
    // Removed only after the first read of the target: the lookup is lazy and its parameter reads
    // this header when the target is first read.
    { type: 'HeaderFilter', config: { messageType: 'REQUEST', remove: ['X-User-Id'] } },
  ];

  /** A route `/<path>` looking the user up in `dataSource`, then running `readers` (none: never read). */
  const route = (
    path: string,
    dataSource: string,
    readers: unknown[] = passRowOn,
    statement = `SELECT email, fullname FROM ${table} WHERE id = ?`,
  ) => ({
    name: path,
    baseURI: upstream.url,
    condition: `\${request.uri.path == '/${path}'}`,
    handler: {
      type: 'Chain',
      config: {
        filters: [
          {
            type: 'SqlAttributesFilter',
            config: {
              dataSource,
              preparedStatement: statement,
              parameters: ["${request.headers['X-User-Id'][0]}"],
              target: '${attributes.user}',
            },
          },
          ...readers,
        ],
        handler: 'ReverseProxyHandler',
      },
    },
  });

  beforeAll(async () => {
    for (const settings of [jdbcSettings(pgUrl!, 'postgresql'), jdbcSettings(mysqlUrl!, 'mariadb')]) {
      const admin = await adminSource(settings);
      admins.push(admin);
      await admin.update(`DROP TABLE IF EXISTS ${table}`);
      await admin.update(
        `CREATE TABLE ${table} (id INT PRIMARY KEY, email VARCHAR(80), fullname VARCHAR(80))`,
      );
      await admin.update(`INSERT INTO ${table} VALUES (?, ?, ?), (?, ?, ?)`, [
        1,
        'alice@example.com',
        'Alice',
        2,
        'bob@example.com',
        'Bob',
      ]);
    }
    upstream = await startUpstream();
    const base = instanceDirectory({
      'config/config.json': {
        heap: [
          {
            name: 'jdbc/users-pg',
            type: 'JdbcDataSource',
            config: { ...jdbcSettings(pgUrl!, 'postgresql'), minIdle: 2 },
          },
          {
            name: 'UsersMaria',
            type: 'JdbcDataSource',
            config: { ...jdbcSettings(mysqlUrl!, 'mariadb'), minIdle: 2 },
          },
          {
            // Named by a route whose target nothing reads: its lookup must never run.
            name: 'UnreadUnreachable',
            type: 'JdbcDataSource',
            config: { jdbcUrl: 'jdbc:postgresql://127.0.0.1:1/none', minIdle: 0, connectionTimeout: 500 },
          },
          {
            name: 'Unreachable',
            type: 'JdbcDataSource',
            config: { jdbcUrl: 'jdbc:postgresql://127.0.0.1:1/none', minIdle: 0, connectionTimeout: 500 },
          },
        ],
        handler: { type: 'Router', name: '_router' },
      },
      'config/routes/pg.json': route('pg', 'java:comp/env/jdbc/users-pg'),
      'config/routes/maria.json': route('maria', 'java:comp/env/jdbc/UsersMaria'),
      'config/routes/down.json': route('down', 'Unreachable'),
      'config/routes/unread.json': route('unread', 'UnreadUnreachable', []),
      'config/routes/alice-only.json': route('alice-only', 'java:comp/env/jdbc/users-pg', [
        {
          type: 'ConditionEnforcementFilter',
          config: { condition: "${attributes.user.fullname == 'Alice'}" },
        },
      ]),
      'config/routes/broken.json': route(
        'broken',
        'UsersMaria',
        passRowOn,
        'SELECT email FROM no_such_table WHERE id = ?',
      ),
    });
    gw = await startGateway({ base });
  }, 60_000);

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
    for (const admin of admins) {
      await admin.update(`DROP TABLE IF EXISTS ${table}`);
      await admin.close();
    }
  });

  /** What the upstream saw for a request to `/<path>` as user `id`. */
  const upstreamSees = async (path: string, id: string) => {
    const { status, body } = await json<{ headers: Record<string, string> }>(`${gw.url}/${path}`, {
      headers: { 'X-User-Id': id },
    });
    expect(status).toBe(200);
    return body.headers;
  };

  it.each(['pg', 'maria'])('looks the request’s user up in %s and passes the row on', async (path) => {
    const alice = await upstreamSees(path, '1');
    expect(alice['x-user-email']).toBe('alice@example.com');
    expect(alice['x-user-name']).toBe('Alice');
    expect(alice['x-user-id']).toBeUndefined();
    const bob = await upstreamSees(path, '2');
    expect(bob['x-user-email']).toBe('bob@example.com');
  });

  it.each(['pg', 'maria'])('gives an empty map when %s has no such row', async (path) => {
    const nobody = await upstreamSees(path, '42');
    expect(nobody['x-user-found']).toBe('false');
    expect(nobody['x-user-email']).toBeUndefined();
  });

  it('serves many concurrent requests from the pools', async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => upstreamSees(i % 2 ? 'pg' : 'maria', String((i % 2) + 1))),
    );
    answers.forEach((headers, i) => {
      expect(headers['x-user-email']).toBe(i % 2 ? 'bob@example.com' : 'alice@example.com');
    });
  });

  it('still proxies, with an empty map, when the database is unreachable or the statement fails', async () => {
    for (const path of ['down', 'broken']) {
      const headers = await upstreamSees(path, '1');
      expect(headers['x-user-found']).toBe('false');
    }
    expect(gw.output()).toContain('the SQL lookup failed; the target is an empty map');
  });

  it('runs no lookup for a request whose target nothing reads', async () => {
    for (let i = 0; i < 3; i++) await upstreamSees('unread', '1');
    // A lookup started would fail within milliseconds (connection refused) and log its data source.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const failures = gw
      .output()
      .split('\n')
      .filter((line) => line.includes('the SQL lookup failed'));
    expect(failures.filter((line) => line.includes('UnreadUnreachable'))).toEqual([]);
  });

  it('lets a condition further on wait for the row it reads', async () => {
    await upstreamSees('alice-only', '1');
    const bob = await fetch(`${gw.url}/alice-only`, { headers: { 'X-User-Id': '2' } });
    expect(bob.status).toBe(403);
  });
});
