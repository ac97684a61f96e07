import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { raw, send, waitFor } from '../support/http.ts';
import { type RunningNginx, startNginx } from '../support/nginx.ts';

/**
 * A separator hidden in a request path (issue 36): `%2F`, `%5C` (either case) or a raw `\`. Portico
 * reads none of them as `/`; an upstream that decodes before it normalises (nginx) does, so a route
 * condition refusing `/private/` let `/public/..%2fprivate/secret` through to an nginx that served
 * `/private/secret`. admin.json `encodedSeparators` says what arrival does: `reject` (400, the
 * default), `decode` (read as `/`, then normalised: routes and the upstream see one path), `keep`
 * (as before, with the risk shown below against a real nginx). Raw sockets throughout; after every
 * case an ordinary request (on the same connection where the gateway keeps it, else a new one)
 * proves the upstream pool unharmed.
 */

/** The forms of issue 36, and their `%5C` and upper-case variants. */
const FORMS = [
  '/public/..%2fprivate/secret',
  '/public%2f..%2fprivate%2fsecret',
  '/%2fprivate/secret',
  '/public/..\\private/secret',
  '/public/..%5cprivate/secret',
  '/public/..%2Fprivate/secret',
  '/public/..%5Cprivate/secret',
];

/** Everything the Node upstream received, in order. */
const seen: string[] = [];
let upstream: http.Server;
let upstreamUrl: string;
let nginx: (RunningNginx & { accessLog: string }) | undefined;
const gateways: Partial<Record<'default' | 'reject' | 'decode' | 'keep', RunningGateway>> = {};

/**
 * A real nginx serving `private <uri>` under `/private/` and `public <uri>` elsewhere: `$uri` is the
 * path as nginx read it, decoded and normalised. Its access log records each request as it arrived
 * and as nginx read it.
 */
async function startNginxUpstream(): Promise<typeof nginx> {
  let accessLog = '';
  const running = await startNginx(({ port, prefix }) => {
    accessLog = path.join(prefix, 'logs/access.log');
    return `  log_format seen '$request_uri $uri';
  access_log ${accessLog} seen;
  server {
    listen 127.0.0.1:${port};
    location /private/ { return 200 'private $uri'; }
    location / { return 200 'public $uri'; }
  }`;
  });
  return { ...running, accessLog };
}

/** The paths nginx has read (`$uri`), from its access log. */
function nginxRead(): string[] {
  const log = readFileSync(nginx!.accessLog, 'utf8');
  return log
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(line.indexOf(' ') + 1));
}

/** Routes of every gateway: a route refusing `/private/` in front of each upstream, chosen by Host. */
function instance(encodedSeparators?: string): string {
  const refusesPrivate = "not matches(request.uri.path, '^/private/')";
  return instanceDirectory({
    'config/admin.json': { prefix: 'openig', ...(encodedSeparators ? { encodedSeparators } : {}) },
    'config/routes/10-nginx.json': {
      name: '10-nginx',
      condition: `\${request.uri.host == 'nginx.example' and ${refusesPrivate}}`,
      baseURI: nginx!.url,
      handler: 'ReverseProxyHandler',
    },
    'config/routes/20-app.json': {
      name: '20-app',
      condition: `\${request.uri.host == 'app.example' and ${refusesPrivate}}`,
      baseURI: upstreamUrl,
      handler: 'ReverseProxyHandler',
    },
  });
}

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    seen.push(req.url!);
    req.resume().on('end', () => res.end(`app ${req.url}`));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  nginx = await startNginxUpstream();
  const env = { PORTICO_LOG_LEVEL: 'debug' };
  [gateways.default, gateways.reject, gateways.decode, gateways.keep] = await Promise.all([
    startGateway({ base: instance(), env }),
    startGateway({ base: instance('reject'), env }),
    startGateway({ base: instance('DECODE'), env }),
    startGateway({ base: instance('keep'), env }),
  ]);
}, 60_000);

afterAll(async () => {
  for (const gw of Object.values(gateways)) expect(await gw?.stop()).toBe(0);
  await nginx?.stop();
  upstream?.closeAllConnections();
  await new Promise<void>((resolve) => upstream?.close(() => resolve()));
});

