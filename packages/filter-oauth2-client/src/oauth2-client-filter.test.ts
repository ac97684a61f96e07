import { createHash } from 'node:crypto';
import { type Filter, Request, Response } from '@portico/gateway-core';
import { pluginHeap, problemsOf, recordingHandler, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin from './index.ts';

/**
 * OAuth2ClientFilter where no provider is reached: its configuration, the goto policy, the checks
 * of the callback's state, requireLogin false and logout without a session. The registrations'
 * issuer is declared at a host that does not exist (nothing here reaches it);
 * oauth2-client-flow.test.ts runs the flows against a real OpenID provider.
 */
const FILE = 'routes/oidc.json';

/** A registration at an issuer whose endpoints are declared, and never reached by these tests. */
const unreachable = (clientId: string, supportedDomains: string[] = []) => ({
  type: 'ClientRegistration',
  config: {
    clientId,
    clientSecret: 'never sent',
    scopes: ['openid'],
    issuer: {
      type: 'Issuer',
      config: {
        authorizeEndpoint: 'https://idp.invalid/authorize',
        tokenEndpoint: 'https://idp.invalid/token',
        supportedDomains,
      },
    },
  },
});

function heapWith(filterConfig: Record<string, unknown>, extra: unknown[] = []) {
  return pluginHeap({
    plugins: [plugin],
    file: FILE,
    heap: [
      { name: 'A', ...unreachable('A', ['example.com']) },
      { name: 'B', ...unreachable('B') },
      { name: 'Failed', type: 'StaticResponseHandler', config: { status: 500, entity: 'failed' } },
      { name: 'Choose', type: 'StaticResponseHandler', config: { status: 200, entity: 'choose a provider' } },
      ...extra,
      {
        name: 'OIDC',
        type: 'OAuth2ClientFilter',
        config: { clientEndpoint: '/openid', failureHandler: 'Failed', registrations: 'A', ...filterConfig },
      },
    ],
  }).heap;
}

const filterOf = (config: Record<string, unknown> = {}, extra: unknown[] = []) =>
  heapWith(config, extra).get<Filter>('OIDC', 'filter');

/** The index of the filter's declaration in heapWith's heap. */
const at = (extra = 0) => `$.heap[${4 + extra}].config`;

async function send(filter: Filter, uri: string, session: Record<string, unknown> = {}, method = 'GET') {
  const context = testContext({ session });
  const next = recordingHandler(() => Response.text(200, 'app'));
  const response = await filter.filter(context, new Request({ method, uri }), next.handler);
  return {
    response,
    context,
    session,
    called: next.requests.length > 0,
    openid: context.attributes.openid as any,
  };
}

const location = (response: Response) => new URL(response.headers.get('location') as string);

describe('OAuth2ClientFilter configuration', () => {
  it('sweeps its user info cache on the ScheduledExecutorService its executor names', async () => {
    const heap = heapWith({ cacheExpiration: '1 second', executor: 'Sweeper' }, [
      { name: 'Sweeper', type: 'ScheduledExecutorService' },
    ]);
    await heap.get<Filter>('OIDC', 'filter');
    const sweeper = await heap.get<{ peakConcurrency: number; stopped: boolean }>('Sweeper');
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(sweeper.peakConcurrency).toBe(1);
    await heap.destroy();
    expect(sweeper.stopped).toBe(true);
  });

  it('refuses an executor that is not a ScheduledExecutorService, at its JSON path', async () => {
    const error = await heapWith({ executor: 'Failed' })
      .get('OIDC', 'filter')
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toMatchObject({ code: 'PORTICO_E_REFERENCE', details: { jsonPath: `${at()}.executor` } });
  });

  it('refuses a declaration without clientEndpoint or failureHandler, at their JSON paths', async () => {
    const error = await heapWith({ clientEndpoint: undefined, failureHandler: undefined })
      .get('OIDC')
      .catch((e: unknown) => e);
    const problems = problemsOf(error);
    expect(problems.map((p) => p.code)).toEqual(['PORTICO_E_CONFIG', 'PORTICO_E_CONFIG']);
    expect(problems.map((p) => p.details.jsonPath)).toEqual([
      `${at()}.clientEndpoint`,
      `${at()}.failureHandler`,
    ]);
  });

  it('requires a loginHandler with several registrations, naming the field', async () => {
    await expect(filterOf({ registrations: ['A', 'B'] })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: FILE, jsonPath: `${at()}.loginHandler` },
      message: expect.stringContaining('2 registrations'),
    });
  });

  it('reports the loginHandler rule along with every other problem (portico validate)', async () => {
    const error = await heapWith({
      registrations: ['A', 'B'],
      clientEndpoint: undefined,
      cacheExpiration: 'soon',
    })
      .get('OIDC')
      .catch((e: unknown) => e);
    expect(problemsOf(error).map((p) => p.details.jsonPath)).toEqual([
      `${at()}.clientEndpoint`,
      `${at()}.cacheExpiration`,
      `${at()}.loginHandler`,
    ]);
  });

  it('requires a loginHandler with no registration at all', async () => {
    await expect(filterOf({ registrations: undefined })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath: `${at()}.loginHandler` },
    });
    await expect(filterOf({ registrations: [], loginHandler: 'Choose' })).resolves.toBeDefined();
  });

  it('takes one registration by name or in an array, with or without a loginHandler', async () => {
    await expect(filterOf({ registrations: 'A' })).resolves.toBeDefined();
    await expect(filterOf({ registrations: ['A'] })).resolves.toBeDefined();
    await expect(filterOf({ registrations: ['A', 'B'], loginHandler: 'Choose' })).resolves.toBeDefined();
  });

  it('refuses a registration that is no registration', async () => {
    await expect(filterOf({ registrations: ['A', 'Failed'], loginHandler: 'Choose' })).rejects.toMatchObject({
      code: 'PORTICO_E_REFERENCE',
    });
  });

  it('refuses allowedGotoOrigins that are not bare origins, and metadata without redirect_uris', async () => {
    await expect(
      filterOf({ allowedGotoOrigins: ['https://ok.example', 'https://app.example/path'] }),
    ).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath: `${at()}.allowedGotoOrigins[1]` },
    });
    await expect(filterOf({ metadata: { client_name: 'gw' } })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath: `${at()}.metadata` },
    });
  });

  it('refuses unknown settings', async () => {
    await expect(filterOf({ clientEndpont: '/x' })).rejects.toMatchObject({ code: 'PORTICO_E_CONFIG' });
  });
});

