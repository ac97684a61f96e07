import { randomUUID } from 'node:crypto';
import type { AuditEvent } from '@portico/gateway-core/audit';

/** A prefix of index names unique to this run: tests delete `<prefix>*` when they end. */
export const RUN_PREFIX = `portico-test-es-${process.pid}-${Date.now().toString(36)}`;

let next = 0;

/** A fresh index name (the handler's `indexName`) for one test. */
export function uniqueIndexName(what: string): string {
  return `${RUN_PREFIX}-${what}-${next++}`;
}

/** A small REST client for checking what the engine holds. */
export function engine(url: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const answer = await fetch(`${url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: answer.status, body: (await answer.json()) as Record<string, any> };
  };
  return {
    call,
    async count(index: string): Promise<number> {
      await call('POST', `/${index}/_refresh`);
      const { status, body } = await call('GET', `/${index}/_count`);
      return status === 404 ? 0 : (body.count as number);
    },
    async ids(index: string): Promise<string[]> {
      await call('POST', `/${index}/_refresh`);
      const ids: string[] = [];
      let after: unknown[] | undefined;
      for (;;) {
        const { body } = await call('POST', `/${index}/_search`, {
          size: 10_000,
          _source: false,
          sort: [{ timestamp: 'asc' }, { transactionId: 'asc' }],
          ...(after ? { search_after: after } : {}),
        });
        const hits = body.hits.hits as { _id: string; sort: unknown[] }[];
        if (hits.length === 0) return ids;
        for (const hit of hits) ids.push(hit._id);
        after = hits.at(-1)!.sort;
      }
    },
    /** Deletes every index of this run. */
    cleanUp: () => call('DELETE', `/${RUN_PREFIX}*`),
  };
}

/** An access event as the service gives it, with a fresh `_id`. */
export function accessEvent(overrides: Record<string, unknown> = {}): AuditEvent {
  const id = randomUUID();
  return {
    _id: id,
    timestamp: new Date().toISOString(),
    eventName: 'OPENIG-HTTP-ACCESS',
    transactionId: `tx-${id}`,
    client: { ip: '127.0.0.1', port: 40000 },
    http: {
      request: {
        secure: false,
        method: 'GET',
        path: 'http://gw.example/p',
        headers: { host: ['gw.example'], 'x.custom.header': ['v'] },
        queryParameters: { 'a.b': ['1'] },
      },
    },
    response: { status: 'SUCCESSFUL', statusCode: '200', elapsedTime: 2, elapsedTimeUnits: 'MILLISECONDS' },
    ...overrides,
  };
}
