import { type AuditEventHandler, parseQueryFilter } from '@portico/gateway-core/audit';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  accessEvent,
  configFor,
  createAccessTable,
  DATABASES,
  declare,
  events,
  rowsOf,
  uniqueTable,
} from './fixtures.ts';
import { jdbcHandlerOf } from './index.ts';

/**
 * On the real PostgreSQL and MariaDB of test-e2e/services: each test creates its own table (a name
 * unique to the run) with the default DDL, and drops it at the end.
 */
describe.each(DATABASES)('JdbcAuditEventHandler on $name', (db) => {
  const drops: (() => Promise<void>)[] = [];
  const handlers: AuditEventHandler[] = [];
  afterEach(async () => {
    await Promise.all(handlers.splice(0).map((h) => h.close()));
  });
  afterAll(async () => {
    await Promise.all(drops.map((drop) => drop()));
  });

  async function setUp(extra: Record<string, unknown> = {}, mapping?: Record<string, string>) {
    const table = uniqueTable();
    drops.push(await createAccessTable(db, table));
    const config = configFor(db, table, extra);
    if (mapping) config.tableMappings = [{ event: 'access', table, fieldToColumn: mapping }];
    const { handler: created, logger } = declare(config);
    const handler = await created;
    handlers.push(handler);
    handler.start?.(new Map());
    return { table, handler, logger, writer: jdbcHandlerOf(handler)! };
  }

  it('writes each event as a row of the default table, read back as it was', async () => {
    const { table, handler, writer } = await setUp();
    const batch = events(1, 5);
    await handler.publish('access', batch);
    expect(writer.counters).toMatchObject({ inserted: 5, statements: 5, failures: 0 });
    const rows = await rowsOf(db, table);
    expect(rows).toHaveLength(5);
    expect(rows[1]).toMatchObject({
      id: 'evt-000002',
      timestamp_: '2026-01-01T00:00:00.002Z',
      transactionid: 'tx-2',
      eventname: 'OPENIG-HTTP-ACCESS',
      userid: 'alice',
      trackingids: '["track-2"]',
      server_ip: '127.0.0.1',
      server_port: '8080',
      client_ip: '10.0.0.1',
      client_port: '50002',
      http_request_method: 'GET',
      http_request_path: 'http://gateway.example/app/2',
      http_request_queryparameters: '{"q":["v2"]}',
      http_request_headers: '{"host":["gateway.example"]}',
      http_request_cookies: '{}',
      http_response_headers: '{"content-type":["text/plain"]}',
      response_status: 'SUCCESSFUL',
      response_statuscode: '200',
      response_elapsedtime: '2',
      response_elapsedtimeunits: 'MILLISECONDS',
      client_host: null,
      request_protocol: null,
    });
    expect([true, 1]).toContain(rows[1]!.http_request_secure);
    expect(await handler.read!('access', 'evt-000002')).toEqual(batch[1]);
    expect(await handler.read!('access', 'nope')).toBeUndefined();
  });

  it('writes a buffered batch in multi-row INSERTs; a batch written again adds no duplicate', async () => {
    const { table, handler, writer } = await setUp({
      buffering: { enabled: true, writeInterval: '1 s', maxBatchedEvents: 100, writerThreads: 3 },
    });
    const batch = events(1, 1000);
    await handler.publish('access', batch);
    expect(writer.counters).toMatchObject({ inserted: 1000, statements: 10 });
    await handler.publish('access', batch.slice(500, 700));
    await handler.publish('access', [...batch.slice(990), accessEvent(1001)]);
    expect(writer.counters.inserted).toBe(1001);
    const rows = await rowsOf(db, table);
    expect(rows.map((r) => r.id)).toEqual([...batch, accessEvent(1001)].map((e) => e._id));
  });

  it('skips an event the database refuses for its data, writing the others of its batch', async () => {
    const { table, handler, writer, logger } = await setUp({
      buffering: { enabled: true, writeInterval: '1 s' },
    });
    const long = accessEvent(2, { userId: 'x'.repeat(300) });
    await handler.publish('access', [accessEvent(1), long, accessEvent(3)]);
    const rows = await rowsOf(db, table);
    if (db.name === 'postgres') {
      // VARCHAR(255): refused (SQLSTATE 22001), logged with its _id, counted; the others written.
      expect(rows.map((r) => r.id)).toEqual(['evt-000001', 'evt-000003']);
      expect(writer.counters.rejected).toBe(1);
      expect(logger.records.find((r) => r.level === 'error')).toMatchObject({
        message: 'the database refused an audit event, which is skipped',
        data: { _id: 'evt-000002', table },
      });
    } else {
      // INSERT IGNORE: MariaDB stores the value cut to its column (departure 72).
      expect(rows.map((r) => r.id)).toEqual(['evt-000001', 'evt-000002', 'evt-000003']);
      expect(rows[1]!.userid).toBe('x'.repeat(255));
      expect(writer.counters.rejected).toBe(0);
    }
  });

  it('holds events without autoFlush and writes them every writeInterval, at flush and at close', async () => {
    const { table, handler, writer } = await setUp({
      buffering: { enabled: true, writeInterval: '100 ms', autoFlush: false, maxSize: 50 },
    });
    await handler.publish('access', events(1, 30));
    expect(writer.counters.statements).toBe(0);
    await expect.poll(async () => (await rowsOf(db, table)).length, { timeout: 3000 }).toBe(30);
    await handler.publish('access', events(31, 60));
    await expect(handler.publish('access', events(61, 81))).rejects.toThrow(/buffer of 50 events is full/);
    await handler.flush!();
    expect(await rowsOf(db, table)).toHaveLength(60);
    await handler.publish('access', events(61, 70));
    await handler.close();
    expect(await rowsOf(db, table)).toHaveLength(70);
  });

  it('maps the fields it is told to, pointers with or without the slash', async () => {
    const { table, handler } = await setUp(
      {},
      { _id: 'id', timestamp: 'timestamp_', '/response/status': 'response_status' },
    );
    await handler.publish('access', [accessEvent(5)]);
    const [row] = await rowsOf(db, table);
    expect(row).toMatchObject({
      id: 'evt-000005',
      timestamp_: accessEvent(5).timestamp,
      response_status: 'FAILED',
      userid: null,
    });
    expect(await handler.read!('access', 'evt-000005')).toEqual({
      _id: 'evt-000005',
      timestamp: accessEvent(5).timestamp,
      response: { status: 'FAILED' },
    });
  });

  it('answers queries with the filter translated to SQL, values bound, bounded by the limit', async () => {
    const { handler } = await setUp();
    await handler.publish('access', [
      ...events(1, 20),
      accessEvent(21, { userId: 'a%b_c\\d' }),
      accessEvent(22, { userId: "o'brien" }),
    ]);
    const ids = async (filter: string, limit = 100) =>
      (await handler.query!('access', { filter: parseQueryFilter(filter), limit })).map((e) =>
        Number(e._id.slice(4)),
      );
    expect(await ids('true')).toHaveLength(22);
    expect(await ids('true', 5)).toEqual([1, 2, 3, 4, 5]);
    expect(await ids('false')).toEqual([]);
    expect(await ids('/response/status eq "FAILED"')).toEqual([5, 10, 15, 20]);
    expect(await ids('response/statusCode eq "500" and userId eq "alice"')).toEqual([10, 20]);
    expect(await ids('transactionId eq "tx-3" or transactionId eq "tx-4"')).toEqual([3, 4]);
    expect(await ids('http/request/path co "/app/1"')).toEqual([1, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    expect(await ids('transactionId sw "tx-2"')).toEqual([2, 20, 21, 22]);
    expect(await ids('userId co "%b_"')).toEqual([21]);
    expect(await ids('userId eq "a%b_c\\\\d"')).toEqual([21]);
    expect(await ids('userId eq "o\'brien"')).toEqual([22]);
    expect(await ids('userId sw "a%"')).toEqual([21]);
    expect(await ids('timestamp gt "2026-01-01T00:00:00.020Z"')).toEqual([21, 22]);
    expect(await ids('timestamp le "2026-01-01T00:00:00.002Z"')).toEqual([1, 2]);
    expect(await ids('userId pr and !(userId eq "bob") and !(userId eq "alice")')).toEqual([21, 22]);
    expect(await ids('client/host pr')).toEqual([]);
    expect(await ids('!(client/host eq "x")')).toHaveLength(22);
    expect(await ids('nothing/mapped eq "x" or _id eq "evt-000007"')).toEqual([7]);
    const [event] = await handler.query!('access', {
      filter: parseQueryFilter('_id eq "evt-000004"'),
      limit: 1,
    });
    expect(event).toEqual(accessEvent(4));
  });
});
