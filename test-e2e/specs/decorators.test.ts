import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { startBufferingUpstream, type Upstream } from '../support/upstream.ts';

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const STAMP = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`;

/**
 * The decorators through the real `portico start` and a real upstream: capture (text, binary and
 * streamed bodies, which must reach the other side unchanged and as they flow), timer records on
 * the gateway's log, baseURI rebasing, and audit events counted by a MonitorEndpointHandler route.
 * The default decorators `audit`, `baseURI`, `timer` are used without being declared.
 */
describe('decorators through portico start', () => {
  let upstream: Upstream;
  let gw: RunningGateway;
  let base: string;
  /** Resolved by the test once the client has seen the first part of the streamed answer. */
  let releaseStream: () => void = () => undefined;
  const binary = randomBytes(64 * 1024);

  beforeAll(async () => {
    upstream = await startBufferingUpstream((req, res, body) => {
      const path = new URL(req.url!, 'http://x').pathname;
      if (path.endsWith('/binary')) {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'X-Received-Sha': sha(body) });
        res.end(binary);
      } else if (path.endsWith('/stream')) {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('first part\n');
        // The rest only once the client has the first part: a gateway holding the body would stall here.
        new Promise<void>((resolve) => {
          releaseStream = resolve;
        }).then(() => res.end('second part\n'));
      } else if (path.endsWith('/slow')) {
        setTimeout(() => res.end('slow'), 60);
      } else {
        const echo = JSON.stringify({ url: req.url, host: req.headers.host, body: body.toString() });
        res.writeHead(200, {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(echo),
        });
        res.end(echo);
      }
    });
    base = instanceDirectory({
      'config/routes/00-monitor.json': {
        condition: "${request.uri.path == '/monitor'}",
        handler: { type: 'MonitorEndpointHandler' },
      },
      'config/routes/10-capture.json': {
        condition: "${find(request.uri.path, '^/capture/')}",
        baseURI: upstream.url,
        heap: [
          { name: 'CaptureFile', type: 'FileLogSink', config: { file: 'logs/capture.log', perRoute: true } },
          {
            name: 'capture.entity',
            type: 'CaptureDecorator',
            config: { captureEntity: true, logSink: 'CaptureFile' },
          },
        ],
        handler: 'ReverseProxyHandler',
        'capture.entity': 'all',
      },
      'config/routes/20-timer.json': {
        condition: "${find(request.uri.path, '^/timer/')}",
        baseURI: upstream.url,
        heap: [
          { name: 'TimedFilter', type: 'ChainOfFilters', timer: true },
          { name: 'Backend', type: 'ReverseProxyHandler', timer: true },
        ],
        handler: { type: 'Chain', config: { filters: ['TimedFilter'], handler: 'Backend' } },
      },
      'config/routes/30-base.json': {
        condition: "${find(request.uri.path, '^/base/')}",
        handler: { type: 'ReverseProxyHandler', baseURI: upstream.url },
      },
      'config/routes/40-audit.json': {
        condition: "${find(request.uri.path, '^/audited/')}",
        baseURI: upstream.url,
        heap: [{ name: 'AuditedBackend', type: 'ReverseProxyHandler', audit: ['api', 'backend'] }],
        handler: 'AuditedBackend',
      },
      'config/routes/41-audit-down.json': {
        condition: "${find(request.uri.path, '^/down/')}",
        // Nothing listens on port 1: the handler answers 502 without throwing.
        baseURI: 'http://127.0.0.1:1',
        handler: { type: 'ReverseProxyHandler', name: 'DownBackend', audit: 'api' },
      },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
  });

  /** The capture log of route 10-capture, once it holds `count` records. */
  async function captureLog(count: number): Promise<string[]> {
    const file = path.join(base, 'logs', 'route-10-capture.log');
    const deadline = Date.now() + 5000;
    for (;;) {
      const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
      const records = text.split(new RegExp(`^(?=${STAMP} \\(INFO\\) @Capture)`, 'm')).filter(Boolean);
      if (records.length >= count || Date.now() > deadline) return records;
      await sleep(50);
    }
  }

  /** The messages of the gateway's log (JSON lines), as written. */
  function logMessages(): string[] {
    return gw
      .output()
      .split('\n')
      .flatMap((line) => {
        try {
          const parsed = JSON.parse(line) as { msg?: string };
          return typeof parsed.msg === 'string' ? [parsed.msg] : [];
        } catch {
          return [];
        }
      });
  }

  it('captures a text exchange as HTTP messages in the route log, changing nothing', async () => {
    const body = JSON.stringify({ hello: 'wörld' });
    const reply = await send(`${gw.url}/capture/echo?x=1`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      body,
    });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toMatchObject({ url: '/capture/echo?x=1', body });
    const [request, response] = await captureLog(2);
    expect(request).toMatch(
      new RegExp(
        `^${STAMP} \\(INFO\\) @Capture\\[10-capture\\] --- \\(request\\) id:\\S+ --->\\nPOST ${upstream.url}/capture/echo\\?x=1 HTTP/1\\.1\\n`,
      ),
    );
    expect(request).toContain('Content-Type: application/json\n');
    expect(request!.trimEnd().endsWith(`\n\n${body}`)).toBe(true);
    expect(response).toMatch(/<--- \(response\) id:\S+ ---\nHTTP\/1\.1 200 OK\n/);
    expect(response!.trimEnd().endsWith(`\n\n${reply.text}`)).toBe(true);
  });

  it('captures a binary exchange as [binary entity], both bodies unchanged', async () => {
    const upload = randomBytes(100 * 1024);
    const reply = await send(`${gw.url}/capture/binary`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': upload.length },
      body: upload,
    });
    expect(reply.headers['x-received-sha']).toBe(sha(upload));
    expect(sha(reply.body)).toBe(sha(binary));
    const records = (await captureLog(4)).slice(2);
    expect(records.map((r) => r.trimEnd().split('\n').at(-1))).toEqual([
      '[binary entity]',
      '[binary entity]',
    ]);
  });

  it('lets a streamed answer flow through capture as it comes', async () => {
    const seen = await new Promise<string>((resolve, reject) => {
      const req = http.get(`${gw.url}/capture/stream`, { agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          // The first part arrived while the upstream still holds the second.
          if (text === 'first part\n') releaseStream();
        });
        res.on('end', () => resolve(text));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.setTimeout(10_000, () => req.destroy(new Error('the first part never came through')));
    });
    expect(seen).toBe('first part\nsecond part\n');
    const response = (await captureLog(6))[5]!;
    expect(response).toContain('HTTP/1.1 200 OK');
    expect(response.trimEnd().endsWith('\n\nfirst part\nsecond part')).toBe(true);
  });

  it('writes timer records at STAT with the <timestamp> (STAT) @Timer[<path>] prefix', async () => {
    const reply = await send(`${gw.url}/timer/slow`);
    expect(reply.text).toBe('slow');
    const deadline = Date.now() + 5000;
    let lines: string[] = [];
    while (lines.length < 5 && Date.now() < deadline) {
      lines = logMessages().filter((m) => m.includes('@Timer['));
      await sleep(50);
    }
    const prefix = (object: string) => `^${STAMP} \\(STAT\\) @Timer\\[20-timer/${object}\\] `;
    const find = (pattern: string) => lines.find((line) => new RegExp(pattern).test(line));
    expect(find(`${prefix('TimedFilter')}Started$`)).toBeDefined();
    expect(find(`${prefix('Backend')}Started$`)).toBeDefined();
    const backend = find(`${prefix('Backend')}Elapsed time: \\d+ ms$`)!;
    const filterTotal = find(`${prefix('TimedFilter')}Elapsed time: \\d+ ms$`)!;
    const filterWithin = find(`${prefix('TimedFilter')}Elapsed time \\(within the object\\): \\d+ ms$`)!;
    const ms = (line: string) => Number(/(\d+) ms$/.exec(line)![1]);
    expect(ms(backend)).toBeGreaterThanOrEqual(50);
    expect(ms(filterTotal)).toBeGreaterThanOrEqual(ms(backend));
    expect(ms(filterWithin)).toBeLessThan(ms(backend));
  });

  it('rebases the request of an object decorated with baseURI, keeping path and query', async () => {
    const reply = await send(`${gw.url}/base/items?q=a%20b`);
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toMatchObject({
      url: '/base/items?q=a%20b',
      host: new URL(upstream.url).host,
    });
  });

  it('counts audit events per source and tag at a MonitorEndpointHandler route', async () => {
    for (let i = 0; i < 3; i++) expect((await send(`${gw.url}/audited/item/${i}`)).status).toBe(200);
    expect((await send(`${gw.url}/down/x`)).status).toBe(502);
    const monitor = await send(`${gw.url}/monitor`);
    expect(monitor.headers['content-type']).toMatch(/^application\/json/);
    const counts = JSON.parse(monitor.text);
    expect(counts.sources.AuditedBackend).toEqual({
      'in progress': 0,
      events: { request: 3, response: 3, completed: 3, api: 6, backend: 6 },
    });
    expect(counts.sources.DownBackend).toEqual({
      'in progress': 0,
      events: { request: 1, response: 1, exception: 1, api: 2 },
    });
    expect(counts.tags).toEqual({
      api: { 'in progress': 0, completed: 3, 'internal errors': 1 },
      backend: { 'in progress': 0, completed: 3, 'internal errors': 0 },
    });
  });
});
