import type http from 'node:http';
import { serviceUrl } from '@portico/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { keepAliveAgent, send } from '../support/http.ts';
import { nginxInstalled, type RunningNginx, startNginx } from '../support/nginx.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

const redisUrl = await serviceUrl('PORTICO_REDIS_URL', 'Redis');

/** Plugins from their sources, as the repository runs them (their dist/ may not be built). */
const FROM_SOURCES = { NODE_OPTIONS: '--conditions=portico-source' };

/** The name each instance answers with: the `X-Instance` header, from its environment. */
const INSTANCE = "${env['PORTICO_INSTANCE_NAME']}";

/**
 * Beyond one machine (issue 43), on this one: three `portico start` instances behind a real nginx
 * balancing round robin, sharing one Redis for throttling buckets and server-side sessions. One
 * global limit holds across the three; a session made through one instance is read through the
 * others; an instance killed under load leaves the others serving, and no request fails beyond
 * those the killed instance held. Each test prints its figures (requests per instance, the limit's
 * accuracy, the failures).
 */
describe.skipIf(!redisUrl || !nginxInstalled())('three instances behind nginx, sharing Redis', () => {
  const LIMIT = 300;
  const run = `scale-${process.pid}-${Date.now()}`;
  let upstream: Upstream;
  /** Requests the upstream holds now, by instance; with a delay, so that some are in flight. */
  const inFlight: Record<string, number> = {};
  const served: Record<string, number> = {};
  const gateways: RunningGateway[] = [];
  let nginx: RunningNginx;

  beforeAll(async () => {
    upstream = await startUpstream((request, response) => {
      const name = String(request.headers['x-instance']);
      inFlight[name] = (inFlight[name] ?? 0) + 1;
      served[name] = (served[name] ?? 0) + 1;
      setTimeout(() => {
        inFlight[name]!--;
        response.end(name);
      }, 20);
    });
    const files = {
      'config/admin.json': {
        session: { store: { type: 'redis', uri: redisUrl, prefix: `portico:${run}:session:` } },
      },
      'config/routes/10-limited.json': {
        condition: "${request.uri.path == '/limited'}",
        handler: {
          type: 'Chain',
          config: {
            filters: [
              {
                type: 'ThrottlingFilter',
                config: {
                  requestGroupingPolicy: run,
                  rate: { numberOfRequests: LIMIT, duration: '1 hour' },
                  redis: { uri: redisUrl },
                },
              },
            ],
            handler: {
              type: 'StaticResponseHandler',
              config: { status: 200, headers: { 'X-Instance': [INSTANCE] }, entity: 'ok' },
            },
          },
        },
      },
      'config/routes/20-session-set.json': {
        condition: "${request.uri.path == '/session/set'}",
        handler: {
          type: 'Chain',
          config: {
            filters: [
              {
                type: 'AssignmentFilter',
                config: { onRequest: [{ target: '${session.user}', value: 'alice' }] },
              },
            ],
            handler: {
              type: 'StaticResponseHandler',
              config: { status: 200, headers: { 'X-Instance': [INSTANCE] }, entity: 'set' },
            },
          },
        },
      },
      'config/routes/21-session-get.json': {
        condition: "${request.uri.path == '/session/get'}",
        handler: {
          type: 'StaticResponseHandler',
          config: { status: 200, headers: { 'X-Instance': [INSTANCE] }, entity: 'user=${session.user}' },
        },
      },
      'config/routes/30-load.json': {
        condition: "${request.uri.path == '/load'}",
        baseURI: upstream.url,
        handler: {
          type: 'Chain',
          config: {
            filters: [
              { type: 'HeaderFilter', config: { messageType: 'REQUEST', add: { 'X-Instance': [INSTANCE] } } },
            ],
            handler: 'ReverseProxyHandler',
          },
        },
      },
    };
    for (const name of ['gw1', 'gw2', 'gw3'])
      gateways.push(
        await startGateway({
          base: instanceDirectory(files),
          env: { ...FROM_SOURCES, PORTICO_INSTANCE_NAME: name },
        }),
      );
    const servers = gateways.map((gw) => `    server ${new URL(gw.url).host} max_fails=1 fail_timeout=30s;`);
    nginx = await startNginx(
      ({ port }) => `  access_log off;
  upstream gateways {
${servers.join('\n')}
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${port};
    location = /ready { return 200 'ready'; }
    location / {
      proxy_pass http://gateways;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_next_upstream error timeout;
    }
  }`,
    );
  }, 60_000);

  afterAll(async () => {
    await nginx?.stop();
    for (const gw of gateways) await gw.stop();
    await upstream?.close();
  });

  /** `count` GETs of `path` through nginx, `concurrency` at a time; each answer's status and instance. */
  async function load(
    path: string,
    count: number,
    concurrency: number,
    headers: http.OutgoingHttpHeaders = {},
  ) {
    const agent = keepAliveAgent(concurrency);
    const answers: { status: number; instance: string; text: string }[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < count) {
          next++;
          const reply = await send(`${nginx.url}${path}`, { agent, headers });
          answers.push({
            status: reply.status,
            instance: String(reply.headers['x-instance']),
            text: reply.text,
          });
        }
      }),
    );
    agent.destroy();
    return answers;
  }

  const byInstance = (answers: { instance: string }[]) =>
    answers.reduce<Record<string, number>>((counts, a) => {
      counts[a.instance] = (counts[a.instance] ?? 0) + 1;
      return counts;
    }, {});

  it('holds one global limit across the three within 2 %', async () => {
    const answers = await load('/limited', 2 * LIMIT, 24);
    const accepted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    const accuracy = Math.abs(accepted.length - LIMIT) / LIMIT;
    console.log(
      `scale-out: global limit ${LIMIT}: ${accepted.length} accepted, ${refused.length} refused (off by ${(100 * accuracy).toFixed(2)} %); accepted per instance ${JSON.stringify(byInstance(accepted))}`,
    );
    expect(accepted.length + refused.length).toBe(2 * LIMIT);
    expect(accuracy).toBeLessThanOrEqual(0.02);
    // Every instance took its share: the limit is one, not three.
    expect(Object.keys(byInstance(accepted)).sort()).toEqual(['gw1', 'gw2', 'gw3']);
  });

  it('reads a session made through one instance through the others', async () => {
    const set = await send(`${nginx.url}/session/set`);
    expect(set.status).toBe(200);
    const cookie = String(set.headers['set-cookie']?.[0] ?? '').split(';')[0]!;
    expect(cookie).toMatch(/^IG_SESSIONID=/);
    const answers = await load('/session/get', 9, 1, { cookie });
    console.log(
      `scale-out: session read through ${JSON.stringify(byInstance(answers))} (made through ${set.headers['x-instance']})`,
    );
    expect(answers.map((a) => a.text)).toEqual(Array(9).fill('user=alice'));
    expect(Object.keys(byInstance(answers)).sort()).toEqual(['gw1', 'gw2', 'gw3']);
  });

  it('keeps serving when one instance is killed under load, failing at most the requests it held', async () => {
    const killed = gateways[1]!;
    let heldAtKill = -1;
    const killer = setTimeout(() => {
      heldAtKill = inFlight.gw2 ?? 0;
      killed.process.kill('SIGKILL');
    }, 1000);
    const before = { ...served };
    const answers: { status: number; instance: string }[] = [];
    const transportErrors: string[] = [];
    const agent = keepAliveAgent(24);
    const until = Date.now() + 3000;
    await Promise.all(
      Array.from({ length: 24 }, async () => {
        while (Date.now() < until) {
          try {
            const reply = await send(`${nginx.url}/load`, { agent });
            answers.push({
              status: reply.status,
              instance: String(reply.headers['x-instance'] ?? reply.text),
            });
          } catch (error) {
            transportErrors.push(String(error));
          }
        }
      }),
    );
    clearTimeout(killer);
    agent.destroy();
    const failed = answers.filter((a) => a.status !== 200).length + transportErrors.length;
    const perInstance = Object.fromEntries(
      Object.entries(served).map(([name, count]) => [name, count - (before[name] ?? 0)]),
    );
    console.log(
      `scale-out: ${answers.length + transportErrors.length} requests under load, one instance killed holding ${heldAtKill}: ${failed} failed; served per instance ${JSON.stringify(perInstance)}`,
    );
    expect(heldAtKill).toBeGreaterThanOrEqual(0);
    // What the killed instance held: the requests it had sent upstream (counted there) and those it
    // was still working on, at most one per connection nginx had open to it (its share of 24).
    // nginx sends a request that got no answer to another instance, so most of these succeed too.
    expect(failed).toBeLessThanOrEqual(Math.max(heldAtKill, 24 / 3));
    // The two left served on after the kill.
    expect(perInstance.gw1).toBeGreaterThan(0);
    expect(perInstance.gw3).toBeGreaterThan(0);
    expect(answers.length).toBeGreaterThan(200);
  });
});
