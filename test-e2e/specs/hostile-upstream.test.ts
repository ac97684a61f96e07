import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { type RawUpstream, startRawUpstream } from '../support/upstream.ts';

/**
 * An upstream that misbehaves, in the real `portico start`: what it sends costs the gateway a bounded
 * amount, and the client gets an answer.
 */
describe('a hostile upstream, through portico start', () => {
  let upstream: RawUpstream;
  let gw: RunningGateway;

  beforeAll(async () => {
    // Early Hints without end, as fast as the connection takes them: each interim answer was
    // activity for the silence clock, so the request stayed open and a core busy while the client
    // waited.
    upstream = await startRawUpstream((socket) => {
      socket.once('data', () => {
        const hints = Buffer.from(
          'HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n'.repeat(100),
        );
        const flood = () => {
          while (!socket.destroyed && socket.write(hints));
        };
        socket.on('drain', flood);
        flood();
      });
    });
    const base = instanceDirectory({
      'config/routes/hints.json': { name: 'hints', baseURI: upstream.url, handler: 'ReverseProxyHandler' },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
  });

  it('endless interim (1xx) answers: 502 once a thousand have come, not a request held open', async () => {
    const reply = await send(`${gw.url}/x`, { timeoutMs: 10_000 });
    expect(reply.status).toBe(502);
    expect(gw.output()).toContain('interim (1xx) responses');
  });
});