describe('OAuth2ClientFilter /login', () => {
  it('sends the user to the provider with state, nonce and an S256 challenge kept in the session', async () => {
    const filter = await filterOf();
    const { response, session } = await send(
      filter,
      'https://gw.example/openid/login?registration=A&goto=%2Fapp%2Fhome',
    );
    expect(response.status).toBe(302);
    const to = location(response);
    expect(to.origin).toBe('https://idp.invalid');
    expect(to.searchParams.get('redirect_uri')).toBe('https://gw.example/openid/callback');
    const record = session['oauth2:https://gw.example/openid'] as Record<string, any>;
    const pending = record.A.pending;
    expect(to.searchParams.get('state')).toBe(pending.state);
    expect(pending.state.length).toBeGreaterThanOrEqual(43);
    expect(to.searchParams.get('nonce')).toBe(pending.nonce);
    expect(to.searchParams.get('code_challenge')).toBe(
      createHash('sha256').update(pending.verifier).digest('base64url'),
    );
    expect(pending.goto).toBe('https://gw.example/app/home');
  });

  it('gives every login its own state', async () => {
    const filter = await filterOf();
    const first = await send(filter, 'https://gw.example/openid/login?registration=A');
    const second = await send(filter, 'https://gw.example/openid/login?registration=A');
    expect(location(first.response).searchParams.get('state')).not.toBe(
      location(second.response).searchParams.get('state'),
    );
  });

  it('resolves a relative clientEndpoint against each origin the requests come from', async () => {
    const filter = await filterOf();
    const redirectFor = async (uri: string) =>
      location((await send(filter, uri)).response).searchParams.get('redirect_uri');
    expect(await redirectFor('https://gw.example/openid/login?registration=A')).toBe(
      'https://gw.example/openid/callback',
    );
    expect(await redirectFor('https://other.example:8443/openid/login?registration=A')).toBe(
      'https://other.example:8443/openid/callback',
    );
    expect(await redirectFor('https://gw.example/openid/login?registration=A')).toBe(
      'https://gw.example/openid/callback',
    );
  });

  it('finds the registration by the e-mail domain of discovery', async () => {
    const filter = await filterOf({ registrations: ['B', 'A'], loginHandler: 'Choose' });
    const { response, session } = await send(
      filter,
      'https://gw.example/openid/login?discovery=alice%40example.com',
    );
    expect(location(response).searchParams.get('client_id')).toBe('A');
    expect(Object.keys(session['oauth2:https://gw.example/openid'] as object)).toEqual(['A']);
  });

  it('refuses an unknown registration or a login naming none among several', async () => {
    const filter = await filterOf({ registrations: ['A', 'B'], loginHandler: 'Choose' });
    const unknown = await send(filter, 'https://gw.example/openid/login?registration=C');
    expect(unknown.response.status).toBe(500);
    expect(unknown.openid.error.error).toBe('invalid_request');
    const none = await send(filter, 'https://gw.example/openid/login');
    expect(none.response.status).toBe(500);
  });

  it('refuses a login over plain HTTP with requireHttps (the default)', async () => {
    const filter = await filterOf();
    const { response, openid, session } = await send(filter, 'http://gw.example/openid/login?registration=A');
    expect(response.status).toBe(500);
    expect(openid.error).toMatchObject({ error: 'invalid_request' });
    expect(session).toEqual({});
    const lax = await filterOf({ requireHttps: false });
    expect((await send(lax, 'http://gw.example/openid/login?registration=A')).response.status).toBe(302);
  });
});

