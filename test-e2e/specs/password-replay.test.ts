import { createCipheriv, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FormLoginApp, LOGIN_PAGE_MARKER, startFormLoginApp } from '../support/form-login-app.ts';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { type Reply, send } from '../support/http.ts';

const KEY = randomBytes(16);

function encrypted(text: string): string {
  const cipher = createCipheriv('aes-128-ecb', KEY, null);
  return Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]).toString('base64');
}

/** A user agent that sends its own headers and keeps the cookies it is given (the gateway's session). */
class Browser {
  readonly #cookies = new Map<string, string>();
  readonly #headers: Record<string, string>;

  constructor(headers: Record<string, string> = {}) {
    this.#headers = headers;
  }

  async get(url: string): Promise<Reply> {
    const cookie = [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const reply = await send(url, { headers: { ...this.#headers, ...(cookie ? { cookie } : {}) } });
    for (const line of reply.headers['set-cookie'] ?? []) {
      const pair = line.slice(0, line.indexOf(';'));
      this.#cookies.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    return reply;
  }
}

const CSRF_EXTRACTION = [{ name: 'csrf', pattern: 'name="csrf" value="([0-9a-f]+)"' }];

/** A Chain of the PasswordReplayFilter, then a CookieFilter keeping the application's session cookie. */
function replayRoute(name: string, condition: string, app: FormLoginApp, replay: Record<string, unknown>) {
  return {
    name,
    condition,
    baseURI: app.url,
    handler: {
      type: 'Chain',
      config: {
        filters: [{ type: 'PasswordReplayFilter', config: replay }, { type: 'CookieFilter' }],
        handler: 'ReverseProxyHandler',
      },
    },
  };
}

describe('PasswordReplayFilter through portico start, against a form-login application', () => {
  let app: FormLoginApp;
  let gw: RunningGateway;

  beforeAll(async () => {
    app = await startFormLoginApp({ ann: 'ann-secret', bob: 'bob-right', carol: 'carol-secret' });
    const csv = path.join(mkdtempSync(path.join(os.tmpdir(), 'portico-replay-')), 'users.csv');
    writeFileSync(
      csv,
      'email,username,password\nann@example.com,ann,ann-secret\nbob@example.com,bob,bob-wrong\n',
    );
    // Credentials from the CSV file, for the user the X-Email header names.
    const credentials = {
      type: 'FileAttributesFilter',
      config: {
        file: csv,
        key: 'email',
        value: "${request.headers['X-Email'][0]}",
        target: '${attributes.user}',
      },
    };
    const login = (form: Record<string, string[]>) => ({ method: 'POST', uri: `${app.url}/login`, form });
    const fromCsv = {
      username: ['${attributes.user.username}'],
      password: ['${attributes.user.password}'],
      csrf: ['${attributes.extracted.csrf}'],
    };
    gw = await startGateway({
      base: instanceDirectory({
        'config/routes/10-login-page.json': replayRoute(
          '10-login-page',
          "${request.uri.path == '/login'}",
          app,
          {
            loginPage: "${request.method == 'GET'}",
            credentials,
            loginPageExtractions: CSRF_EXTRACTION,
            request: login(fromCsv),
          },
        ),
        'config/routes/20-headers.json': replayRoute(
          '20-headers',
          "${find(request.uri.path, '^/sso/')}",
          app,
          {
            loginPageContentMarker: LOGIN_PAGE_MARKER,
            headerDecryption: { key: KEY.toString('base64'), headers: ['X-Password'] },
            loginPageExtractions: CSRF_EXTRACTION,
            request: login({
              username: ["${request.headers['X-Username'][0]}"],
              password: ["${request.headers['X-Password'][0]}"],
              csrf: ['${attributes.extracted.csrf}'],
            }),
          },
        ),
        'config/routes/30-no-token.json': replayRoute(
          '30-no-token',
          "${find(request.uri.path, '^/no-token/')}",
          app,
          {
            loginPageContentMarker: LOGIN_PAGE_MARKER,
            credentials,
            request: login({ username: fromCsv.username, password: fromCsv.password }),
          },
        ),
        'config/routes/40-marker.json': replayRoute('40-marker', '${true}', app, {
          loginPageContentMarker: LOGIN_PAGE_MARKER,
          credentials,
          loginPageExtractions: CSRF_EXTRACTION,
          request: login(fromCsv),
        }),
      }),
    });
  });

  afterAll(async () => {
    if (gw) expect(await gw.stop()).toBe(0);
    await app?.close();
  });

  const loginsOf = (username: string) => app.logins.filter((l) => l.username === username);

  it('logs in on a request for the login page, with the CSRF token its page carried and credentials from the CSV file', async () => {
    const browser = new Browser({ 'X-Email': 'ann@example.com' });
    const before = app.logins.length;
    const pagesBefore = app.pages.length;
    const reply = await browser.get(`${gw.url}/login`);
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('Welcome, ann');
    // The login page was fetched once, for its token, then one login posted.
    expect(app.pages.slice(pagesBefore).map((p) => `${p.method} ${p.path}`)).toEqual(['GET /login']);
    expect(app.logins.slice(before)).toEqual([{ username: 'ann', csrfValid: true, succeeded: true }]);
    // The application's session, kept by the gateway, is logged in: no login page, no other login.
    const page = await browser.get(`${gw.url}/account`);
    expect(page.text).toBe('The protected page of ann');
    expect(app.logins.length).toBe(before + 1);
  });

  it('logs in when the application answers with its login page, then sends the request again', async () => {
    const browser = new Browser({ 'X-Email': 'ann@example.com' });
    const before = app.logins.length;
    const pagesBefore = app.pages.length;
    const reply = await browser.get(`${gw.url}/reports/2024`);
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('The protected page of ann');
    expect(app.pages.slice(pagesBefore).map((p) => p.path)).toEqual(['/reports/2024', '/reports/2024']);
    expect(app.logins.slice(before)).toEqual([{ username: 'ann', csrfValid: true, succeeded: true }]);
  });

  it('does not retry wrong credentials: one login POST, and the login page goes back', async () => {
    const browser = new Browser({ 'X-Email': 'bob@example.com' });
    const reply = await browser.get(`${gw.url}/reports/2024`);
    expect(reply.status).toBe(200);
    expect(reply.text).toContain(LOGIN_PAGE_MARKER);
    expect(loginsOf('bob')).toEqual([{ username: 'bob', csrfValid: true, succeeded: false }]);
    await browser.get(`${gw.url}/reports/2025`);
    // One more request, one more login at most.
    expect(loginsOf('bob')).toHaveLength(2);
  });

  it('decrypts an encrypted header for the login request, and sends the request on with the ciphertext', async () => {
    const ciphertext = encrypted('carol-secret');
    const browser = new Browser({ 'X-Username': 'carol', 'X-Password': ciphertext });
    const reply = await browser.get(`${gw.url}/sso/inbox`);
    expect(reply.text).toBe('The protected page of carol');
    expect(loginsOf('carol')).toEqual([{ username: 'carol', csrfValid: true, succeeded: true }]);
    const sent = app.pages.filter((p) => p.path === '/sso/inbox');
    expect(sent).toHaveLength(2);
    expect(sent.map((p) => p.headers['x-password'])).toEqual([ciphertext, ciphertext]);
  });

  it('fails to log in without the extracted token: the application checks it', async () => {
    const browser = new Browser({ 'X-Email': 'ann@example.com' });
    const before = app.logins.length;
    const reply = await browser.get(`${gw.url}/no-token/page`);
    expect(reply.text).toContain(LOGIN_PAGE_MARKER);
    expect(app.logins.slice(before)).toEqual([{ username: 'ann', csrfValid: false, succeeded: false }]);
  });

  it('never logs the credentials it replays', () => {
    expect(gw.output()).not.toContain('ann-secret');
    expect(gw.output()).not.toContain('carol-secret');
  });
});
