import { randomBytes } from 'node:crypto';
import type { Page, Response } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  chromiumPath,
  holdNextRequest,
  launchBrowser,
  pageState,
  type RunningBrowser,
} from '../support/browser.ts';
import {
  instanceDirectory,
  type RunningGateway,
  startGateway,
  writeInstanceFile,
} from '../support/gateway.ts';
import { send, waitFor } from '../support/http.ts';
import { type OidcProvider, startOidcProvider } from '../support/oidc-provider.ts';

const chromium = chromiumPath();

const html = (status: number, entity: string) => ({
  type: 'StaticResponseHandler',
  config: { status, headers: { 'Content-Type': ['text/html; charset=UTF-8'] }, entity },
});

/** The page behind the filter: who is signed in, by the user info the filter fetches. */
const PROTECTED_PAGE = html(
  200,
  '<html><body><h1>Welcome</h1><p id="user">${attributes.openid.user_info.name}</p>' +
    '<a href="${attributes.openid.client_endpoint}/logout">Sign out</a></body></html>',
);

/** The failure handler: the failure object the filter leaves at its target. */
const REFUSED_PAGE = html(
  403,
  '<html><body><h1>Sign-in refused</h1><p id="error">${attributes.openid.error.error}</p>' +
    '<p id="description">${attributes.openid.error.error_description}</p>' +
    '<p id="registration">${attributes.openid.client_registration}</p></body></html>',
);

/** An issuer by discovery, and the gateway's client there. */
const issuer = (name: string, provider: OidcProvider) => ({
  name,
  type: 'Issuer',
  config: { wellKnownEndpoint: provider.discoveryEndpoint },
});
const registration = (name: string, issuerName: string, provider: OidcProvider, clientId: string) => {
  const client = provider.relyingParties.find((rp) => rp.id === clientId)!;
  return {
    name,
    type: 'ClientRegistration',
    config: {
      clientId: client.id,
      clientSecret: client.secret,
      issuer: issuerName,
      scopes: ['openid', 'profile'],
      tokenEndpointAuthMethod: 'client_secret_basic',
    },
  };
};

/** A route for every path under `/<prefix>`: OAuth2ClientFilter (client endpoint `/<prefix>/openid`) before the page. */
const protectedRoute = (prefix: string, heap: unknown[], filter: Record<string, unknown>) => ({
  name: prefix,
  heap,
  condition: `\${matches(request.uri.path, '^/${prefix}/')}`,
  handler: {
    type: 'Chain',
    config: {
      filters: [
        {
          type: 'OAuth2ClientFilter',
          config: {
            clientEndpoint: `/${prefix}/openid`,
            requireHttps: false,
            failureHandler: REFUSED_PAGE,
            defaultLogoutGoto: '/bye',
            ...filter,
          },
        },
      ],
      handler: PROTECTED_PAGE,
    },
  },
});

/**
 * The OpenID Connect sign-in of a person, in a headless Chromium, through the real `portico start`:
 * OAuth2ClientFilter in front of a page that greets the user by the name the provider's user info
 * gives, the login kept in a JwtSession cookie, at real OpenID providers (oidc-provider, with their
 * own login and consent pages). A protected page leads to the provider's login form and back to
 * the page with the user's name; logout ends the provider's session too; a filter with two
 * registrations lets the user choose on the login handler's page; a callback with a tampered
 * `state`, or a code used a second time, reaches the failure handler.
 */