describe('OAuth2ClientFilter goto policy', () => {
  const refused = [
    'https://evil.example/',
    '//evil.example/x',
    '/\\evil.example/x',
    'javascript:alert(1)',
    'http://gw.example/app',
  ];
  it.each(refused)('refuses goto=%s to the failure handler', async (goto) => {
    const filter = await filterOf();
    const { response, openid, session } = await send(
      filter,
      `https://gw.example/openid/login?registration=A&goto=${encodeURIComponent(goto)}`,
    );
    expect(response.status).toBe(500);
    expect(openid.error.error).toBe('invalid_request');
    expect(openid.client_registration).toBeNull();
    expect(session).toEqual({});
  });

  it('accepts the gateway itself and the allowed origins', async () => {
    const filter = await filterOf({ allowedGotoOrigins: ['https://app.example:8443'] });
    for (const goto of ['https://gw.example/x', '/y', 'https://app.example:8443/z']) {
      const { response } = await send(
        filter,
        `https://gw.example/openid/login?goto=${encodeURIComponent(goto)}`,
      );
      expect(response.status).toBe(302);
    }
    const other = await send(
      filter,
      `https://gw.example/openid/login?goto=${encodeURIComponent('https://app.example/z')}`,
    );
    expect(other.response.status).toBe(500);
  });

  it('checks the goto of /logout the same way', async () => {
    const filter = await filterOf();
    const bad = await send(
      filter,
      `https://gw.example/openid/logout?goto=${encodeURIComponent('https://evil.example')}`,
    );
    expect(bad.response.status).toBe(500);
    const good = await send(filter, 'https://gw.example/openid/logout?goto=%2Fbye');
    expect(good.response.status).toBe(302);
    expect(good.response.headers.get('location')).toBe('https://gw.example/bye');
  });
});

