import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { raw, send } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * Pipelined requests on one connection, in the real `portico start` in front of a slow upstream:
 * Node hands the gateway every request a client pipelines at once, so a connection writing thousands
 * of requests in one go had them all sent upstream together (every pooled upstream connection taken,
 * other clients waiting 15 s behind them, hundreds of megabytes). A connection has at most 8
 * requests in flight; past 64 waiting it is closed.
 */
describe('pipelined requests, through portico start', () => {
  let upstream: Upstream;
  let gw: RunningGateway;
  let inFlight = 0;
  let mostInFlight = 0;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        res.end(`answer to ${req.url}`);
      }, 100);
    });
    const base = instanceDirectory({
      'config/routes/proxy.json': { name: 'proxy', baseURI: upstream.url, handler: 'ReverseProxyHandler' },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
  });

  const requests = (count: number, last = 'Connection: close\r\n') =>
    Array.from(
      { length: count },
      (_, i) => `GET /p/${i} HTTP/1.1\r\nHost: x\r\n${i === count - 1 ? last : ''}\r\n`,
    ).join('');

  it('20 pipelined requests are all answered, in order, no more than 8 of them upstream at once', async () => {
    mostInFlight = 0;
    const reply = await raw(gw.url, requests(20));
    const answers = [...reply.text.matchAll(/answer to (\/p\/\d+)/g)].map((match) => match[1]);
    expect(answers).toEqual(Array.from({ length: 20 }, (_, i) => `/p/${i}`));
    expect(mostInFlight).toBe(8);
  });

  it('3,000 pipelined requests close their connection, and another client is answered meanwhile', async () => {
    mostInFlight = 0;
    const flood = raw(gw.url, requests(3000), { waitMs: 20_000 });
    const other = await send(`${gw.url}/other`);
    expect(other.text).toBe('answer to /other');
    const reply = await flood;
    expect(reply.closedByServer).toBe(true);
    expect([...reply.text.matchAll(/answer to/g)].length).toBeLessThan(100);
    expect(mostInFlight).toBeLessThanOrEqual(9);
    expect((await send(`${gw.url}/after`)).text).toBe('answer to /after');
  });
});
