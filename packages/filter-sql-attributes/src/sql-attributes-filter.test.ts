import { readFileSync } from 'node:fs';
import path from 'node:path';
import jdbcPlugin, { type JdbcDataSource } from '@portico/datasource-jdbc';
import {
  bindingsFor,
  type Context,
  compile,
  evaluateSettled,
  type Filter,
  type Handler,
  LazyMap,
  Request,
  Response,
} from '@portico/gateway-core';
import { parseConfigJson, pluginHeap, testContext } from '@portico/gateway-core/testing';
import { corpusRoot, requireCorpusUnderCi, serviceUrl } from '@portico/test-support';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import plugin from './index.ts';

const pgUrl = await serviceUrl('PORTICO_PG_URL', 'PostgreSQL');
const mysqlUrl = await serviceUrl('PORTICO_MYSQL_URL', 'MariaDB');

/** The JDBC settings of a service URL (`postgres://u:p@h:port/db` → jdbc:postgresql://h:port/db). */
function jdbcSettings(url: string, scheme: string, extra: Record<string, unknown> = {}) {
  const parsed = new URL(url);
  return {
    jdbcUrl: `jdbc:${scheme}://${parsed.host}${parsed.pathname}`,
    username: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    minIdle: 0,
    ...extra,
  };
}

const UNREACHABLE = { jdbcUrl: 'jdbc:postgresql://127.0.0.1:1/none', minIdle: 0, connectionTimeout: 300 };

const heaps: { destroy(): Promise<void> }[] = [];
afterEach(async () => {
  for (const heap of heaps.splice(0)) await heap.destroy();
});

/** The filter created through a real heap, next to a JdbcDataSource named as given. */
async function filterFrom(
  config: Record<string, unknown>,
  dataSource: { name?: string; config: unknown } = { config: UNREACHABLE },
) {
  const { heap, logger } = pluginHeap({
    plugins: [jdbcPlugin, plugin],
    file: 'routes/sql.json',
    heap: [
      { name: dataSource.name ?? 'UsersDb', type: 'JdbcDataSource', config: dataSource.config },
      { name: 'Lookup', type: 'SqlAttributesFilter', config },
    ],
  });
  heaps.push(heap);
  return { filter: await heap.get<Filter>('Lookup', 'filter'), heap, logger };
}

/**
 * Runs a request through the filter; the next handler records what `expression` reads, evaluated
 * settled as every evaluation site of the gateway does (null: the handler reads nothing).
 */
async function run(
  filter: Filter,
  expression: string | null,
  context: Context = testContext(),
  request?: Request,
) {
  const read = expression === null ? undefined : compile(expression, 'any');
  let seen: unknown;
  let called = false;
  await filter.filter(context, request ?? new Request({ uri: 'http://app/' }), {
    async handle(ctx, req) {
      called = true;
      if (read) seen = await evaluateSettled(read, bindingsFor(ctx, req));
      return Response.empty(200);
    },
  });
  return { seen, called, context };
}

