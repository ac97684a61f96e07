import type http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import {
  connectionRefused,
  errorCode,
  isRetryableReset,
  keepAliveAgent,
  type Reply,
  send,
  waitFor,
} from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

const CLIENTS = 16;
const UPSTREAM_DELAY_MS = 200;

interface Outcome {
  id: string;
  sentAt: number;
  endedAt: number;
  status?: number;
  body?: string;
  error?: string;
  /** The first attempt's id, when it met a kept-alive connection closing as idle and was retried. */
  retriedAfter?: string;
}

/**
 * SIGTERM while keep-alive clients keep the gateway busy with slow requests: the requests in flight
 * complete, none fails, the listener refuses new connections at once, and the process exits 0 as
 * soon as the last one is answered (not after the grace period).
 */
describe('graceful shutdown under load', () => {
  let upstream: Upstream;
  let gw: RunningGateway;
  /** When the upstream received each request id. */
  const reachedUpstream = new Map<string, number>();
  let pendingUpstream = 0;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      const id = String(req.headers['x-request-id']);
      reachedUpstream.set(id, Date.now());
      pendingUpstream++;
      req.resume();
      setTimeout(() => {
        pendingUpstream--;
        const body = `done ${id}`;
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
      }, UPSTREAM_DELAY_MS);
    });
    const base = instanceDirectory({
      'config/admin.json': { limits: { shutdownGracePeriod: '20 seconds' } },
      'config/routes/slow.json': { name: 'slow', baseURI: upstream.url, handler: 'ReverseProxyHandler' },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    await gw?.stop();
    await upstream?.close();
  });

  it('finishes every request in flight, fails none, exits 0 and refuses new connections', async () => {
    const outcomes: Outcome[] = [];

    const clients = Array.from({ length: CLIENTS }, async (_, client) => {
      // Staggered, so that at any moment most clients have a request at the upstream.
      await sleep((client * UPSTREAM_DELAY_MS) / CLIENTS);
      const agent = keepAliveAgent(1);
      try {
        // Until refused a connection (at most 100 requests).
        for (let n = 0; n < 100; n++) {
          const outcome: Outcome = { id: `${client}-${n}`, sentAt: Date.now(), endedAt: 0 };
          outcomes.push(outcome);
          // GET and PUT (with a body): idempotent, so a conforming client may retry them.
          const attempt = (id: string, via: http.Agent | false) =>
            send(`${gw.url}/work/${id}`, {
              method: n % 2 ? 'PUT' : 'GET',
              headers: { 'X-Request-Id': id },
              body: n % 2 ? `payload ${id}` : undefined,
              agent: via,
              timeoutMs: 25_000,
            });
          try {
            let reply: Reply;
            try {
              reply = await attempt(outcome.id, agent);
            } catch (error) {
              if (!isRetryableReset(error)) throw error;
              // The kept-alive connection was closed as idle while this request was on its way:
              // the one race HTTP/1.1 leaves, which clients settle by retrying on a new connection.
              outcome.retriedAfter = outcome.id;
              outcome.id = `${outcome.id}-retry`;
              reply = await attempt(outcome.id, false);
            }
            outcome.status = reply.status;
            outcome.body = reply.text;
          } catch (error) {
            outcome.error = errorCode(error);
          }
          outcome.endedAt = Date.now();
          if (outcome.error === 'ECONNREFUSED') break;
        }
      } finally {
        agent.destroy();
      }
    });

    // Let the load settle, then stop the gateway while requests wait at the upstream.
    await sleep(3 * UPSTREAM_DELAY_MS);
    await waitFor('requests at the upstream', () => pendingUpstream >= CLIENTS / 2, { intervalMs: 2 });
    const terminatedAt = Date.now();
    const code = await gw.stop('SIGTERM');
    const exitedAt = Date.now();
    await Promise.all(clients);

    const answered = outcomes.filter((o) => o.status !== undefined);
    const refused = outcomes.filter((o) => o.error === 'ECONNREFUSED');
    const failed = outcomes.filter((o) => o.error !== undefined && o.error !== 'ECONNREFUSED');
    const summary = JSON.stringify(
      {
        answered: answered.length,
        failed: failed.map((o) => `${o.id}: ${o.error} (sent ${o.sentAt - terminatedAt} ms after SIGTERM)`),
        refused: refused.length,
        retried: outcomes.filter((o) => o.retriedAfter).map((o) => o.retriedAfter),
        exitedAfterMs: exitedAt - terminatedAt,
      },
      null,
      2,
    );

    expect(code).toBe(0);
    // No request failed other than by being refused a connection once the gateway had stopped
    // listening: nothing reset, nothing cut short, nothing timed out.
    expect(failed, summary).toEqual([]);
    // Every answer is a complete 200 with the body of its own request.
    for (const o of answered) {
      expect(o.status, o.id).toBe(200);
      expect(o.body, o.id).toBe(`done ${o.id}`);
    }
    // The requests at the upstream when SIGTERM came were all answered to their clients.
    const inFlight = [...reachedUpstream].filter(([, at]) => at < terminatedAt).map(([id]) => id);
    const answeredIds = new Set(answered.map((o) => o.id));
    const lateAnswers = answered.filter((o) => o.sentAt < terminatedAt && o.endedAt > terminatedAt);
    expect(lateAnswers.length, summary).toBeGreaterThanOrEqual(CLIENTS / 2);
    expect(inFlight.filter((id) => !answeredIds.has(id))).toEqual([]);
    // Whatever reached the upstream, before or after SIGTERM, was answered to its client.
    expect([...reachedUpstream.keys()].filter((id) => !answeredIds.has(id))).toEqual([]);
    // A retried request had not been taken by the gateway: it never reached the upstream.
    for (const o of outcomes) if (o.retriedAfter) expect(reachedUpstream.has(o.retriedAfter)).toBe(false);
    // The gateway stopped listening at once: every client was refused, some while others were still
    // being answered; and it exited once they were, not after the 20 second grace period.
    expect(refused.length, summary).toBe(CLIENTS);
    expect(refused.some((o) => o.endedAt < exitedAt - 20)).toBe(true);
    expect(exitedAt - terminatedAt, summary).toBeLessThan(5000);
    expect(answered.length).toBeGreaterThanOrEqual(CLIENTS);

    expect(await connectionRefused(gw.url)).toBe(true);
    expect(gw.output()).toContain('"msg":"stopped"');
  }, 40_000);
});

