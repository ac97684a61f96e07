import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { type Reply, send, waitFor } from '../support/http.ts';
import { chainRoute } from '../support/routes.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * A client that keeps cookies as a user agent does: a Set-Cookie stores or replaces a cookie,
 * Max-Age=0 deletes it, and every request carries what is kept.
 */
class CookieJar {
  readonly cookies = new Map<string, string>();

  async send(url: string, headers: Record<string, string> = {}): Promise<Reply> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const reply = await send(url, { headers: { ...headers, ...(cookie ? { Cookie: cookie } : {}) } });
    for (const line of setCookies(reply)) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      if (/;\s*Max-Age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(eq + 1));
    }
    return reply;
  }
}

function setCookies(reply: Reply): string[] {
  const header = reply.headers['set-cookie'];
  return Array.isArray(header) ? header : header ? [header] : [];
}

const SECRET = randomBytes(32).toString('base64');

/**
 * JwtSession in the real gateway: the heap object named `Session` keeps each client's session in an
 * encrypted cookie, filters write and read it, the upstream sees what it holds; tampered and
 * expired cookies are refused, and a session too large for a cookie is an error, not a silent loss.
 */
describe('JwtSession through portico start', () => {
  let upstream: Upstream;
  let gw: RunningGateway;
  let base: string;

  beforeAll(async () => {
    upstream = await startUpstream();
    const assign = (target: string, value?: string) => ({
      type: 'AssignmentFilter',
      config: { onRequest: [{ target, ...(value === undefined ? {} : { value }) }] },
    });
    /** A route for `path` whose requests go through `filters`, then are answered 200 with `entity`. */
    const answered = (path: string, entity: string, filters: unknown[]) =>
      chainRoute(`\${request.uri.path == '${path}'}`, filters, {
        handler: { type: 'StaticResponseHandler', config: { status: 200, entity } },
      });
    base = instanceDirectory({
      'config/config.json': {
        heap: [{ name: 'Session', type: 'JwtSession', config: { sharedSecret: SECRET } }],
        handler: { type: 'Router', name: '_router' },
      },
      'config/routes/login.json': answered('/login', 'welcome', [
        assign('${session.user}', "${request.headers['X-User'][0]}"),
      ]),
      'config/routes/logout.json': answered('/logout', 'bye', [assign('${session.user}')]),
      'config/routes/big.json': answered('/big', 'stored', [
        assign('${session.blob}', "${request.headers['X-Blob'][0]}"),
      ]),
      'config/routes/app.json': chainRoute(
        "${request.uri.path == '/app'}",
        [
          {
            type: 'HeaderFilter',
            config: { messageType: 'REQUEST', add: { 'X-Session-User': ['${session.user}'] } },
          },
        ],
        { baseURI: upstream.url },
      ),
      // A route with a session of its own, which expires one second after it last changed.
      'config/routes/short.json': {
        ...answered('/short', 'n=${session.n}', [
          {
            type: 'AssignmentFilter',
            config: {
              onRequest: [
                {
                  condition: "${not empty request.headers['X-Set']}",
                  target: '${session.n}',
                  value: "${request.headers['X-Set'][0]}",
                },
              ],
            },
          },
        ]),
        session: 'ShortSession',
        heap: [
          {
            name: 'ShortSession',
            type: 'JwtSession',
            config: { sharedSecret: SECRET, cookieName: 'short-session', sessionTimeout: '1 second' },
          },
        ],
      },
      // A route whose session is encrypted with the RSA key of a JKS keystore made by keytool.
      'config/routes/keyed.json': {
        ...answered('/keyed', 'k=${session.k}', [
          {
            type: 'AssignmentFilter',
            config: {
              onRequest: [
                {
                  condition: "${not empty request.headers['X-Set']}",
                  target: '${session.k}',
                  value: "${request.headers['X-Set'][0]}",
                },
              ],
            },
          },
        ]),
        session: 'KeyedSession',
        heap: [
          {
            name: 'Keys',
            type: 'KeyStore',
            config: {
              url: pathToFileURL(path.join(import.meta.dirname, '../../packages/keystore/fixtures/store.jks'))
                .href,
              password: 'storepass',
            },
          },
          {
            name: 'KeyedSession',
            type: 'JwtSession',
            config: { keystore: 'Keys', alias: 'jwe-key', password: 'keypass', cookieName: 'keyed-session' },
          },
        ],
      },
    });
    gw = await startGateway({ base });
  }, 60_000);

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
  });

  /** The user the upstream saw in the session, through the /app route. */
  const userSeenUpstream = async (jar: CookieJar) => {
    const reply = await jar.send(`${gw.url}/app`);
    expect(reply.status).toBe(200);
    return (JSON.parse(reply.text) as { headers: Record<string, string> }).headers['x-session-user'];
  };

  it('keeps the session in an encrypted cookie the client brings back', async () => {
    const jar = new CookieJar();
    const login = await jar.send(`${gw.url}/login`, { 'X-User': 'alice' });
    expect(login.text).toBe('welcome');
    const [cookie] = setCookies(login);
    expect(cookie).toMatch(/^openig-jwt-session=[\w-]+(\.[\w-]*){4}; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(cookie).not.toContain('alice');
    expect(jar.cookies.has('IG_SESSIONID')).toBe(false);
    expect(await userSeenUpstream(jar)).toBe('alice');
    // Another client has a session of its own.
    expect(await userSeenUpstream(new CookieJar())).toBeUndefined();
  });

  it('sends the cookie again only when the session changed', async () => {
    const jar = new CookieJar();
    await jar.send(`${gw.url}/login`, { 'X-User': 'bob' });
    const read = await jar.send(`${gw.url}/app`);
    expect(setCookies(read)).toEqual([]);
    const relogin = await jar.send(`${gw.url}/login`, { 'X-User': 'bob' });
    expect(setCookies(relogin)).toEqual([]);
    const changed = await jar.send(`${gw.url}/login`, { 'X-User': 'carol' });
    expect(setCookies(changed)).toHaveLength(1);
    expect(await userSeenUpstream(jar)).toBe('carol');
  });

  it('refuses a tampered cookie and tells the client to drop it', async () => {
    const jar = new CookieJar();
    await jar.send(`${gw.url}/login`, { 'X-User': 'mallory' });
    const value = jar.cookies.get('openig-jwt-session')!;
    const parts = value.split('.');
    parts[3] = `${parts[3]![0] === 'A' ? 'B' : 'A'}${parts[3]!.slice(1)}`;
    jar.cookies.set('openig-jwt-session', parts.join('.'));
    const reply = await jar.send(`${gw.url}/app`);
    expect(
      (JSON.parse(reply.text) as { headers: Record<string, string> }).headers['x-session-user'],
    ).toBeUndefined();
    expect(setCookies(reply)).toEqual(['openig-jwt-session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax']);
    expect(jar.cookies.has('openig-jwt-session')).toBe(false);
    expect(gw.output()).toContain('a JWT session cookie was refused and reset');
  });

  it('reads at most four session cookies of a request: 500 of them cost four refusals, not 500', async () => {
    const refusals = () =>
      gw
        .output()
        .split('\n')
        .filter((line) => line.includes('a JWT session cookie was refused')).length;
    const before = refusals();
    const cookies = Array.from({ length: 500 }, (_, i) => `openig-jwt-session=x.${i}.y.z.w`).join('; ');
    const reply = await send(`${gw.url}/app`, { headers: { Cookie: cookies } });
    expect(reply.status).toBe(200);
    await waitFor('the refusals logged', () => refusals() - before >= 4 || undefined);
    // Time for any further ones to reach the log.
    await sleep(500);
    expect(refusals() - before).toBe(4);
  });

  it('removes the cookie when the session is emptied (logout)', async () => {
    const jar = new CookieJar();
    await jar.send(`${gw.url}/login`, { 'X-User': 'dave' });
    const logout = await jar.send(`${gw.url}/logout`);
    expect(logout.text).toBe('bye');
    expect(setCookies(logout)[0]).toMatch(/^openig-jwt-session=; .*Max-Age=0/);
    expect(await userSeenUpstream(jar)).toBeUndefined();
  });

  it("expires a route's session sessionTimeout after its last change", async () => {
    const jar = new CookieJar();
    expect((await jar.send(`${gw.url}/short`, { 'X-Set': '7' })).text).toBe('n=7');
    expect(jar.cookies.has('short-session')).toBe(true);
    expect(jar.cookies.has('openig-jwt-session')).toBe(false);
    expect((await jar.send(`${gw.url}/short`)).text).toBe('n=7');
    await sleep(2100);
    const expired = await jar.send(`${gw.url}/short`);
    expect(expired.text).toBe('n=');
    expect(setCookies(expired)[0]).toMatch(/^short-session=; .*Max-Age=0/);
  });

  it('encrypts a session with the RSA key of a KeyStore entry', async () => {
    const jar = new CookieJar();
    expect((await jar.send(`${gw.url}/keyed`, { 'X-Set': 'v1' })).text).toBe('k=v1');
    const value = jar.cookies.get('keyed-session')!;
    const header = JSON.parse(Buffer.from(value.split('.')[0]!, 'base64url').toString()) as { alg: string };
    expect(header.alg).toBe('RSA-OAEP-256');
    expect((await jar.send(`${gw.url}/keyed`)).text).toBe('k=v1');
  });

  it('answers 500 with a clear log line when the session outgrows its cookie, keeping the old one', async () => {
    const jar = new CookieJar();
    await jar.send(`${gw.url}/login`, { 'X-User': 'erin' });
    const before = jar.cookies.get('openig-jwt-session');
    const big = await jar.send(`${gw.url}/big`, { 'X-Blob': 'x'.repeat(5000) });
    expect(big.status).toBe(500);
    expect(big.text).not.toBe('stored');
    expect(setCookies(big)).toEqual([]);
    expect(gw.output()).toMatch(/the session is too large for its cookie 'openig-jwt-session': \d+ bytes/);
    expect(jar.cookies.get('openig-jwt-session')).toBe(before);
    expect(await userSeenUpstream(jar)).toBe('erin');
  });

  it('reads the sessions it issued after a restart, with the same sharedSecret', async () => {
    const jar = new CookieJar();
    await jar.send(`${gw.url}/login`, { 'X-User': 'frank' });
    expect(await gw.stop()).toBe(0);
    gw = await startGateway({ base });
    expect(await userSeenUpstream(jar)).toBe('frank');
  });
});
