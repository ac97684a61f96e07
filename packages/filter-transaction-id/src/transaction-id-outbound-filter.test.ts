import { type Handler, Request } from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import { upstreamForSuite } from '@portico/test-support';
import { describe, expect, it } from 'vitest';
import plugin, { TRANSACTION_ID_HEADER } from './index.ts';

const FILE = 'routes/transactions.json';
const upstream = upstreamForSuite();

/** The corpus's shape: a Chain of the filter in front of a ClientHandler, named as a client handler. */
function heapWith(config?: unknown) {
  return pluginHeap({
    plugins: [plugin],
    file: FILE,
    heap: [
      {
        name: 'TransactionIdOutboundFilter',
        type: 'TransactionIdOutboundFilter',
        ...(config === undefined ? {} : { config }),
      },
      {
        name: 'FRClientHandler',
        type: 'Chain',
        config: { filters: ['TransactionIdOutboundFilter'], handler: { type: 'ClientHandler' } },
      },
      { name: 'Vendor', type: 'VendorClientHandler' },
    ],
  }).heap;
}

const header = TRANSACTION_ID_HEADER.toLowerCase();

describe('TransactionIdOutboundFilter', () => {
  it("sends the request's transaction ID with a sub-transaction number", async () => {
    const heap = heapWith();
    const client = await heap.get<Handler>('FRClientHandler', 'handler');
    const context = testContext({ transactionId: 'tx-1' });
    const response = await client.handle(context, new Request({ uri: `${upstream.url}/a` }));
    expect(response.status).toBe(200);
    await response.entity.text();
    expect(upstream.received.at(-1)?.headers[header]).toBe('tx-1/0');
    await heap.destroy();
  });

  it('numbers the calls of one request from 0, and each request on its own', async () => {
    const heap = heapWith();
    const client = await heap.get<Handler>('FRClientHandler', 'handler');
    const first = testContext({ transactionId: 'tx-a' });
    const second = testContext({ transactionId: 'tx-b' });
    for (const context of [first, first, second, first.child('extra', {})]) {
      const response = await client.handle(context, new Request({ uri: `${upstream.url}/n` }));
      await response.entity.text();
    }
    expect(upstream.received.slice(-4).map((r) => r.headers[header])).toEqual([
      'tx-a/0',
      'tx-a/1',
      'tx-b/0',
      'tx-a/2',
    ]);
    await heap.destroy();
  });

  it('replaces a transaction ID the client sent', async () => {
    const heap = heapWith();
    const client = await heap.get<Handler>('FRClientHandler', 'handler');
    const request = new Request({ uri: `${upstream.url}/`, headers: { [TRANSACTION_ID_HEADER]: 'forged' } });
    await (await client.handle(testContext({ transactionId: 'tx-2' }), request)).entity.text();
    expect(upstream.received.at(-1)?.headers[header]).toBe('tx-2/0');
    await heap.destroy();
  });

  it("shares the request's numbering with the core's VendorClientHandler", async () => {
    const heap = heapWith();
    const viaFilter = await heap.get<Handler>('FRClientHandler', 'handler');
    const vendor = await heap.get<Handler>('Vendor', 'handler');
    const context = testContext({ transactionId: 'tx-3' });
    await (await viaFilter.handle(context, new Request({ uri: `${upstream.url}/1` }))).entity.text();
    await (await vendor.handle(context, new Request({ uri: `${upstream.url}/2` }))).entity.text();
    expect(upstream.received.slice(-2).map((r) => r.headers[header])).toEqual(['tx-3/0', 'tx-3/1']);
    await heap.destroy();
  });

  it('takes an empty config', async () => {
    const heap = heapWith({});
    await expect(heap.get('FRClientHandler', 'handler')).resolves.toBeDefined();
    await heap.destroy();
  });

  it('has no settings: any is refused, at its path', async () => {
    const heap = heapWith({ header: 'X-Request-Id' });
    await expect(heap.get('FRClientHandler', 'handler')).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: FILE, jsonPath: '$.heap[0].config.header' },
    });
  });
});
