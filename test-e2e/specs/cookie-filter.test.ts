import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { serviceUrl } from '@portico/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { type Reply, type SendOptions, send } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * A user agent that keeps the cookies the gateway sets (name=value, sent back on every request), as
 * a browser would for one site.
 */
class Browser {
  readonly cookies = new Map<string, string>();

  async get(url: string, options: SendOptions = {}): Promise<Reply> {
    const sent = [...this.cookies].map(([name, value]) => `${name}=${value}`);
    const extra = options.headers?.cookie;
    if (extra) sent.push(String(extra));
    const reply = await send(url, {
      ...options,
      headers: { ...options.headers, ...(sent.length > 0 ? { cookie: sent.join('; ') } : {}) },
    });
    for (const header of reply.headers['set-cookie'] ?? []) {
      const [pair = ''] = header.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/max-age=0/i.test(header) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return reply;
  }
}

/** The names of the cookies a reply sets. */
function setCookieNames(reply: Reply): string[] {
  return (reply.headers['set-cookie'] ?? []).map((h) => h.slice(0, h.indexOf('=')));
}

/** What the application saw in the Cookie header, as name → value. */
function cookiesSeenBy(reply: Reply): Record<string, string> {
  const header = (JSON.parse(reply.text) as { cookie?: string }).cookie ?? '';
  return Object.fromEntries(
    header
      .split(';')
      .map((p) => p.trim())
      .filter(Boolean)
      .map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]),
  );
}

/**
 * An application with its own session cookie: /login sets it (with a relayed `lang` and a suppressed
 * `tracker`), /app/* echo the Cookie header they receive, /logout expires the session cookie, and
 * /app/scoped sets a cookie limited to /app/scoped.
 */
function application(): Promise<Upstream> {
  const upstream = startUpstream((req: http.IncomingMessage, res: http.ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const headers: Record<string, string | string[]> = { 'Content-Type': 'application/json' };
      if (req.url === '/login') {
        headers['Set-Cookie'] = [
          `APPSESSION=${randomUUID()}; Path=/; HttpOnly`,
          'lang=en; Path=/',
          'tracker=t1; Path=/',
        ];
      } else if (req.url === '/logout') {
        headers['Set-Cookie'] = ['APPSESSION=; Path=/; Max-Age=0'];
      } else if (req.url === '/app/scoped/set') {
        headers['Set-Cookie'] = ['SCOPED=s; Path=/app/scoped'];
      }
      res.writeHead(200, headers);
      res.end(JSON.stringify({ url: req.url, cookie: req.headers.cookie ?? null }));
    });
  });
  return upstream;
}

function routeTo(upstream: Upstream) {
  return {
    name: 'cookies',
    baseURI: upstream.url,
    handler: {
      type: 'Chain',
      config: {
        filters: [
          {
            type: 'CookieFilter',
            config: { managed: ['APPSESSION'], relayed: ['lang'], suppressed: ['tracker'] },
          },
        ],
        handler: 'ReverseProxyHandler',
      },
    },
  };
}

const stores = [
  { store: 'memory', admin: async () => ({}) },
  {
    store: 'redis',
    admin: async () => {
      const uri = await serviceUrl('PORTICO_REDIS_URL', 'Redis');
      return uri === undefined
        ? undefined
        : { session: { store: { type: 'redis', uri, prefix: `portico:e2e-cookie:${randomUUID()}:` } } };
    },
  },
];

describe.each(stores)('CookieFilter through portico start, sessions in $store', ({ admin }) => {
  let upstream: Upstream;
  let gw: RunningGateway | undefined;

  beforeAll(async () => {
    const settings = await admin();
    if (settings === undefined) return;
    upstream = await application();
    gw = await startGateway({
      base: instanceDirectory({
        'config/admin.json': settings,
        'config/routes/cookies.json': routeTo(upstream),
      }),
    });
  });

  afterAll(async () => {
    if (gw) expect(await gw.stop()).toBe(0);
    await upstream?.close();
  });

  it('keeps the managed cookie from the user agent and replays it upstream across requests', async (t) => {
    if (!gw) return t.skip();
    const browser = new Browser();
    const login = await browser.get(`${gw.url}/login`);
    expect(login.status).toBe(200);
    expect(setCookieNames(login)).not.toContain('APPSESSION');
    expect(setCookieNames(login)).not.toContain('tracker');
    expect(setCookieNames(login)).toContain('lang');
    expect(setCookieNames(login)).toContain('IG_SESSIONID');

    const first = cookiesSeenBy(await browser.get(`${gw.url}/app/one`));
    const second = cookiesSeenBy(await browser.get(`${gw.url}/app/two`));
    expect(first.APPSESSION).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.APPSESSION).toBe(first.APPSESSION);
    expect(first.lang).toBe('en');
    // The gateway's own session cookie is not the application's business either (MANAGE by default).
    expect(first.IG_SESSIONID).toBeUndefined();
  });

  it('gives each user agent its own managed cookies', async (t) => {
    if (!gw) return t.skip();
    const alice = new Browser();
    const bob = new Browser();
    await alice.get(`${gw.url}/login`);
    await bob.get(`${gw.url}/login`);
    const aliceSeen = cookiesSeenBy(await alice.get(`${gw.url}/app/x`));
    const bobSeen = cookiesSeenBy(await bob.get(`${gw.url}/app/x`));
    expect(aliceSeen.APPSESSION).toBeDefined();
    expect(bobSeen.APPSESSION).toBeDefined();
    expect(aliceSeen.APPSESSION).not.toBe(bobSeen.APPSESSION);
    expect(cookiesSeenBy(await new Browser().get(`${gw.url}/app/x`)).APPSESSION).toBeUndefined();
  });

  it('replaces a forged managed cookie and removes a suppressed one', async (t) => {
    if (!gw) return t.skip();
    const browser = new Browser();
    await browser.get(`${gw.url}/login`);
    const real = cookiesSeenBy(await browser.get(`${gw.url}/app/a`)).APPSESSION;
    const seen = cookiesSeenBy(
      await browser.get(`${gw.url}/app/b`, { headers: { cookie: 'APPSESSION=forged; tracker=t2' } }),
    );
    expect(seen.APPSESSION).toBe(real);
    expect(seen.tracker).toBeUndefined();
  });

  it('forgets the managed cookie when the application expires it', async (t) => {
    if (!gw) return t.skip();
    const browser = new Browser();
    await browser.get(`${gw.url}/login`);
    expect(cookiesSeenBy(await browser.get(`${gw.url}/app/a`)).APPSESSION).toBeDefined();
    const logout = await browser.get(`${gw.url}/logout`);
    expect(setCookieNames(logout)).not.toContain('APPSESSION');
    expect(cookiesSeenBy(await browser.get(`${gw.url}/app/a`)).APPSESSION).toBeUndefined();
  });

  it('replays a cookie only under its path', async (t) => {
    if (!gw) return t.skip();
    const browser = new Browser();
    await browser.get(`${gw.url}/app/scoped/set`);
    expect(cookiesSeenBy(await browser.get(`${gw.url}/app/scoped/page`)).SCOPED).toBe('s');
    expect(cookiesSeenBy(await browser.get(`${gw.url}/app/other`)).SCOPED).toBeUndefined();
  });
});