describe('OAuth2ClientFilter /callback state checks', () => {
  async function started(filter: Filter) {
    const { response, session } = await send(
      filter,
      'https://gw.example/openid/login?registration=A&goto=%2Fapp',
    );
    return { state: location(response).searchParams.get('state') as string, session };
  }

  it('refuses a callback without state', async () => {
    const filter = await filterOf();
    const { session } = await started(filter);
    const { response, openid } = await send(filter, 'https://gw.example/openid/callback?code=abc', session);
    expect(response.status).toBe(500);
    expect(openid).toMatchObject({
      client_registration: 'A',
      error: { error: 'invalid_request', error_description: expect.stringContaining('no state') },
      client_endpoint: 'https://gw.example/openid',
    });
    expect(openid.exception).toBeInstanceOf(Error);
  });

  it('refuses a tampered state and keeps the login in flight', async () => {
    const filter = await filterOf();
    const { state, session } = await started(filter);
    const tampered = `${state.slice(0, -1)}${state.endsWith('A') ? 'B' : 'A'}`;
    const { response, openid } = await send(
      filter,
      `https://gw.example/openid/callback?code=abc&state=${tampered}`,
      session,
    );
    expect(response.status).toBe(500);
    expect(openid.error.error_description).toContain('matches no login');
    expect((session['oauth2:https://gw.example/openid'] as any).A.pending.state).toBe(state);
  });

  it('refuses a callback with no login in progress (another session)', async () => {
    const filter = await filterOf();
    const { state } = await started(filter);
    const { response, openid } = await send(
      filter,
      `https://gw.example/openid/callback?code=abc&state=${state}`,
      {},
    );
    expect(response.status).toBe(500);
    expect(openid.error.error_description).toContain('no login is in progress');
  });

  it("hands the provider's error parameters to the failure handler, and uses the state once", async () => {
    const filter = await filterOf();
    const { state, session } = await started(filter);
    const callback = `https://gw.example/openid/callback?error=access_denied&error_description=no%20way&error_uri=https%3A%2F%2Fidp.invalid%2Fe&state=${state}`;
    const { response, openid } = await send(filter, callback, session);
    expect(response.status).toBe(500);
    expect(openid.error).toEqual({
      error: 'access_denied',
      error_description: 'no way',
      error_uri: 'https://idp.invalid/e',
    });
    expect(openid.client_registration).toBe('A');
    const replay = await send(filter, callback, session);
    expect(replay.openid.error.error_description).toContain('no login is in progress');
  });

  it('refuses a callback that is not a GET', async () => {
    const filter = await filterOf();
    const { state, session } = await started(filter);
    const { response } = await send(
      filter,
      `https://gw.example/openid/callback?code=a&state=${state}`,
      session,
      'POST',
    );
    expect(response.status).toBe(500);
  });
});

describe('OAuth2ClientFilter without a login', () => {
  it('sends the user to the one provider, coming back to the page asked for', async () => {
    const filter = await filterOf();
    const { response, session, called } = await send(filter, 'https://gw.example/app/page?x=1');
    expect(called).toBe(false);
    expect(location(response).origin).toBe('https://idp.invalid');
    expect((session['oauth2:https://gw.example/openid'] as any).A.pending.goto).toBe(
      'https://gw.example/app/page?x=1',
    );
  });

  it('shows the loginHandler when there are several registrations', async () => {
    const filter = await filterOf({ registrations: ['A', 'B'], loginHandler: 'Choose' });
    const { response, called } = await send(filter, 'https://gw.example/app/page');
    expect(response.status).toBe(200);
    expect(await response.entity.text()).toBe('choose a provider');
    expect(called).toBe(false);
  });

  it('with requireLogin false, goes on with nothing at the target', async () => {
    const filter = await filterOf({ requireLogin: false });
    const { response, called, openid, session } = await send(filter, 'https://gw.example/app/page');
    expect(response.status).toBe(200);
    expect(called).toBe(true);
    expect(openid).toBeUndefined();
    expect(session).toEqual({});
  });

  it('logs out without a session: 200 and an empty page, or the default logout goto', async () => {
    const plain = await send(await filterOf(), 'https://gw.example/openid/logout');
    expect(plain.response.status).toBe(200);
    expect(await plain.response.entity.text()).toBe('');
    const withDefault = await send(
      await filterOf({ defaultLogoutGoto: '/bye' }),
      'https://gw.example/openid/logout',
    );
    expect(withDefault.response.headers.get('location')).toBe('https://gw.example/bye');
  });

  it('writes its failures where `target` says, ${exchange.openid} included', async () => {
    const filter = await filterOf({ target: '${exchange.openid}' });
    const { openid } = await send(filter, 'https://gw.example/openid/callback?code=x');
    expect(openid.error.error).toBe('invalid_request');
    const elsewhere = await filterOf({ target: '${attributes.login}' });
    const context = testContext({ session: {} });
    await elsewhere.filter(
      context,
      new Request({ uri: 'https://gw.example/openid/callback' }),
      recordingHandler().handler,
    );
    expect((context.attributes.login as any).error.error).toBe('invalid_request');
  });
});