/**
 * SIGHUP (a closed terminal, or an operator used to daemons that reload on it) stops the gateway as
 * SIGTERM does, as the incumbents' JVM runs its shutdown hooks on SIGHUP: a response streaming when
 * it comes is finished, and the process exits 0. Node's default for SIGHUP ended the process at once
 * (exit by the signal), cutting every response in flight.
 */
describe('SIGHUP stops gracefully, as SIGTERM does (the incumbents’ JVM runs its shutdown hooks on it)', () => {
  const CHUNKS = 10;
  const CHUNK_DELAY_MS = 100;
  let upstream: Upstream;
  let reached: () => void;
  let reachedUpstream: Promise<void>;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      req.resume();
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      reached();
      let sent = 0;
      const next = () => {
        res.write(`chunk ${sent}\n`);
        if (++sent === CHUNKS) res.end();
        else setTimeout(next, CHUNK_DELAY_MS);
      };
      next();
    });
  });

  afterAll(async () => {
    await upstream?.close();
  });

  for (const workers of [1, 2]) {
    it(`finishes a streaming response in flight and exits 0 (${workers} worker${workers > 1 ? 's' : ''})`, async () => {
      reachedUpstream = new Promise((resolve) => (reached = resolve));
      const base = instanceDirectory({
        'config/admin.json': { limits: { shutdownGracePeriod: '20 seconds' } },
        'config/routes/stream.json': {
          name: 'stream',
          baseURI: upstream.url,
          handler: 'ReverseProxyHandler',
        },
      });
      const gw = await startGateway({ base, workers });
      try {
        const reply = send(`${gw.url}/stream`, { timeoutMs: 10_000 });
        reply.catch(() => {});
        await reachedUpstream;
        const code = await gw.stop('SIGHUP');
        const { status, text } = await reply;
        expect(status).toBe(200);
        expect(text).toBe(Array.from({ length: CHUNKS }, (_, i) => `chunk ${i}\n`).join(''));
        expect(code).toBe(0);
        expect(gw.output()).toContain('"signal":"SIGHUP"');
      } finally {
        await gw.stop('SIGKILL');
      }
    });
  }
});