describe('SqlAttributesFilter configuration', () => {
  const valid = { dataSource: 'UsersDb', preparedStatement: 'SELECT 1', target: '${attributes.row}' };

  it('requires dataSource, preparedStatement and target, naming each JSON path', async () => {
    for (const field of ['dataSource', 'preparedStatement', 'target']) {
      const config: Record<string, unknown> = { ...valid };
      delete config[field];
      await expect(filterFrom(config)).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: 'routes/sql.json', jsonPath: `$.heap[1].config.${field}` },
      });
    }
  });

  it('refuses an empty statement', async () => {
    await expect(filterFrom({ ...valid, preparedStatement: '  ' })).rejects.toMatchObject({
      details: { jsonPath: '$.heap[1].config.preparedStatement' },
    });
  });

  it('refuses a dataSource that names no data source, at its JSON path', async () => {
    await expect(filterFrom({ ...valid, dataSource: 'java:comp/env/jdbc/nothing' })).rejects.toMatchObject({
      code: 'PORTICO_E_REFERENCE',
      details: { file: 'routes/sql.json', jsonPath: '$.heap[1].config.dataSource' },
    });
  });

  it('finds the data source by its JNDI-style name', async () => {
    const { filter } = await filterFrom(
      { ...valid, dataSource: 'java:comp/env/jdbc/users' },
      { name: 'jdbc/users', config: UNREACHABLE },
    );
    expect(filter).toBeDefined();
  });

  it('defaults parameters to none', async () => {
    await expect(filterFrom(valid)).resolves.toBeDefined();
  });

  it('refuses a number of parameters different from the placeholders', async () => {
    await expect(
      filterFrom({ ...valid, preparedStatement: 'SELECT ? , ?', parameters: ['a'] }),
    ).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      message: 'the statement has 2 placeholders but 1 parameter is given',
      details: { jsonPath: '$.heap[1].config.parameters' },
    });
    await expect(filterFrom({ ...valid, parameters: ['a'] })).rejects.toThrow(/0 placeholders but 1/);
  });

  it('refuses parameters that are not expressions, and a target that cannot be assigned', async () => {
    await expect(
      filterFrom({ ...valid, preparedStatement: 'SELECT ?', parameters: ['${unclosed'] }),
    ).rejects.toMatchObject({ code: 'PORTICO_E_EXPRESSION' });
    await expect(filterFrom({ ...valid, target: '${1 + 2}' })).rejects.toMatchObject({
      code: 'PORTICO_E_EXPRESSION',
    });
    await expect(filterFrom({ ...valid, parameters: 'x' })).rejects.toMatchObject({
      details: { jsonPath: '$.heap[1].config.parameters' },
    });
  });

  it.skipIf(!requireCorpusUnderCi())(
    'loads the incumbent documentation’s route unchanged, given a data source of that name',
    async () => {
      const file = path.join(
        corpusRoot,
        'OpenIdentityPlatform__OpenIG/openig-doc/src/main/docbkx/gateway-guide/resources/config/routes/03-sql.json',
      );
      const route = parseConfigJson(readFileSync(file, 'utf8'), file) as {
        handler: { config: { filters: unknown[] } };
      };
      const [sqlFilter] = route.handler.config.filters as { config: Record<string, unknown> }[];
      const { filter } = await filterFrom(sqlFilter!.config, { name: 'jdbc/forgerock', config: UNREACHABLE });
      expect(filter).toBeDefined();
    },
  );
});

describe('SqlAttributesFilter failures', () => {
  const config = {
    dataSource: 'UsersDb',
    preparedStatement: 'SELECT email FROM users WHERE id = ?',
    parameters: ['${attributes.id}'],
    target: '${attributes.user}',
  };

  it('sets an empty map, logs, and goes on when the database cannot be reached', async () => {
    const { filter, logger } = await filterFrom(config);
    const { seen, called, context } = await run(filter, '${attributes.user.email}');
    expect(called).toBe(true);
    expect(seen).toBeNull();
    expect(context.attributes.user).toBeInstanceOf(LazyMap);
    expect((context.attributes.user as LazyMap).keys()).toEqual([]);
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'the SQL lookup failed; the target is an empty map',
        data: expect.objectContaining({ filter: 'Lookup', dataSource: 'UsersDb' }),
      }),
    );
  });

  it('takes no connection when nothing reads the target', async () => {
    const { filter, logger } = await filterFrom(config);
    const { called, context } = await run(filter, null);
    expect(called).toBe(true);
    expect((context.attributes.user as LazyMap).loaded).toBe(false);
    // A connection attempt to the unreachable database would fail within milliseconds and be logged.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(logger.records.filter((r) => r.level === 'error')).toEqual([]);
  });

  it('logs repeated failures once a minute, with a count of those held back', async () => {
    const { filter, logger } = await filterFrom(config);
    for (let i = 0; i < 3; i++) await run(filter, '${attributes.user.email}');
    const failures = logger.records.filter((r) => r.message.startsWith('the SQL lookup failed'));
    expect(failures).toHaveLength(1);
  });

  it('sets an empty map when the data source has been closed', async () => {
    const { filter, heap, logger } = await filterFrom(config);
    const source = await heap.get<JdbcDataSource>('UsersDb');
    await source.close();
    const { seen, called } = await run(filter, '${empty attributes.user}');
    expect(called).toBe(true);
    expect(seen).toBe(true);
    expect(JSON.stringify(logger.records)).toContain('is closed');
  });
});

const databases = [
  { name: 'PostgreSQL', url: pgUrl, scheme: 'postgresql', nextval: (seq: string) => `nextval('${seq}')` },
  { name: 'MariaDB', url: mysqlUrl, scheme: 'mariadb', nextval: (seq: string) => `NEXTVAL(${seq})` },
];