/** One request on a new connection, closed after its answer. */
const get = (gw: RunningGateway, target: string, host = 'app.example') =>
  raw(gw.url, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`, { waitMs: 5000 });

/**
 * `target`, then an ordinary request, on one kept-alive connection: the answers in order, each as
 * its status and body.
 */
async function thenOrdinary(
  gw: RunningGateway,
  target: string,
  host = 'app.example',
): Promise<{ status: number; body: string }[]> {
  const reply = await raw(
    gw.url,
    `GET ${target} HTTP/1.1\r\nHost: ${host}\r\n\r\n` +
      `GET /public/after HTTP/1.1\r\nHost: app.example\r\nConnection: close\r\n\r\n`,
    { waitMs: 5000 },
  );
  return answersIn(reply.text);
}

/** The responses in what a connection carried, each with a Content-Length body. */
function answersIn(text: string): { status: number; body: string }[] {
  const answers: { status: number; body: string }[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    const head = rest.slice(0, end);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
    answers.push({ status: Number(head.slice(9, 12)), body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return answers;
}

const body = (text: string) => text.slice(text.indexOf('\r\n\r\n') + 4);

/** After every case: the gateway's pool to the Node upstream answers an ordinary request, on a new connection. */
afterEach(async () => {
  for (const gw of Object.values(gateways)) {
    const before = seen.length;
    const reply = await send(`${gw!.url}/public/health`, { headers: { Host: 'app.example' } });
    expect([reply.status, reply.text]).toEqual([200, 'app /public/health']);
    expect(seen.slice(before)).toEqual(['/public/health']);
  }
});

describe.each(['default', 'reject'] as const)('encodedSeparators %s: refused with 400', (setting) => {
  it.each([...FORMS, '/openig%2Fping', '/openig%5cping', '/openig\\ping'])(
    '%s: 400 in the gateway’s own form, the connection closed, no upstream reached',
    async (target) => {
      const gw = gateways[setting]!;
      const before = seen.length;
      const reply = await get(gw, target);
      expect(reply.status).toBe(400);
      expect(body(reply.text)).toBe('Bad Request');
      expect(reply.text).toMatch(/\r\ncontent-type: text\/plain/i);
      expect(reply.closedByServer).toBe(true);
      expect(seen.length).toBe(before);
    },
  );

  it('the refusal is logged at debug with the client', async () => {
    const gw = gateways[setting]!;
    await get(gw, '/public/..%2fprivate/logged');
    await waitFor('the refusal in the log', () => gw.output().includes('encoded separator'), {
      timeoutMs: 5000,
    });
    const line = gw
      .output()
      .split('\n')
      .find((l) => l.includes('encoded separator'))!;
    // pino's level 20 is debug.
    expect(JSON.parse(line)).toMatchObject({ level: 20, msg: 'bad request', client: '127.0.0.1' });
    expect(JSON.parse(line).clientPort).toBeGreaterThan(0);
  });

  it('an encoded separator in the query is not looked at', async () => {
    const [first] = await thenOrdinary(gateways[setting]!, '/public/q?next=%2Fprivate%5C..\\x');
    expect(first).toEqual({ status: 200, body: 'app /public/q?next=%2Fprivate%5C..\\x' });
  });

  it('an Upgrade request is refused the same way', async () => {
    const reply = await raw(
      gateways[setting]!.url,
      'GET /public/..%2fprivate/ws HTTP/1.1\r\nHost: app.example\r\nConnection: Upgrade\r\n' +
        'Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      { waitMs: 5000 },
    );
    expect([reply.status, body(reply.text)]).toEqual([400, 'Bad Request']);
  });
});

describe('encodedSeparators decode: read as /, then normalised once, for routes and upstream alike', () => {
  it.each(FORMS)('%s is /private/secret: the route refusing /private/ holds (404)', async (target) => {
    const before = seen.length;
    const answers = await thenOrdinary(gateways.decode!, target);
    expect(answers.map((a) => a.status)).toEqual([404, 200]);
    expect(answers[1]!.body).toBe('app /public/after');
    expect(seen.slice(before)).toEqual(['/public/after']);
  });

  it.each([
    ['/public/a%2Fb', '/public/a/b'],
    ['/public%2Fa%5Cb', '/public/a/b'],
    ['/public/x/..%2f..%2fpublic%5cc', '/public/c'],
    ['/public/a%252Fb', '/public/a%252Fb'],
  ])('%s reaches the upstream as %s, the path routes saw', async (target, forwarded) => {
    const answers = await thenOrdinary(gateways.decode!, target);
    expect(answers).toEqual([
      { status: 200, body: `app ${forwarded}` },
      { status: 200, body: 'app /public/after' },
    ]);
  });

  it.each(['/openig%2Fping', '/openig%5Cping', '/openig\\ping', '/public%2F..%2Fopenig%2Fping'])(
    '%s is the administrative ping: the prefix is checked on the path routes see',
    async (target) => {
      const before = seen.length;
      const answers = await thenOrdinary(gateways.decode!, target);
      expect([answers[0]!.status, JSON.parse(answers[0]!.body)]).toEqual([200, { status: 'ok' }]);
      expect(answers[1]).toEqual({ status: 200, body: 'app /public/after' });
      expect(seen.slice(before)).toEqual(['/public/after']);
    },
  );
});

describe('encodedSeparators keep: as before, forwarded as an escape', () => {
  it.each(FORMS)(
    '%s passes the condition refusing /private/ and reaches the upstream still escaped',
    async (target) => {
      // Every escape's hex digits in upper case, as arrival writes them (decision 0112).
      const sent = target.replace(/%[0-9a-f]{2}/gi, (escaped) => escaped.toUpperCase());
      const before = seen.length;
      const answers = await thenOrdinary(gateways.keep!, target);
      expect(answers).toEqual([
        { status: 200, body: `app ${sent}` },
        { status: 200, body: 'app /public/after' },
      ]);
      expect(seen.slice(before)).toEqual([sent, '/public/after']);
    },
  );

  it.each(['/openig%2Fping', '/openig%5Cping', '/openig\\ping'])(
    '%s never reaches a route: a hidden separator ends the reserved prefix',
    async (target) => {
      const before = seen.length;
      const answers = await thenOrdinary(gateways.keep!, target);
      expect(answers.map((a) => a.status)).toEqual([404, 200]);
      expect(answers[1]!.body).toBe('app /public/after');
      expect(seen.slice(before)).toEqual(['/public/after']);
    },
  );
});

describe('an nginx upstream that decodes and normalises, behind a route refusing /private/', () => {
  /** What nginx read (`$uri`) for the requests sent while `run` ran. */
  async function nginxReadDuring(run: () => Promise<unknown>): Promise<string[]> {
    const before = nginxRead().length;
    await run();
    // nginx writes its access log as each request ends; give a late line its chance.
    await new Promise((resolve) => setTimeout(resolve, 50));
    return nginxRead().slice(before);
  }

  it('nginx itself serves /private/secret for every %2F form (the reason for this setting)', async () => {
    for (const target of FORMS.filter((f) => /%2f/i.test(f))) {
      const direct = await raw(nginx!.url, `GET ${target} HTTP/1.1\r\nHost: n\r\nConnection: close\r\n\r\n`);
      expect([direct.status, body(direct.text)], target).toEqual([200, 'private /private/secret']);
    }
  });

  it.each(['default', 'reject', 'decode'] as const)(
    'under %s, no form reaches /private/ on nginx',
    async (setting) => {
      const gw = gateways[setting]!;
      const read = await nginxReadDuring(async () => {
        for (const target of FORMS) {
          const answers = await thenOrdinary(gw, target, 'nginx.example');
          expect(answers[0]!.status, target).toBe(setting === 'decode' ? 404 : 400);
          expect(answers[0]!.body, target).not.toContain('private /private');
        }
      });
      expect(read.filter((uri) => uri.startsWith('/private/'))).toEqual([]);
      const ordinary = await thenOrdinary(gw, '/public/ordinary', 'nginx.example');
      expect(ordinary[0]).toEqual({ status: 200, body: 'public /public/ordinary' });
    },
  );

  it('under keep, the risk: every %2F form passes the condition and nginx serves /private/secret', async () => {
    const served: Record<string, string> = {};
    const read = await nginxReadDuring(async () => {
      for (const target of FORMS) {
        const answers = await thenOrdinary(gateways.keep!, target, 'nginx.example');
        expect(answers[1], target).toEqual({ status: 200, body: 'app /public/after' });
        served[target] = `${answers[0]!.status} ${answers[0]!.body}`;
      }
    });
    expect(served).toEqual({
      '/public/..%2fprivate/secret': '200 private /private/secret',
      '/public%2f..%2fprivate%2fsecret': '200 private /private/secret',
      '/%2fprivate/secret': '200 private /private/secret',
      '/public/..%2Fprivate/secret': '200 private /private/secret',
      // nginx on Linux reads `\` and `%5C` as a character of the segment, not a separator: another
      // upstream (IIS, a Windows file server, a framework that folds `\`) may not.
      '/public/..\\private/secret': '200 public /public/..\\private/secret',
      '/public/..%5cprivate/secret': '200 public /public/..\\private/secret',
      '/public/..%5Cprivate/secret': '200 public /public/..\\private/secret',
    });
    expect(read.filter((uri) => uri.startsWith('/private/'))).toHaveLength(4);
  });
});
