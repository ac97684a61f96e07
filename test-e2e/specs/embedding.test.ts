import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import type { Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory } from '../support/gateway.ts';
import { send, waitFor } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * An application embedding the gateway (`test-e2e/support/embedder.ts`, its own process): its own
 * Koa application, its own middleware before and after `createGateway({ config, routes }).koa()`,
 * proxying to a real upstream.
 */
const EMBEDDER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../support/embedder.ts');

let upstream: Upstream;
let embedder: ChildProcess;
let url: string;
let output = '';
let stderr = '';
/** The upstream responses still open (a slow body being sent). */
const slow = new Set<http.ServerResponse>();
let slowClosed = 0;
/** The upstream's open connections (the gateway's pool). */
const upstreamSockets = new Set<Socket>();
let exited: Promise<number | null>;

const events = () =>
  output
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { event: string; [key: string]: unknown });

beforeAll(async () => {
  upstream = await startUpstream((req, res) => {
    if (req.url === '/api/slow') {
      // A body that starts, then stalls: the client goes away in the middle of it.
      slow.add(res);
      res.once('close', () => {
        slow.delete(res);
        slowClosed++;
      });
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      res.write(Buffer.alloc(64 * 1024, 1));
      return;
    }
    req.resume();
    req.on('end', () => {
      const body = JSON.stringify({ url: req.url, via: req.headers['x-forwarded-for'] ?? null });
      res.writeHead(200, { 'Content-Type': 'application/json', 'X-Upstream': 'yes' });
      res.end(body);
    });
  });
  // The upstream never closes an idle connection itself: only the gateway lets go of its own.
  upstream.server.keepAliveTimeout = 0;
  upstream.server.on('connection', (socket: Socket) => {
    upstreamSockets.add(socket);
    socket.once('close', () => upstreamSockets.delete(socket));
  });
  const base = instanceDirectory({
    'config/routes/api.json': {
      condition: "${find(request.uri.path, '^/api/')}",
      baseURI: upstream.url,
      handler: 'ReverseProxyHandler',
    },
  });
  embedder = spawn(
    process.execPath,
    ['--conditions=portico-source', EMBEDDER, path.join(base, 'config', 'routes')],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  exited = new Promise((resolve) => embedder.once('exit', (code) => resolve(code)));
  embedder.stdout!.on('data', (chunk) => (output += chunk));
  embedder.stderr!.on('data', (chunk) => (stderr += chunk));
  url = await waitFor(
    `the embedding application to listen (output: ${output}${stderr})`,
    () => events().find((e) => e.event === 'listening')?.url as string | undefined,
    { timeoutMs: 20_000 },
  );
});

afterAll(async () => {
  embedder?.kill('SIGKILL');
  for (const res of slow) res.destroy();
  await upstream?.close();
});

describe('an application embedding the gateway in its own Koa application', () => {
  it("proxies a route of the routes directory, through config.json's filter and the application's middleware", async () => {
    const reply = await send(`${url}/api/hello?x=1`);
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toMatchObject({ url: '/api/hello?x=1' });
    expect(reply.headers['x-upstream']).toBe('yes');
    // config.json's HeaderFilter, and the header the middleware before the gateway set.
    expect(reply.headers['x-gateway']).toBe('portico');
    expect(reply.headers['x-embedder']).toBe('before');
    await waitFor('the middleware before the gateway to finish', () =>
      events().find((e) => e.event === 'before-middleware-done' && e.path === '/api/hello'),
    );
    expect(events().find((e) => e.path === '/api/hello')).toMatchObject({ respond: false });
  });

  it('hands a request no route takes to the middleware after the gateway', async () => {
    const reply = await send(`${url}/home`);
    expect(reply.status).toBe(200);
    expect(reply.text).toBe("the application's own answer for /home");
    expect(reply.headers['x-embedder']).toBe('before');
    expect(reply.headers['x-gateway']).toBeUndefined();
    expect(upstream.received).toEqual([]);
  });

  it('survives a client that goes away in the middle of a response body, and lets go of the upstream', async () => {
    const closedBefore = slowClosed;
    await new Promise<void>((resolve, reject) => {
      const req = http.get(`${url}/api/slow`, { agent: false }, (res) => {
        res.once('data', () => {
          // Part of the body arrived: the client goes away.
          req.destroy();
          resolve();
        });
      });
      req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    });
    await waitFor(
      'the upstream response to be closed by the gateway',
      () => slowClosed > closedBefore || undefined,
    );
    const after = await send(`${url}/api/after`);
    expect(after.status).toBe(200);
    expect(embedder.exitCode).toBeNull();
    expect(stderr).not.toMatch(/ ERROR |Error|ERR_/);
  });

  it('destroy() releases everything: the upstream connections, and the process ends by itself', async () => {
    // The gateway's pool keeps its connections to the upstream open between requests.
    expect(upstreamSockets.size).toBeGreaterThan(0);
    embedder.kill('SIGTERM');
    await waitFor('the gateway to be destroyed', () => events().find((e) => e.event === 'destroyed'));
    // While the process still runs, every connection the gateway held to the upstream is closed.
    await waitFor('the upstream connections to close', () => upstreamSockets.size === 0 || undefined);
    embedder.stdin!.end();
    // Nothing left (a socket, a timer, a watcher) keeps the process up.
    expect(await exited).toBe(0);
    // Koa reports the client that went away (on-finished sees the socket's reset) as an 'error'
    // event; nothing else went wrong.
    for (const error of events().filter((e) => e.event === 'koa-error'))
      expect(error.message).toMatch(/ECONNRESET|aborted|EPIPE/);
    // The gateway's own log (the default logger writes to standard error): nothing went wrong.
    expect(stderr).not.toMatch(/ (WARN|ERROR) |Error/);
  });
});