for (const db of databases) {
  describe.skipIf(!db.url)(`SqlAttributesFilter on ${db.name}`, () => {
    const table = `portico_sqlattr_${db.scheme}_${process.pid}`;
    // Each query of the counting statement takes a number from this sequence: it counts queries.
    const sequence = `${table}_queries`;
    const dataSource = () => ({ config: jdbcSettings(db.url!, db.scheme) });
    let setup: { destroy(): Promise<void> } | undefined;
    let admin: JdbcDataSource;

    beforeAll(async () => {
      const { heap } = pluginHeap({
        plugins: [jdbcPlugin],
        heap: [{ name: 'Admin', type: 'JdbcDataSource', config: jdbcSettings(db.url!, db.scheme) }],
      });
      setup = heap;
      admin = await heap.get<JdbcDataSource>('Admin');
      await admin.update(`DROP TABLE IF EXISTS ${table}`);
      await admin.update(`DROP SEQUENCE IF EXISTS ${sequence}`);
      await admin.update(`CREATE SEQUENCE ${sequence}`);
      await admin.update(
        `CREATE TABLE ${table} (id INT PRIMARY KEY, email VARCHAR(80), fullname VARCHAR(80), active BOOLEAN)`,
      );
      await admin.update(`INSERT INTO ${table} VALUES (?, ?, ?, ?), (?, ?, ?, ?)`, [
        1,
        'alice@example.com',
        'Alice',
        true,
        2,
        'bob@example.com',
        "Bob O'Neil",
        false,
      ]);
    });

    afterAll(async () => {
      await admin?.update(`DROP TABLE IF EXISTS ${table}`);
      await admin?.update(`DROP SEQUENCE IF EXISTS ${sequence}`);
      await setup?.destroy();
    });

    const lookup = (extra: Record<string, unknown> = {}) => ({
      dataSource: 'UsersDb',
      preparedStatement: `SELECT email, fullname FROM ${table} WHERE id = ?`,
      parameters: ["${request.headers['X-User-Id'][0]}"],
      target: '${attributes.user}',
      ...extra,
    });
    const requestFor = (id: string) => new Request({ uri: 'http://app/', headers: { 'X-User-Id': id } });

    it('exposes the first row as a map of column → value to the next handler', async () => {
      const { filter } = await filterFrom(lookup(), dataSource());
      const { seen } = await run(
        filter,
        '${attributes.user.email} ${attributes.user.fullname}',
        undefined,
        requestFor('2'),
      );
      expect(seen).toBe("bob@example.com Bob O'Neil");
    });

    /** How many numbers the sequence gave so far (the counting statement's queries). */
    async function queriesSoFar(): Promise<number> {
      const [row] = await admin.query(`SELECT ${db.nextval(sequence)} AS n`);
      return Number(Object.values(row!)[0]) - 1;
    }

    it('queries only when the target is read, once however often it is read', async () => {
      const before = await queriesSoFar();
      const { filter } = await filterFrom(
        lookup({
          preparedStatement: `SELECT email, ${db.nextval(sequence)} AS n FROM ${table} WHERE id = ?`,
        }),
        dataSource(),
      );
      const unread = await run(filter, null, undefined, requestFor('1'));
      expect((unread.context.attributes.user as LazyMap).loaded).toBe(false);
      const { seen, context } = await run(
        filter,
        '${attributes.user.email} ${empty attributes.user} ${attributes.user.email}',
        undefined,
        requestFor('1'),
      );
      expect(seen).toBe('alice@example.com false alice@example.com');
      expect(compile('${attributes.user.email}').evaluate({ attributes: context.attributes })).toBe(
        'alice@example.com',
      );
      // The sequence's own call made one more: the unread request made none, the read one made one.
      expect((await queriesSoFar()) - before).toBe(2);
    });

    it('evaluates the parameters on the first read, not when the request passes the filter', async () => {
      const { filter } = await filterFrom(lookup({ parameters: ['${attributes.id}'] }), dataSource());
      const email = compile('${attributes.user.email}');
      let seen: unknown;
      await filter.filter(testContext(), new Request({ uri: 'http://app/' }), {
        async handle(ctx, req) {
          ctx.attributes.id = 2;
          seen = await evaluateSettled(email, bindingsFor(ctx, req));
          return Response.empty(200);
        },
      });
      expect(seen).toBe('bob@example.com');
    });

    it('makes handlers and filters further on wait for the row they read', async () => {
      const { heap } = pluginHeap({
        plugins: [jdbcPlugin, plugin],
        heap: [
          { name: 'UsersDb', type: 'JdbcDataSource', config: dataSource().config },
          { name: 'Lookup', type: 'SqlAttributesFilter', config: lookup() },
          {
            name: 'Answer',
            type: 'Chain',
            config: {
              filters: ['Lookup'],
              handler: {
                type: 'DispatchHandler',
                config: {
                  bindings: [
                    {
                      condition: "${attributes.user.fullname == 'Alice'}",
                      handler: {
                        type: 'StaticResponseHandler',
                        config: { status: 200, headers: { 'X-Email': ['${attributes.user.email}'] } },
                      },
                    },
                    { handler: { type: 'StaticResponseHandler', config: { status: 403 } } },
                  ],
                },
              },
            },
          },
        ],
      });
      heaps.push(heap);
      const answer = await heap.get<Handler>('Answer', 'handler');
      const alice = await answer.handle(testContext(), requestFor('1'));
      expect(alice.status).toBe(200);
      expect(alice.headers.get('X-Email')).toBe('alice@example.com');
      expect((await answer.handle(testContext(), requestFor('2'))).status).toBe(403);
    });

    it('evaluates the parameters per request', async () => {
      const { filter } = await filterFrom(lookup(), dataSource());
      expect((await run(filter, '${attributes.user.email}', undefined, requestFor('1'))).seen).toBe(
        'alice@example.com',
      );
      expect((await run(filter, '${attributes.user.email}', undefined, requestFor('2'))).seen).toBe(
        'bob@example.com',
      );
    });

    it('gives the map the map operations expressions use', async () => {
      const { filter } = await filterFrom(lookup(), dataSource());
      const { seen } = await run(
        filter,
        "${attributes.user.containsKey('email')}/${length(attributes.user)}/${keyMatch(attributes.user, '^full.*')}",
        undefined,
        requestFor('1'),
      );
      expect(seen).toBe('true/2/fullname');
    });

    it('sets an empty map when no row matches', async () => {
      const { filter, logger } = await filterFrom(lookup(), dataSource());
      const { seen } = await run(filter, '${empty attributes.user}', undefined, requestFor('99'));
      expect(seen).toBe(true);
      expect(logger.records.filter((r) => r.level === 'error')).toEqual([]);
    });

    it('keeps only the first of several rows', async () => {
      const { filter } = await filterFrom(
        lookup({
          preparedStatement: `SELECT email FROM ${table} WHERE id >= ? ORDER BY id`,
          parameters: ['${1}'],
        }),
        dataSource(),
      );
      expect((await run(filter, '${attributes.user.email}')).seen).toBe('alice@example.com');
    });

    it('passes parameter values with their types, nulls included', async () => {
      const { filter } = await filterFrom(
        lookup({
          preparedStatement: `SELECT email FROM ${table} WHERE active = ? AND id = COALESCE(?, id)`,
          parameters: ['${true}', '${attributes.missing}'],
        }),
        dataSource(),
      );
      expect((await run(filter, '${attributes.user.email}')).seen).toBe('alice@example.com');
    });

    it('sets an empty map and logs when the statement fails', async () => {
      const { filter, logger } = await filterFrom(
        lookup({ preparedStatement: 'SELECT nothing FROM no_such_table WHERE id = ?' }),
        dataSource(),
      );
      const { seen, called } = await run(filter, '${empty attributes.user}', undefined, requestFor('1'));
      expect(called).toBe(true);
      expect(seen).toBe(true);
      expect(logger.records.some((r) => r.level === 'error')).toBe(true);
    });

    it('writes to any assignable target, such as the session', async () => {
      const { filter } = await filterFrom(lookup({ target: '${session.profile}' }), dataSource());
      const { context } = await run(filter, '${session.profile.email}', undefined, requestFor('1'));
      expect(JSON.parse(JSON.stringify(context.session))).toEqual({
        profile: { email: 'alice@example.com', fullname: 'Alice' },
      });
    });
  });
}