describe.runIf(chromium)('OpenID Connect sign-in in a headless Chromium, through portico start', () => {
  let gw: RunningGateway;
  let browser: RunningBrowser;
  /** Provider of the single-provider filter, and one of the two of the multi-provider filter. */
  let east: OidcProvider;
  let west: OidcProvider;

  beforeAll(async () => {
    // The providers must know the gateway's callback URIs, so the gateway starts first and the
    // routes that name the providers are added once they listen.
    const base = instanceDirectory({
      'config/config.json': {
        heap: [
          {
            name: 'Session',
            type: 'JwtSession',
            config: { sharedSecret: randomBytes(32).toString('base64') },
          },
        ],
        handler: { type: 'Router', name: '_router' },
      },
      'config/routes/bye.json': {
        condition: "${request.uri.path == '/bye'}",
        handler: html(200, '<html><body><h1>Signed out</h1></body></html>'),
      },
    });
    [gw, browser] = await Promise.all([startGateway({ base }), launchBrowser(chromium!)]);
    const client = (id: string, prefix: string) => ({
      id,
      redirectUris: [`${gw.url}/${prefix}/openid/callback`],
      postLogoutRedirectUris: [`${gw.url}/bye`],
    });
    [east, west] = await Promise.all([
      startOidcProvider({
        relyingParties: [client('portico-single', 'single'), client('portico-multi', 'multi')],
      }),
      startOidcProvider({
        relyingParties: [client('portico-multi', 'multi')],
        users: { carol: { name: 'Carol Danvers', given_name: 'Carol', family_name: 'Danvers' } },
      }),
    ]);
    writeInstanceFile(
      base,
      'config/routes/single.json',
      protectedRoute('single', [issuer('East', east), registration('east', 'East', east, 'portico-single')], {
        registrations: 'east',
      }),
    );
    const choice = (name: string, label: string) =>
      `<li><a href="/multi/openid/login?registration=${name}&amp;goto=\${urlEncodeQueryParameterNameOrValue(request.uri.path)}">${label}</a></li>`;
    writeInstanceFile(
      base,
      'config/routes/multi.json',
      protectedRoute(
        'multi',
        [
          issuer('East', east),
          issuer('West', west),
          registration('east', 'East', east, 'portico-multi'),
          registration('west', 'West', west, 'portico-multi'),
        ],
        {
          registrations: ['east', 'west'],
          loginHandler: html(
            200,
            `<html><body><h1>Choose your provider</h1><ul>${choice('east', 'East')}${choice('west', 'West')}</ul></body></html>`,
          ),
        },
      ),
    );
    // Added while the gateway runs: loaded on the file-system event, or logged as not loaded.
    const loaded = await waitFor('the routes naming the providers to load', async () => {
      if (gw.output().includes('"msg":"route not loaded"')) return 'not loaded';
      const [single, multi] = await Promise.all([
        send(`${gw.url}/single/page`),
        send(`${gw.url}/multi/page`),
      ]);
      return single.status !== 404 && multi.status !== 404 && 'loaded';
    });
    if (loaded !== 'loaded') throw new Error(`a route did not load:\n${gw.output()}`);
  }, 60_000);

  /** Each test's page, in a fresh browser context: no cookie of another test's sign-in. */
  let page: Page;
  beforeEach(async () => {
    page = await browser.newPage();
  });
  afterEach(async () => {
    await page?.close();
  });

  afterAll(async () => {
    await browser?.close();
    expect(await gw?.stop()).toBe(0);
    await Promise.all([east?.close(), west?.close()]);
  });

  /** Waits until the page is at `where`, or fails saying where the browser is and what it shows. */
  async function arrive(page: Page, where: string | ((url: URL) => boolean), what: string): Promise<void> {
    try {
      await page.waitForURL(where);
    } catch {
      throw new Error(`the browser did not reach ${what}; it is at ${await pageState(page)}`);
    }
  }

  const text = async (page: Page, selector: string) => (await page.locator(selector).textContent())?.trim();

  const atLoginForm = (provider: OidcProvider) => (url: URL) =>
    url.origin === provider.issuer && url.pathname.startsWith('/interaction/');

  /**
   * On the provider's login form: types the login, signs in (the provider takes any password),
   * and consents on the next page. The provider then redirects to the gateway's callback.
   */
  async function signIn(page: Page, provider: OidcProvider, login: string): Promise<void> {
    await arrive(page, atLoginForm(provider), "the provider's login form");
    // The provider's pages all have the title Sign-in; the heading says which page it is.
    expect(await text(page, 'h1'), await pageState(page)).toBe('Sign-in');
    await page.getByPlaceholder('Enter any login').pressSequentially(login);
    await page.getByPlaceholder('and password').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    const consent = page.getByRole('button', { name: 'Continue' });
    await consent.waitFor().catch(async () => {
      throw new Error(`the provider asked for no consent; the browser is at ${await pageState(page)}`);
    });
    expect(await text(page, 'h1')).toBe('Authorize');
    await consent.click();
  }

  /**
   * The failure handler's page, for an invalid request; no code exchanged: the token endpoint of
   * `east` had no request since it had `exchanges`.
   */
  async function expectRefused(response: Response | null, exchanges: number): Promise<void> {
    expect(response?.status(), await pageState(page)).toBe(403);
    expect(await text(page, 'h1')).toBe('Sign-in refused');
    expect(await text(page, '#error')).toBe('invalid_request');
    expect(east.requestsTo('/token')).toBe(exchanges);
  }

  it('protected page, login form, consent, the page names the user; logout; then a login again', async () => {
    await page.goto(`${gw.url}/single/page`);
    await signIn(page, east, 'alice');
    await arrive(page, `${gw.url}/single/page`, 'the protected page after the callback');
    expect(await text(page, '#user'), await pageState(page)).toBe('Alice Liddell');
    // The login is kept in the JwtSession cookie.
    const session = (await page.context().cookies(gw.url)).find(({ name }) => name === 'openig-jwt-session');
    expect(session?.httpOnly).toBe(true);
    // Another request of the same session: still signed in, no provider in between.
    const again = await page.reload();
    expect(again?.request().redirectedFrom()).toBeNull();
    expect(await text(page, '#user')).toBe('Alice Liddell');

    await page.getByRole('link', { name: 'Sign out' }).click();
    // The provider asks whether to end its own session too (RP-initiated logout).
    await arrive(page, (url) => url.origin === east.issuer, "the provider's end-session page");
    expect(await text(page, 'h1')).toMatch(/^Do you want to sign-out from/);
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await arrive(page, (url) => url.href.startsWith(`${gw.url}/bye`), 'defaultLogoutGoto');
    expect(await text(page, 'h1')).toBe('Signed out');

    // Signed out at the gateway and at the provider: the provider's login form again.
    await page.goto(`${gw.url}/single/page`);
    await arrive(page, atLoginForm(east), "the provider's login form, after the logout");
    expect(await text(page, 'h1')).toBe('Sign-in');
  });

  it('two registrations: the login handler page lets the user choose a provider', async () => {
    const choosing = await page.goto(`${gw.url}/multi/page`);
    expect(choosing?.status(), await pageState(page)).toBe(200);
    expect(await text(page, 'h1')).toBe('Choose your provider');
    expect(await page.getByRole('link').allTextContents()).toEqual(['East', 'West']);
    await page.getByRole('link', { name: 'West' }).click();
    await signIn(page, west, 'carol');
    await arrive(page, `${gw.url}/multi/page`, 'the page the user asked for, after the callback');
    expect(await text(page, '#user'), await pageState(page)).toBe('Carol Danvers');
  });

  it('a callback whose state was tampered with is refused, its code never exchanged', async () => {
    await page.goto(`${gw.url}/single/page`);
    // The provider's redirect to the callback is held in the browser, then sent altered.
    const held = await holdNextRequest(page, `${gw.url}/single/openid/callback?*`);
    await signIn(page, east, 'bob');
    const callback = new URL(await held.url);
    const state = callback.searchParams.get('state')!;
    expect(callback.searchParams.get('code')).toMatch(/^[\w-]{16,}$/);
    callback.searchParams.set('state', `${state.slice(0, -1)}${state.endsWith('A') ? 'B' : 'A'}`);
    const exchanges = east.requestsTo('/token');

    await expectRefused(await page.goto(callback.href), exchanges);
    expect(await text(page, '#description')).toContain('state');
  });

  it('a callback sent again after the login (a replayed code) is refused, never exchanged', async () => {
    await page.goto(`${gw.url}/single/page`);
    const callback = page.waitForRequest((request) =>
      request.url().startsWith(`${gw.url}/single/openid/callback?`),
    );
    callback.catch(() => {}); // awaited below, unless the sign-in fails first
    await signIn(page, east, 'alice');
    await arrive(page, `${gw.url}/single/page`, 'the protected page after the callback');
    expect(await text(page, '#user')).toBe('Alice Liddell');

    const exchanges = east.requestsTo('/token');
    await expectRefused(await page.goto((await callback).url()), exchanges);
    expect(await text(page, '#registration')).toBe('east');
  });
});
